"""A kind registered from outside (``cmssync.sync.kinds.register``) is observed, planned and applied like the
built-in ones, against the sandbox, with no other module edited (issue 24: one vocabulary of kinds)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from cmssync.api.client import ConcreteClient
from cmssync.plan.actions import KIND_ORDER, Action, Precondition
from cmssync.state.records import State
from cmssync.sync.engine import ApplyContext
from cmssync.sync.kinds import ManagedKind, register, unregister
from tests.support.rawsite import RawSite
from tests.support.sites import Site

PREFIX = "Team "


async def observe_teams(client: ConcreteClient, directory: Path, state: State) -> set[str]:
    return {group.name async for group in client.iter_groups() if group.name.startswith(PREFIX)}


def plan_teams(directory: Path, observed: set[str], state: State) -> list[Action]:
    listed = directory / "teams.txt"
    wanted = (
        {PREFIX + line.strip() for line in listed.read_text().splitlines() if line.strip()}
        if listed.exists()
        else set()
    )
    return [
        Action(kind="team", key=name, op="create", precondition=Precondition(absent=True))
        for name in sorted(wanted - observed)
    ]


async def apply_team(action: Action, context: ApplyContext) -> str:
    group = await context.client.create_group(action.key)
    return f"created (id {group.id})"


@pytest.fixture
def teams() -> Iterator[None]:
    register(ManagedKind("team", apply=apply_team, observe=observe_teams, plan=plan_teams))
    yield
    unregister("team")
    assert "team" not in KIND_ORDER


async def test_a_registered_kind_is_planned_and_applied(example: Site, raw: RawSite, teams: None) -> None:
    (example.root / "teams.txt").write_text("Translators\nReviewers of the week\n")
    plan = await example.plan()
    assert [(a.kind, a.key, a.op) for a in plan.actions if a.kind == "team"] == [
        ("team", "Team Reviewers of the week", "create"),
        ("team", "Team Translators", "create"),
    ]
    assert plan.actions[-1].kind == "team"  # after the built-in kinds
    report = await example.apply()
    assert not report.failed, example.last_output
    assert "+ team Team Translators: create" in example.last_output
    assert {"Team Translators", "Team Reviewers of the week"} <= {g["name"] for g in raw.all("/groups")}
    again = await example.plan()
    assert [a for a in again.actions if a.kind == "team"] == []
