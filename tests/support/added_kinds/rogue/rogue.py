"""A kind that breaks the contract: it plans a delete but declares no ``delete_rank`` (where its deletes are
guarded), and a create without its desired form (``Action.form``): refused, naming both."""

from __future__ import annotations

from pathlib import Path

from cmssync.api.client import ConcreteClient
from cmssync.plan.actions import Action, Precondition
from cmssync.plan.kinds import KindFacts
from cmssync.state.records import State
from cmssync.sync.engine import ApplyContext
from cmssync.sync.kinds import ManagedKind


def plan_rogue(directory: Path, observed: None, state: State) -> list[Action]:
    return [
        Action(kind="rogue", key="x", op="delete", precondition=Precondition(remote_id="1")),
        Action(kind="rogue", key="y", op="create", precondition=Precondition(absent=True)),
    ]


async def observe_nothing(client: ConcreteClient, directory: Path, state: State) -> None:
    return None


def stale_never(action: Action, observed: None, state: State) -> str | None:
    return None


async def apply_nothing(action: Action, context: ApplyContext) -> str:
    raise AssertionError("a rogue kind's action is never applied")


KIND = ManagedKind(
    KindFacts("rogue", "rogues", keys=lambda content: ()),
    apply=apply_nothing,
    observe=observe_nothing,
    plan=plan_rogue,
    stale=stale_never,
)
