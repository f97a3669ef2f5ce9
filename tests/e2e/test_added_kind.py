"""A kind added as one module of the kinds package (``cmssync.sync.kinds``; here put on its path by
``tests.support.added_kinds.install``) declares its pure facts as the built-in kinds do (a ``KindFacts``: its
content's keys and its scope rule) and is validated, observed, planned, applied and pulled like them, against the
sandbox, with no other module edited (issue 33: every kind through one registry): it keeps its records in the
state, ``--target team:…`` plans it alone, a file-change run of its file plans it, and a saved plan of it is refused
once its precondition no longer holds. Its deletes go through the prune guards with the built-in kinds' (kept with
pruning off, blocked by ``max_fraction``, applied with ``--allow-mass-delete``): shown with the toy kind ``toy`` (a
site user per line of ``toys.txt``), as Concrete's API deletes no group; ``pull --kind toy`` takes the site's toys
in."""

from __future__ import annotations

import io
import shutil
from pathlib import Path

import pytest

from cmssync.commands.pull import run_pull
from cmssync.commands.validate import check
from cmssync.daemon.runner import describe_scope
from cmssync.daemon.watch import matters
from cmssync.errors import ConfigError, PlanError, StateError
from cmssync.plan.actions import BlockedDeletes, KeptObjects
from cmssync.plan.scope import scope_for_paths
from cmssync.plan.scope_model import Scope
from cmssync.state.records import KindRecord
from cmssync.sync.kinds import discover
from cmssync.sync.plan_files import write_plan_file
from tests.support.added_kinds import install
from tests.support.rawsite import RawSite
from tests.support.sites import Site

LIST = "teams.txt"
TOYS = "toys.txt"


@pytest.fixture
def teams(monkeypatch: pytest.MonkeyPatch) -> None:
    install(monkeypatch, "team")
    assert discover().names[-1] == "team"  # found by listing the package, after the built-in kinds


@pytest.fixture
def toys(monkeypatch: pytest.MonkeyPatch) -> None:
    install(monkeypatch, "toy")
    kinds = discover()
    assert [kind.name for kind in kinds.table.deleted] == ["page", "file", "user", "toy"]  # guarded after them
    assert kinds.table.pulled[-1] == "toy"


def test_a_kind_module_off_the_path_is_not_managed() -> None:
    kinds = discover()  # another test's kinds never leak into this run
    assert "team" not in kinds
    assert "toy" not in kinds


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
    ids = workspace.kinds.table.object_ids(workspace.content, workspace.load_state())  # its facts name its objects
    assert {"team:Team Translators", "team:Team Reviewers", "page:/"} <= ids
    plan = await example.plan(targets=("team:Team Translators",))
    assert [a.id for a in plan.actions] == ["team:Team Translators"]  # no page, file, user or group of the example
    excluded = await example.plan(excludes=("team:Team Translators",))
    assert [a.id for a in excluded.actions if a.kind == "team"] == ["team:Team Reviewers"]
    with pytest.raises(PlanError, match="'team:Team Nobody' matches no team"):
        await example.plan(targets=("team:Team Nobody",))


async def test_a_change_to_a_registered_kinds_file_plans_it_alone(example: Site, teams: None) -> None:
    (example.root / LIST).write_text("Translators\n")
    kinds = discover().table
    assert matters(LIST, kinds)  # the daemon's watcher hands a change of it on
    scope = scope_for_paths([LIST], kinds)
    assert scope == Scope(kinds=frozenset({"team:*"}))
    assert describe_scope(scope) == {"kinds": ["team:*"]}
    assert kinds.in_scope(scope, "team:Team Translators")
    assert not kinds.in_scope(scope, "page:/")
    plan = await example.plan(scope=scope)
    assert [a.id for a in plan.actions] == ["team:Team Translators"]
    assert [a.kind for a in (await example.plan(scope=scope_for_paths(["pages/about.yaml"], kinds))).actions] != [
        "team"
    ]


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


async def test_a_registered_kinds_deletes_are_kept_without_pruning(example: Site, raw: RawSite, toys: None) -> None:
    (example.root / TOYS).write_text("ann\nbob\n")
    assert not (await example.apply()).failed, example.last_output
    (example.root / TOYS).write_text("ann\n")
    plan = await example.plan(prune=False)
    assert [a.id for a in plan.actions if a.kind == "toy"] == []
    assert plan.kept == (KeptObjects(kind="toy", keys=("toy_bob",)),)
    assert "1 managed toy(s) no longer in the content, kept (use --prune to delete): toy_bob" in (
        plan.kept[0].describe()
    )
    assert not plan.is_empty
    pruned = await example.plan(prune=True)  # one of two: no guard holds it
    assert [(a.id, a.op) for a in pruned.actions if a.kind == "toy"] == [("toy:toy_bob", "delete")]
    assert pruned.actions[-1].kind == "toy"  # deletes come last, in delete order
    targeted = await example.plan(prune=True, targets=("toy:*",))  # read whole: its delete needs a complete one
    assert [(a.id, a.op) for a in targeted.actions] == [("toy:toy_bob", "delete")]
    (example.root / TOYS).write_text("")  # and the rest of the content names nothing either
    shutil.rmtree(example.root / "pages")
    shutil.rmtree(example.root / "files")
    (example.root / "users.yaml").unlink()
    (example.root / "groups.yaml").unlink()
    empty = await example.plan(prune=True, allow_mass_delete=True)
    assert [a for a in empty.actions if a.op == "delete"] == []
    assert [(b.kind, b.keys, b.guard) for b in empty.blocked if b.kind == "toy"] == [
        ("toy", ("toy_ann", "toy_bob"), "empty_content")
    ]


