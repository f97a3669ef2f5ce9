"""A toy kind, one module and nothing else: ``toys.txt`` lists toys, one a line; each is the site user
``toy_<line>``. It is validated (a line is lowercase letters and digits), planned, applied (created, deleted with
pruning: ``delete_rank``), pulled (``pull --kind toy`` takes in the site's toy users), targeted, excluded, and its
file's changes scoped, as a built-in kind is."""

from __future__ import annotations

import re
from pathlib import Path

from cmssync.api.client import ConcreteClient
from cmssync.content.site import SiteContent
from cmssync.errors import Problem
from cmssync.plan.actions import Action, Precondition
from cmssync.plan.kinds import KindFacts
from cmssync.plan.scope_model import Scope
from cmssync.state.records import KindRecord, State
from cmssync.sync.engine import ApplyContext
from cmssync.sync.kinds import ManagedKind
from cmssync.sync.pull_writes import Staged
from cmssync.sync.pulling import PullRun

LIST = "toys.txt"
PREFIX = "toy_"
NAME = re.compile(r"[a-z0-9]+")


def _lines(directory: Path) -> list[str]:
    listed = directory / LIST
    return [line.strip() for line in listed.read_text().splitlines()] if listed.exists() else []


def listed_toys(directory: Path) -> list[str]:
    return [PREFIX + line for line in _lines(directory) if line]


def validate_toys(content: SiteContent) -> list[Problem]:
    return [
        Problem(LIST, number, 1, f"toy {line!r}: a toy's name is lowercase letters and digits")
        for number, line in enumerate(_lines(content.root), start=1)
        if line and not NAME.fullmatch(line)
    ]


async def observe_toys(client: ConcreteClient, directory: Path, state: State) -> dict[str, int]:
    return {user.username: user.id async for user in client.iter_users() if user.username.startswith(PREFIX)}


def plan_toys(directory: Path, observed: dict[str, int], state: State) -> list[Action]:
    """A listed toy the site lacks is created; a recorded one no longer listed is deleted (the planner guards the
    deletes and keeps them without pruning)."""
    listed = set(listed_toys(directory))
    return [
        *(
            Action(kind="toy", key=name, op="create", precondition=Precondition(absent=True))
            for name in sorted(listed - set(observed))
        ),
        *(
            Action(kind="toy", key=name, op="delete", precondition=Precondition(remote_id=str(record.id)))
            for name, record in sorted(state.records_of("toy").items())
            if name not in listed and observed.get(name) == record.id
        ),
    ]


def stale_toy(action: Action, observed: dict[str, int], state: State) -> str | None:
    if action.precondition.absent and action.key in observed:
        return f"exists on the site now (user id {observed[action.key]})"
    if action.op == "delete" and str(observed.get(action.key)) != action.precondition.remote_id:
        return "is not the user the plan was made to delete"
    return None


async def apply_toy(action: Action, context: ApplyContext) -> str:
    if action.op == "delete":
        user_id = int(action.precondition.remote_id or 0)
        await context.client.delete_user(user_id)
        context.state.forget("toy", action.key)
        context.save()
        return f"deleted (id {user_id})"
    user = await context.client.create_user(
        username=action.key, email=f"{action.key}@example.com", password="pw-1234567"
    )
    context.state.record("toy", action.key, KindRecord(id=user.id))
    context.save()
    return f"created (id {user.id})"


async def pull_toys(run: PullRun) -> None:
    """``toys.txt`` gets the site's toys the file lists, and the others when taken in (``--kind toy``, ``--all``);
    the others are listed as not taken in."""
    if run.only:
        return
    await run.turn("toy")
    others = run.bound_by_others("toy")  # a user the user kind manages is not a toy
    site = {
        name: id_
        for name, id_ in (await observe_toys(run.client, run.root, run.state)).items()
        if str(id_) not in others
    }
    listed = [PREFIX + line for line in _lines(run.root) if line]
    others = sorted(set(site) - set(listed))
    if not run.scope.takes("toy"):
        run.result.not_taken.setdefault("toy", []).extend(others)
        others = []
    names = [name for name in listed if name in site] + others
    if not names:
        return
    target = run.root / LIST
    text = "".join(name.removeprefix(PREFIX) + "\n" for name in names)
    run.result.staged.append(Staged("toy", LIST, target, text=text))
    run.result.records["toy"] = {name: KindRecord(id=site[name]) for name in names}


def toy_scope(name: str) -> Scope | None:
    return Scope(kinds=frozenset({"toy:*"})) if name == LIST else None


TOY = KindFacts(
    "toy",
    "toys",
    binds="user",
    delete_rank=3,
    pull_rank=5,
    keys=lambda content: listed_toys(content.root),
    scope=toy_scope,
)
KIND = ManagedKind(
    TOY,
    apply=apply_toy,
    observe=observe_toys,
    plan=plan_toys,
    stale=stale_toy,
    pull=pull_toys,
    validate=validate_toys,
)
