"""A kind registered from outside (``cmssync.sync.kinds.register``) declares its pure facts as the built-in kinds do
(a ``KindFacts``: its content's keys and its scope rule) and is observed, planned and applied like them, against the
sandbox, with no other module edited (issue 24: one vocabulary of kinds): it keeps its records in the state,
``--target team:…`` plans it alone, a file-change run of its file plans it, and a saved plan of it is refused once
its precondition no longer holds. A registered kind's deletes go through the prune guards with the built-in
kinds' (kept with pruning off, blocked by ``max_fraction``, applied with ``--allow-mass-delete``): shown with a
second toy kind, ``member`` (a site user per line of ``members.txt``), as Concrete's API deletes no group."""

from __future__ import annotations

import shutil
from collections.abc import Iterator
from pathlib import Path

import pytest

from cmssync.api.client import ConcreteClient
from cmssync.daemon.runner import describe_scope
from cmssync.daemon.watch import matters
from cmssync.errors import PlanError
from cmssync.plan.actions import Action, BlockedDeletes, KeptObjects, Precondition
from cmssync.plan.kinds import DELETED, FACTS, KIND_ORDER, KindFacts, in_scope, object_ids
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


MEMBERS = "members.txt"


def listed_members(directory: Path) -> list[str]:
    listed = directory / MEMBERS
    lines = listed.read_text().splitlines() if listed.exists() else []
    return ["member_" + line.strip() for line in lines if line.strip()]


MEMBER = KindFacts("member", "members", delete_rank=3, keys=lambda content: listed_members(content.root))


async def observe_members(client: ConcreteClient, directory: Path, state: State) -> dict[str, int]:
    return {user.username: user.id async for user in client.iter_users() if user.username.startswith("member_")}


def plan_members(directory: Path, observed: dict[str, int], state: State) -> list[Action]:
    """A listed member the site lacks is created; a recorded one no longer listed is deleted (the planner guards
    the deletes)."""
    listed = set(listed_members(directory))
    recorded = state.records_of("member")
    return [
        *(
            Action(kind="member", key=name, op="create", precondition=Precondition(absent=True))
            for name in sorted(listed - set(observed))
        ),
        *(
            Action(kind="member", key=name, op="delete", precondition=Precondition(remote_id=str(record.id)))
            for name, record in sorted(recorded.items())
            if name not in listed and observed.get(name) == record.id
        ),
    ]


def stale_member(action: Action, observed: dict[str, int], state: State) -> str | None:
    if action.precondition.absent and action.key in observed:
        return f"exists on the site now (user id {observed[action.key]})"
    if action.op == "delete" and str(observed.get(action.key)) != action.precondition.remote_id:
        return "is not the user the plan was made to delete"
    return None


async def apply_member(action: Action, context: ApplyContext) -> str:
    if action.op == "delete":
        user_id = int(action.precondition.remote_id or 0)
        await context.client.delete_user(user_id)
        context.state.forget("member", action.key)
        context.save()
        return f"deleted (id {user_id})"
    user = await context.client.create_user(
        username=action.key, email=f"{action.key}@example.com", password="pw-1234567"
    )
    context.state.record("member", action.key, KindRecord(id=user.id))
    context.save()
    return f"created (id {user.id})"


@pytest.fixture
def members() -> Iterator[None]:
    register(ManagedKind(MEMBER, apply=apply_member, observe=observe_members, plan=plan_members, stale=stale_member))
    assert MEMBER in DELETED  # guarded after the built-in kinds (pages, files, users)
    yield
    unregister("member")
    assert MEMBER not in DELETED


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


async def test_a_registered_kinds_deletes_are_kept_without_pruning(example: Site, raw: RawSite, members: None) -> None:
    (example.root / MEMBERS).write_text("ann\nbob\n")
    assert not (await example.apply()).failed, example.last_output
    (example.root / MEMBERS).write_text("ann\n")
    plan = await example.plan(prune=False)
    assert [a.id for a in plan.actions if a.kind == "member"] == []
    assert plan.kept == (KeptObjects(kind="member", keys=("member_bob",)),)
    assert "1 managed member(s) no longer in the content, kept (use --prune to delete): member_bob" in (
        plan.kept[0].describe()
    )
    assert not plan.is_empty
    pruned = await example.plan(prune=True)  # one of two: no guard holds it
    assert [(a.id, a.op) for a in pruned.actions if a.kind == "member"] == [("member:member_bob", "delete")]
    assert pruned.actions[-1].kind == "member"  # deletes come last, in delete order
    targeted = await example.plan(prune=True, targets=("member:*",))  # read whole: its delete needs a complete one
    assert [(a.id, a.op) for a in targeted.actions] == [("member:member_bob", "delete")]
    (example.root / MEMBERS).write_text("")  # and the rest of the content names nothing either
    shutil.rmtree(example.root / "pages")
    shutil.rmtree(example.root / "files")
    (example.root / "users.yaml").unlink()
    (example.root / "groups.yaml").unlink()
    empty = await example.plan(prune=True, allow_mass_delete=True)
    assert [a for a in empty.actions if a.op == "delete"] == []
    assert [(b.kind, b.keys, b.guard) for b in empty.blocked if b.kind == "member"] == [
        ("member", ("member_ann", "member_bob"), "empty_content")
    ]


async def test_a_registered_kinds_mass_delete_is_blocked_unless_allowed(
    example: Site, raw: RawSite, members: None
) -> None:
    (example.root / MEMBERS).write_text("ann\nbob\ncid\n")
    assert not (await example.apply()).failed, example.last_output
    (example.root / MEMBERS).write_text("ann\n")
    plan = await example.plan(prune=True)
    assert [a for a in plan.actions if a.kind == "member"] == []
    assert plan.blocked == (
        BlockedDeletes(
            kind="member", keys=("member_bob", "member_cid"), managed=3, guard="max_fraction", limit="max_fraction=0.25"
        ),
    )
    report = await example.apply(prune=True, allow_mass_delete=True)
    assert not report.failed, example.last_output
    assert "- member member_bob: delete" in example.last_output
    users = {u["username"] for u in raw.all("/users")}
    assert "member_ann" in users
    assert not users & {"member_bob", "member_cid"}
    assert example.workspace().load_state().records_of("member").keys() == {"member_ann"}
    again = await example.plan(prune=True)
    assert [a for a in again.actions if a.kind == "member"] == []
    assert again.blocked == ()


async def test_a_registered_kind_without_a_delete_rank_plans_no_delete(example: Site) -> None:
    def plan_rogue(directory: Path, observed: None, state: State) -> list[Action]:
        return [Action(kind="rogue", key="x", op="delete", precondition=Precondition(remote_id="1"))]

    async def observe_nothing(client: ConcreteClient, directory: Path, state: State) -> None:
        return None

    rogue = KindFacts("rogue", "rogues", keys=lambda content: ())
    register(ManagedKind(rogue, apply=apply_team, observe=observe_nothing, plan=plan_rogue, stale=stale_team))
    try:
        with pytest.raises(ValueError, match="'rogue' plans deletes but declares no delete_rank"):
            await example.plan(prune=True)
    finally:
        unregister("rogue")
