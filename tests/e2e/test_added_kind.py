"""A kind registered from outside (``cmssync.sync.kinds.register``) declares its pure facts as the built-in kinds do
(a ``KindFacts``: its content's keys and its scope rule) and is observed, planned and applied like them, against the
sandbox, with no other module edited (issue 24: one vocabulary of kinds): it keeps its records in the state,
``--target team:…`` plans it alone, a file-change run of its file plans it, and a saved plan of it is refused once
its precondition no longer holds."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from cmssync.api.client import ConcreteClient
from cmssync.daemon.runner import describe_scope
from cmssync.daemon.watch import matters
from cmssync.errors import PlanError
from cmssync.plan.actions import Action, Precondition
from cmssync.plan.kinds import FACTS, KIND_ORDER, KindFacts, in_scope, object_ids
from cmssync.plan.scope import scope_for_paths
from cmssync.plan.scope_model import Scope
from cmssync.state.records import KindRecord, State
from cmssync.sync.engine import ApplyContext
from cmssync.sync.kinds import ManagedKind, register, unregister
from cmssync.sync.plan_files import write_plan_file
from tests.support.rawsite import RawSite
from tests.support.sites import Site

PREFIX = "Team "
LIST = "teams.txt"


def listed_teams(directory: Path) -> list[str]:
    listed = directory / LIST
    lines = listed.read_text().splitlines() if listed.exists() else []
    return [PREFIX + line.strip() for line in lines if line.strip()]


def team_scope(name: str) -> Scope | None:
    """A change of the list plans every team (the file says nothing of which line changed)."""
    return Scope(kinds=frozenset({"team:*"})) if name == LIST else None


TEAM = KindFacts("team", "teams", keys=lambda content: listed_teams(content.root), scope=team_scope)


async def observe_teams(client: ConcreteClient, directory: Path, state: State) -> dict[str, int]:
    return {group.name: group.id async for group in client.iter_groups() if group.name.startswith(PREFIX)}


def plan_teams(directory: Path, observed: dict[str, int], state: State) -> list[Action]:
    """A listed team the site lacks is created; one the state records under another id was made again on the site
    (no action, the record is the kind's business when it applies)."""
    return [
        Action(kind="team", key=name, op="create", precondition=Precondition(absent=True))
        for name in sorted(set(listed_teams(directory)) - set(observed))
    ]


def stale_team(action: Action, observed: dict[str, int], state: State) -> str | None:
    if action.precondition.absent and action.key in observed:
        return f"exists on the site now (group id {observed[action.key]}), and the plan was made to create it"
    return None


async def apply_team(action: Action, context: ApplyContext) -> str:
    group = await context.client.create_group(action.key)
    context.state.record("team", action.key, KindRecord(id=group.id))
    context.save()
    return f"created (id {group.id})"


@pytest.fixture
def teams() -> Iterator[None]:
    register(ManagedKind(TEAM, apply=apply_team, observe=observe_teams, plan=plan_teams, stale=stale_team))
    assert FACTS["team"] is TEAM  # in the one table of kinds facts, after the built-in kinds
    assert KIND_ORDER[-1] == "team"
    yield
    unregister("team")
    assert "team" not in KIND_ORDER
    assert "team" not in FACTS


async def test_a_registered_kind_is_planned_applied_and_recorded(example: Site, raw: RawSite, teams: None) -> None:
    (example.root / LIST).write_text("Translators\nReviewers of the week\n")
    plan = await example.plan()
    assert [(a.kind, a.key, a.op) for a in plan.actions if a.kind == "team"] == [
        ("team", "Team Reviewers of the week", "create"),
        ("team", "Team Translators", "create"),
    ]
    assert plan.actions[-1].kind == "team"  # after the built-in kinds
    report = await example.apply()
    assert not report.failed, example.last_output
    assert "+ team Team Translators: create" in example.last_output
    site = {g["name"]: g["id"] for g in raw.all("/groups")}
    assert {"Team Translators", "Team Reviewers of the week"} <= set(site)
    recorded = example.workspace().load_state().records_of("team")
    assert recorded == {name: KindRecord(id=site[name]) for name in ("Team Translators", "Team Reviewers of the week")}
    again = await example.plan()
    assert [a for a in again.actions if a.kind == "team"] == []


async def test_a_target_of_a_registered_kind_plans_it_alone(example: Site, teams: None) -> None:
    (example.root / LIST).write_text("Translators\nReviewers\n")
    workspace = example.workspace()
    ids = object_ids(workspace.content, workspace.load_state())  # its facts name its content's objects
    assert {"team:Team Translators", "team:Team Reviewers", "page:/"} <= ids
    plan = await example.plan(targets=("team:Team Translators",))
    assert [a.id for a in plan.actions] == ["team:Team Translators"]  # no page, file, user or group of the example
    excluded = await example.plan(excludes=("team:Team Translators",))
    assert [a.id for a in excluded.actions if a.kind == "team"] == ["team:Team Reviewers"]
    with pytest.raises(PlanError, match="'team:Team Nobody' matches no team"):
        await example.plan(targets=("team:Team Nobody",))


async def test_a_change_to_a_registered_kinds_file_plans_it_alone(example: Site, teams: None) -> None:
    (example.root / LIST).write_text("Translators\n")
    assert matters(LIST)  # the daemon's watcher hands a change of it on
    scope = scope_for_paths([LIST])
    assert scope == Scope(kinds=frozenset({"team:*"}))
    assert describe_scope(scope) == {"kinds": ["team:*"]}
    assert in_scope(scope, "team:Team Translators")
    assert not in_scope(scope, "page:/")
    plan = await example.plan(scope=scope)
    assert [a.id for a in plan.actions] == ["team:Team Translators"]
    assert [a.kind for a in (await example.plan(scope=scope_for_paths(["pages/about.yaml"]))).actions] != ["team"]


async def test_a_saved_plan_of_a_registered_kind_is_refused_once_stale(
    example: Site, raw: RawSite, tmp_path: Path, teams: None
) -> None:
    (example.root / LIST).write_text("Translators\n")
    plan_file = tmp_path / "plan.json"
    write_plan_file(await example.plan(targets=("team:*",)), plan_file)
    async with example.workspace().client() as client:
        await client.create_group("Team Translators")  # someone made it meanwhile
    with pytest.raises(PlanError, match="stale: team Team Translators exists on the site now"):
        await example.apply(plan_file)
    assert [g["name"] for g in raw.all("/groups")].count("Team Translators") == 1
