"""``cmssync.plan.kinds``: the built-in kinds' facts, listed once, and what reads them (ids, scopes, bindings)."""

from __future__ import annotations

from pathlib import Path

import pytest

from cmssync.plan.builtin_kinds import BUILT_IN_KINDS
from cmssync.plan.kinds import KindFacts, KindTable
from cmssync.plan.scope import scope_for_paths
from cmssync.plan.scope_model import Scope
from cmssync.state.records import FileRecord, KindRecord, PageRecord, State, UserRecord
from cmssync.sync.kinds import discover
from tests.sync.sitebuilder import write_content


def test_the_kinds_are_listed_once_and_each_has_its_io() -> None:
    names = ["group", "file", "page", "stack", "user"]
    assert list(BUILT_IN_KINDS.names) == names
    assert discover().names == BUILT_IN_KINDS.names  # each kind module found in the package, in plan order
    assert [kind.name for kind in BUILT_IN_KINDS.deleted] == ["page", "file", "user"]  # pages first
    assert BUILT_IN_KINDS.pulled == ("page", "stack", "file", "user", "group")


def test_object_ids_name_a_stack_by_its_handle(tmp_path: Path) -> None:
    content = write_content(
        tmp_path, {"pages/index.yaml": "name: Home\n", "stacks/footer.yaml": "id: 7\nname: Footer\n"}
    )
    state = State(
        files={"a.pdf": FileRecord(id="f1", hash="sha256:" + "0" * 64, url="/a.pdf")}, users={"jane": UserRecord(id=4)}
    )
    assert BUILT_IN_KINDS.object_ids(content, state) == {"page:/", "stack:footer", "file:a.pdf", "user:jane"}


def test_each_kind_scopes_its_own_objects() -> None:
    kinds = BUILT_IN_KINDS
    scope = kinds.scope_of(["stack:footer", "page:/about", "file:a.pdf", "user:jane", "group:Editors", "team:x"])
    assert scope == Scope(
        pages=frozenset({"/!stacks/footer", "/about"}),
        files=frozenset({"a.pdf"}),
        users=frozenset({"jane"}),
        kinds=frozenset({"group:Editors"}),
    )
    assert kinds.in_scope(scope, "stack:footer")
    assert not kinds.in_scope(scope, "stack:sidebar")
    assert kinds.in_scope(Scope(all_users=True), "user:anyone")
    assert not kinds.in_scope(scope, "team:x")  # not a managed kind's


def test_a_changed_file_is_scoped_by_its_kinds_rule() -> None:
    assert scope_for_paths(["stacks/footer.yaml", "files/a.pdf.yaml", "groups.yaml"]) == Scope(
        pages=frozenset({"/!stacks/footer"}), files=frozenset({"a.pdf"}), kinds=frozenset({"group:*"})
    )
    assert scope_for_paths(["stacks/a/b/footer.yaml"]) is None  # not a valid stack file: a full run says so


def test_a_site_object_bound_twice_is_said_per_kind() -> None:
    state = State(pages={"/a": PageRecord(id=7), "/b": PageRecord(id=7)}, users={"x": UserRecord(id=1)})
    [problem] = BUILT_IN_KINDS.shared_bindings(state)
    assert problem.startswith("the state binds page 7 of the site to 2 pages, /a and /b: one site object")


def test_an_added_kind_is_read_from_the_same_table(tmp_path: Path) -> None:
    (tmp_path / "teams.txt").write_text("a\nb\n")
    team = KindFacts(
        "team",
        "teams",
        keys=lambda content: (content.root / "teams.txt").read_text().split(),
        scope=lambda name: Scope(kinds=frozenset({"team:*"})) if name == "teams.txt" else None,
    )
    content = write_content(tmp_path, {"pages/index.yaml": "name: Home\n"})
    state = State(kinds={"team": {"c": KindRecord(id=3)}})
    kinds = BUILT_IN_KINDS.with_kinds(team)
    assert kinds.names[-1] == "team"
    assert kinds.object_ids(content, state) == {"page:/", "team:a", "team:b", "team:c"}
    assert scope_for_paths(["teams.txt", "groups.yaml"], kinds) == Scope(kinds=frozenset({"team:*", "group:*"}))
    assert kinds.scope_of(["team:a", "user:x"]) == Scope(users=frozenset({"x"}), kinds=frozenset({"team:a"}))
    assert kinds.in_scope(Scope(kinds=frozenset({"team:*"})), "team:c")
    assert not kinds.in_scope(Scope(kinds=frozenset({"team:a"})), "team:c")
    assert "team" not in BUILT_IN_KINDS  # a table is never changed: each run builds its own
    with pytest.raises(ValueError, match="managed twice"):
        kinds.with_kinds(KindFacts("team", "teams", keys=lambda content: ()))
    with pytest.raises(ValueError, match="names its content's objects"):
        KindTable((*BUILT_IN_KINDS.kinds, KindFacts("team", "teams")))
