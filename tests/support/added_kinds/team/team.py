"""A toy kind over site groups: ``teams.txt`` lists teams, one a line; each is the site group ``Team <line>``.
Created, never deleted (Concrete's API deletes no group), not pulled."""

from __future__ import annotations

from pathlib import Path

from cmssync.api.client import ConcreteClient
from cmssync.plan.actions import Action, Precondition
from cmssync.plan.kinds import KindFacts
from cmssync.plan.scope_model import Scope
from cmssync.state.records import KindRecord, State
from cmssync.sync.engine import ApplyContext
from cmssync.sync.kinds import ManagedKind

PREFIX = "Team "
LIST = "teams.txt"


def listed_teams(directory: Path) -> list[str]:
    listed = directory / LIST
    lines = listed.read_text().splitlines() if listed.exists() else []
    return [PREFIX + line.strip() for line in lines if line.strip()]


def team_scope(name: str) -> Scope | None:
    """A change of the list plans every team (the file says nothing of which line changed)."""
    return Scope(kinds=frozenset({"team:*"})) if name == LIST else None


async def observe_teams(client: ConcreteClient, directory: Path, state: State) -> dict[str, int]:
    return {group.name: group.id async for group in client.iter_groups() if group.name.startswith(PREFIX)}


def plan_teams(directory: Path, observed: dict[str, int], state: State) -> list[Action]:
    """A listed team the site lacks is created."""
    return [
        Action(kind="team", key=name, op="create", precondition=Precondition(absent=True), form={"name": name})
        for name in sorted(set(listed_teams(directory)) - set(observed))
    ]


def stale_team(action: Action, observed: dict[str, int], state: State) -> str | None:
    if action.precondition.absent and action.key in observed:
        return f"exists on the site now (group id {observed[action.key]}), and the plan was made to create it"
    return None


async def apply_team(action: Action, context: ApplyContext) -> str:
    assert action.form is not None  # the registry refuses a create without it
    group = await context.client.create_group(str(action.form["name"]))
    context.state.record("team", action.key, KindRecord(id=group.id))
    context.save()
    return f"created (id {group.id})"


TEAM = KindFacts("team", "teams", binds="group", keys=lambda content: listed_teams(content.root), scope=team_scope)
KIND = ManagedKind(TEAM, apply=apply_team, observe=observe_teams, plan=plan_teams, stale=stale_team)