async def test_a_registered_kinds_mass_delete_is_blocked_unless_allowed(
    example: Site, raw: RawSite, toys: None
) -> None:
    (example.root / TOYS).write_text("ann\nbob\ncid\n")
    assert not (await example.apply()).failed, example.last_output
    (example.root / TOYS).write_text("ann\n")
    plan = await example.plan(prune=True)
    assert [a for a in plan.actions if a.kind == "toy"] == []
    assert plan.blocked == (
        BlockedDeletes(
            kind="toy", keys=("toy_bob", "toy_cid"), managed=3, guard="max_fraction", limit="max_fraction=0.25"
        ),
    )
    report = await example.apply(prune=True, allow_mass_delete=True)
    assert not report.failed, example.last_output
    assert "- toy toy_bob: delete" in example.last_output
    users = {u["username"] for u in raw.all("/users")}
    assert "toy_ann" in users
    assert not users & {"toy_bob", "toy_cid"}
    assert example.workspace().load_state().records_of("toy").keys() == {"toy_ann"}
    again = await example.plan(prune=True)
    assert [a for a in again.actions if a.kind == "toy"] == []
    assert again.blocked == ()


async def test_a_registered_kind_that_breaks_the_contract_is_refused(
    example: Site, monkeypatch: pytest.MonkeyPatch
) -> None:
    install(monkeypatch, "rogue")
    broken = (
        r"'rogue' plans deletes but declares no delete_rank \(where they are guarded\); plans without the desired "
        r"form \(Action.form: what apply writes\): create of y"
    )
    with pytest.raises(ValueError, match=broken):
        await example.plan(prune=True)


def test_a_kinds_content_is_validated_by_its_own_check(example: Site, toys: None) -> None:
    (example.root / TOYS).write_text("ann\nBad\ncid not-an-email\n")
    result = check(example.root, secrets=False)
    assert [str(problem) for problem in result.problems] == [
        "toys.txt:2:1: toy 'Bad': a toy's name is lowercase letters and digits",
        "toys.txt:3:5: toy 'cid': after the name, one email address",
    ]


async def test_pull_takes_a_kinds_objects_in_with_kind(example: Site, raw: RawSite, toys: None) -> None:
    async with example.workspace().client() as client:
        ann = await client.create_user(username="toy_ann", email="toy_ann@example.com", password="pw-1234567")
        await client.create_user(username="toy_bob", email="bob@toys.example", password="pw-1234567")
    assert not (await example.apply()).failed, example.last_output  # the example applied, no toys in its content
    out = io.StringIO()
    await run_pull(example.root, out=out, overrides=example.overrides())
    assert "2 toys: toy_ann, toy_bob" in out.getvalue()  # not taken in without --kind
    assert not (example.root / TOYS).exists()
    out = io.StringIO()
    await run_pull(example.root, out=out, overrides=example.overrides(), kinds=("toy",))
    assert (example.root / TOYS).read_text() == "ann\nbob bob@toys.example\n"  # the email when not the default
    assert "toy files (2 objects): 1 written new" in out.getvalue()
    records = example.workspace().load_state().records_of("toy")
    assert records["toy_ann"] == KindRecord(id=ann.id)
    assert [a for a in (await example.plan()).actions if a.kind == "toy"] == []  # pulled: nothing to do
    (example.root / TOYS).write_text("ann\n")
    pruned = await example.plan(prune=True)  # the pulled records are managed: the one dropped is deleted
    assert [(a.id, a.op) for a in pruned.actions if a.kind == "toy"] == [("toy:toy_bob", "delete")]


async def test_pull_refuses_a_kind_it_does_not_take_in(example: Site) -> None:
    with pytest.raises(ConfigError, match="pull --kind toy: not a kind pull takes in"):
        await run_pull(example.root, out=io.StringIO(), overrides=example.overrides(), kinds=("toy",))


async def test_a_site_object_is_bound_by_one_kind_only(example: Site, teams: None) -> None:
    """A kind added over groups and the group kind: ``pull --all`` takes a team's group in as the team's only, and a
    state binding one site group under both kinds is refused (issue 33: one binding per site object across kinds)."""
    (example.root / LIST).write_text("Translators\n")
    assert not (await example.apply()).failed, example.last_output
    await run_pull(example.root, out=io.StringIO(), overrides=example.overrides(), take_all=True)
    assert "Team Translators" not in (example.root / "groups.yaml").read_text()
    state = example.workspace().load_state()  # refused if one site group were bound twice
    team_id = state.records_of("team")["Team Translators"].id
    assert all(record.id != team_id for record in state.records_of("group").values())
    state.record("group", "Translators", KindRecord(id=int(str(team_id))))  # as the pull of an earlier version did
    example.workspace().store.save(state)
    with pytest.raises(StateError, match=r"binds group \d+ of the site to 2 objects of 2 kinds, group Translators and"):
        example.workspace().load_state()
