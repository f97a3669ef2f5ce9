from __future__ import annotations

import dataclasses
from pathlib import Path

import pytest

from cmssync.errors import PlanError
from cmssync.plan.actions import Action, KeptObjects, Precondition, summary_line
from cmssync.plan.builtin_kinds import BUILT_IN_KINDS
from cmssync.plan.kinds import KindFacts, KindPlan
from cmssync.plan.planner import PlanOptions, plan
from cmssync.plan.snapshot import LiveUser
from cmssync.state.records import FileRecord, KindRecord, PageRecord, State, UserRecord
from tests.sync.sitebuilder import BASE, page, snapshot, write_content

ABOUT = "name: About us\nareas:\n  Main:\n    - type: content\n      value: {content: <p>Hello</p>}\n"


def options(**kwargs: object) -> PlanOptions:
    return PlanOptions(base_url=BASE, **kwargs)  # type: ignore[arg-type]


def test_a_new_page_is_created_with_its_blocks(tmp_path: Path) -> None:
    content = write_content(tmp_path, {"pages/about.yaml": ABOUT})
    result = plan(content, snapshot(), State(), options())
    [action] = result.actions
    assert (action.kind, action.key, action.op) == ("page", "/about", "create")
    assert [(b.area, b.op, b.block_type, b.after) for b in action.blocks] == [
        ("Main", "add", "content", {"content": "<p>Hello</p>"})
    ]


def test_a_page_that_matches_plans_nothing(tmp_path: Path) -> None:
    content = write_content(tmp_path, {"pages/about.yaml": ABOUT})
    live = page(5, "/about", "About us", areas={"Main": [(10, "content", {"content": "<p>Hello</p>\n"})]})
    assert plan(content, snapshot(live), State(), options()).actions == ()


def test_links_to_the_site_compare_equal_to_the_stored_placeholder(tmp_path: Path) -> None:
    link = f"'<a href=\"{BASE}/x\">x</a>'"
    text = f"name: About us\nareas:\n  Main:\n    - type: content\n      value: {{content: {link}}}\n"
    content = write_content(tmp_path, {"pages/about.yaml": text})
    stored = '<a href="{CCM:BASE_URL}/x">x</a>'
    live = page(5, "/about", "About us", areas={"Main": [(10, "content", {"content": stored})]})
    assert plan(content, snapshot(live), State(), options()).actions == ()


def test_a_changed_block_is_updated_in_place(tmp_path: Path) -> None:
    content = write_content(tmp_path, {"pages/about.yaml": ABOUT})
    live = page(5, "/about", "About us", areas={"Main": [(10, "content", {"content": "<p>Bye</p>"})]})
    [action] = plan(content, snapshot(live), State(), options()).actions
    assert action.op == "update"
    [block] = action.blocks
    assert (block.op, block.block_id, block.before, block.after) == (
        "update",
        10,
        {"content": "<p>Bye</p>"},
        {"content": "<p>Hello</p>"},
    )


def test_drift_is_reported_when_the_content_is_what_was_last_applied(tmp_path: Path) -> None:
    content = write_content(tmp_path, {"pages/about.yaml": ABOUT})
    matching = page(5, "/about", "About us", areas={"Main": [(10, "content", {"content": "<p>Hello</p>"})]})
    state = State()
    from cmssync.plan.pages import PageContext, desired_page

    context = PageContext(content, snapshot(matching), state, PlanOptions(base_url=BASE), {}, {}, frozenset())
    state.record_page("/about", PageRecord(id=5, digest=desired_page("/about", context).digest))
    edited = page(5, "/about", "About us (edited)", areas={"Main": [(10, "content", {"content": "<p>Hello</p>"})]})
    [action] = plan(content, snapshot(edited), state, options()).actions
    assert action.drift
    assert [(c.field, c.before, c.after) for c in action.changes] == [("name", "About us (edited)", "About us")]


def test_a_pending_draft_of_cmssync_is_published_not_duplicated(tmp_path: Path) -> None:
    content = write_content(tmp_path, {"pages/about.yaml": ABOUT})
    live = page(
        5, "/about", "About us", areas={"Main": [(10, "content", {"content": "<p>Hello</p>"})]}, live=1, recent=2
    )
    state = State()
    state.record_page("/about", PageRecord(id=5, draft_version_id=2))
    [action] = plan(content, snapshot(live), state, options()).actions
    assert action.op == "publish"
    assert action.blocks == ()
    assert plan(content, snapshot(live), state, options(publish="draft")).actions == ()


def test_someone_elses_draft_is_left_alone_with_a_warning(tmp_path: Path) -> None:
    content = write_content(tmp_path, {"pages/about.yaml": ABOUT})
    live = page(5, "/about", "About us", areas={"Main": [(10, "content", {"content": "<p>Hello</p>"})]}, recent=2)
    result = plan(content, snapshot(live), State(), options())
    assert result.actions == ()
    assert any("not made by cmssync" in w for w in result.warnings)


def _managed_pages(count: int) -> tuple[State, list]:  # type: ignore[type-arg]
    state = State()
    pages = []
    for n in range(count):
        state.record_page(f"/p{n}", PageRecord(id=100 + n))
        pages.append(page(100 + n, f"/p{n}", f"P{n}"))
    return state, pages


def test_unmanaged_and_protected_objects_are_never_deleted(tmp_path: Path) -> None:
    content = write_content(tmp_path, {"pages/about.yaml": ABOUT, "groups.yaml": "- name: Team\n"})
    state = State()
    state.record_page("/", PageRecord(id=1))
    state.record_user("admin", UserRecord(id=1))
    observed = snapshot(
        page(5, "/about", "About us", areas={"Main": [(10, "content", {"content": "<p>Hello</p>"})]}),
        page(6, "/unmanaged", "Not ours"),
        users=(LiveUser(1, "admin", "a@x.io", None), LiveUser(2, "someone", "s@x.io", None)),
        groups=("Team",),
    )
    result = plan(content, observed, state, options(prune=True))
    assert result.actions == ()
    assert any("page / is protected" in w for w in result.warnings)
    assert any("user admin is protected" in w for w in result.warnings)


def test_pruning_deletes_a_managed_page_only_when_asked(tmp_path: Path) -> None:
    content = write_content(tmp_path, {"pages/about.yaml": ABOUT})
    state, pages = _managed_pages(1)
    live_about = page(5, "/about", "About us", areas={"Main": [(10, "content", {"content": "<p>Hello</p>"})]})
    observed = snapshot(live_about, *pages)
    kept = plan(content, observed, state, options())
    assert kept.actions == ()
    assert [(k.kind, k.keys) for k in kept.kept] == [("page", ("/p0",))]
    assert "use --prune" in kept.kept[0].describe()
    assert kept.has_changes  # the site holds a page the content no longer has
    assert not kept.is_empty
    [delete] = plan(content, observed, state, options(prune=True)).actions
    assert (delete.key, delete.op) == ("/p0", "delete")


@pytest.mark.parametrize(
    ("managed", "removed", "allowed"),
    [(20, 1, True), (20, 5, True), (20, 6, False), (40, 11, False), (4, 2, False), (3, 1, True)],
)
def test_mass_delete_guards(tmp_path: Path, managed: int, removed: int, allowed: bool) -> None:
    kept = "".join(f"pages/p{n}.yaml\n" for n in range(managed - removed))
    files = {f"pages/p{n}.yaml": f"name: P{n}\n" for n in range(managed - removed)}
    del kept
    content = write_content(tmp_path, files)
    state, pages = _managed_pages(managed)
    result = plan(content, snapshot(*pages), state, options(prune=True))
    deletes = [a for a in result.actions if a.op == "delete"]
    assert len(deletes) == (removed if allowed else 0)
    if not allowed:
        (blocked,) = result.blocked
        assert (blocked.kind, len(blocked.keys), blocked.managed) == ("page", removed, managed)
        assert "refusing to delete" in blocked.describe()
        assert not result.is_empty  # a held-back delete is not "no changes"
        assert summary_line(result).startswith("Plan: nothing to apply.")
        forced = plan(content, snapshot(*pages), state, options(prune=True, allow_mass_delete=True))
        assert len([a for a in forced.actions if a.op == "delete"]) == removed


def test_an_empty_content_directory_never_deletes(tmp_path: Path) -> None:
    content = write_content(tmp_path, {})
    state, pages = _managed_pages(3)
    result = plan(content, snapshot(*pages), state, options(prune=True, allow_mass_delete=True))
    assert result.actions == ()
    assert [(b.kind, b.guard, len(b.keys)) for b in result.blocked] == [("page", "empty_content", 3)]
    assert "content directory is empty" in result.blocked[0].describe()


def test_a_registered_kinds_deletes_are_guarded_with_the_built_in_kinds(tmp_path: Path) -> None:
    """An added kind's deletes (its planner hook's delete candidates) are counted per kind with the pages', files' and
    users': kept without pruning, held by an incomplete observation, blocked by a guard unless allowed, and applied
    after the built-in kinds' deletes in their order."""
    content = write_content(tmp_path, {"pages/p0.yaml": "name: P0\n", "crews.txt": "a\n"})
    state, pages = _managed_pages(2)
    for n, key in enumerate("abc"):
        state.record("crew", key, KindRecord(id=n))
    deletes = [Action(kind="crew", key=key, op="delete", precondition=Precondition(remote_id=key)) for key in "bc"]
    crew = KindFacts(
        "crew", "crews", delete_rank=3, keys=lambda content: ["a"], plan=lambda given: KindPlan([], lambda: deletes)
    )
    kinds = BUILT_IN_KINDS.with_kinds(crew)
    assert [kind.name for kind in kinds.deleted] == ["page", "file", "user", "crew"]
    observed = snapshot(*pages)
    kept = plan(content, observed, state, options(kinds=kinds))
    assert kept.actions == ()
    assert kept.kept == (KeptObjects(kind="page", keys=("/p1",)), KeptObjects(kind="crew", keys=("b", "c")))
    incomplete = dataclasses.replace(observed, complete=False)
    assert plan(content, incomplete, state, options(prune=True, allow_mass_delete=True, kinds=kinds)).actions == ()
    guarded = plan(content, observed, state, options(prune=True, kinds=kinds))
    assert [a.id for a in guarded.actions] == ["page:/p1"]  # one delete is never bulk; 2 of 3 crews are
    assert [(b.kind, b.keys, b.managed, b.guard) for b in guarded.blocked] == [("crew", ("b", "c"), 3, "max_fraction")]
    allowed = plan(content, observed, state, options(prune=True, allow_mass_delete=True, kinds=kinds))
    assert [a.id for a in allowed.actions] == ["page:/p1", "crew:b", "crew:c"]
    assert plan(content, observed, state, options(prune=True, max_fraction=1.0, kinds=kinds)).blocked == ()


def test_a_target_must_name_an_object(tmp_path: Path) -> None:
    content = write_content(tmp_path, {"pages/about.yaml": "name: About\n"})
    state, pages = _managed_pages(1)
    assert plan(content, snapshot(*pages), state, options(targets=("page:/abo*",))).actions
    for target, message in [
        ("page:/abuot", "matches no page"),
        ("/about", "invalid --target"),
        ("pages:/about", "invalid --target"),
        ("page:", "invalid --target"),
    ]:
        with pytest.raises(PlanError, match=message):
            plan(content, snapshot(*pages), state, options(targets=(target,)))


def test_children_are_created_after_parents_and_deleted_before_them(tmp_path: Path) -> None:
    content = write_content(
        tmp_path, {"pages/p.yaml": "name: P\n", "pages/p/q.yaml": "name: Q\n", "pages/p/q/r.yaml": "name: R\n"}
    )
    result = plan(content, snapshot(), State(), options())
    assert [a.key for a in result.actions] == ["/p", "/p/q", "/p/q/r"]
    assert result.actions[2].depends_on == ("page:/p/q",)
    state = State()
    for n, path in enumerate(["/x", "/x/y", "/x/y/z"]):
        state.record_page(path, PageRecord(id=200 + n))
    observed = snapshot(*[page(200 + n, p, p) for n, p in enumerate(["/x", "/x/y", "/x/y/z"])])
    pruned = plan(content, observed, state, options(prune=True, allow_mass_delete=True))
    assert [a.key for a in pruned.actions if a.op == "delete"] == ["/x/y/z", "/x/y", "/x"]


def test_a_page_waits_for_the_file_it_references(tmp_path: Path) -> None:
    text = "name: About\nareas:\n  Main:\n    - type: html\n      value: {content: '<img src=\"${file:logo.png}\">'}\n"
    content = write_content(tmp_path, {"pages/about.yaml": text, "files/logo.png": b"\x89PNG fake"})
    result = plan(content, snapshot(), State(), options())
    assert [a.id for a in result.actions] == ["file:logo.png", "page:/about"]
    assert result.actions[1].depends_on == ("file:logo.png",)
    assert result.actions[1].blocks[0].after == {"content": '<img src="${file:logo.png}">'}


def test_a_file_with_new_bytes_is_replaced_and_pages_follow(tmp_path: Path) -> None:
    from cmssync.plan.snapshot import LiveFile

    text = "name: About\nareas:\n  Main:\n    - type: html\n      value: {content: '<img src=\"${file:logo.png}\">'}\n"
    content = write_content(tmp_path, {"pages/about.yaml": text, "files/logo.png": b"new bytes"})
    old_url = f"{BASE}/application/files/1/logo.png"
    state = State()
    state.record_file("logo.png", FileRecord(id="uuid-1", hash="sha256:" + "0" * 64, url=old_url))
    live_file = LiveFile("uuid-1", "logo.png", old_url, "logo.png", "", (), None, 9)
    live = page(5, "/about", "About", areas={"Main": [(10, "html", {"content": f'<img src="{old_url}">'})]})
    result = plan(content, snapshot(live, files=(live_file,)), state, options())
    assert [(a.id, a.op) for a in result.actions] == [("file:logo.png", "replace"), ("page:/about", "update")]
    assert result.actions[1].depends_on == ("file:logo.png",)


def test_user_changes_are_field_level_and_passwords_sensitive(tmp_path: Path) -> None:
    users = "- username: jane.editor\n  email: jane@new.example\n  password: ${env:JANE_PASSWORD}\n"
    content = write_content(tmp_path, {"users.yaml": users})
    state = State()
    state.record_user("jane.editor", UserRecord(id=7, password_digest="hmac-sha256:" + "1" * 64))
    observed = snapshot(users=(LiveUser(7, "jane.editor", "jane@old.example", None),))
    result = plan(content, observed, state, options(passwords_changed=frozenset({"jane.editor"})))
    [action] = result.actions
    assert [(c.field, c.sensitive) for c in action.changes] == [("email", False), ("password", True)]
    assert action.changes[1].before is None
    assert action.changes[1].after is None
    same = plan(content, observed, state, options())
    assert [c.field for c in same.actions[0].changes] == ["email"]


def test_targets_select_actions_and_their_dependencies(tmp_path: Path) -> None:
    content = write_content(
        tmp_path, {"pages/p.yaml": "name: P\n", "pages/p/q.yaml": "name: Q\n", "pages/c.yaml": "name: C\n"}
    )
    result = plan(content, snapshot(), State(), options(targets=("page:/p/q",)))
    assert [a.key for a in result.actions] == ["/p", "/p/q"]


def test_a_moved_page_file_is_shown_as_a_move_not_create_and_delete(tmp_path: Path) -> None:
    content = write_content(tmp_path, {"pages/new/about.yaml": ABOUT, "pages/new.yaml": "name: New\n"})
    live_new = page(8, "/new", "New")
    old = page(5, "/about", "About us", areas={"Main": [(10, "content", {"content": "<p>Hello</p>"})]})
    state = State()
    from cmssync.plan.pages import PageContext, desired_page

    context = PageContext(content, snapshot(live_new, old), state, PlanOptions(base_url=BASE), {}, {}, frozenset())
    state.record_page("/about", PageRecord(id=5, digest=desired_page("/new/about", context).digest))
    result = plan(content, snapshot(live_new, old), state, options(prune=True))
    [move] = result.actions
    assert (move.key, move.op) == ("/new/about", "move")
    assert "--replace-moved" in (move.note or "")
    replaced = plan(content, snapshot(live_new, old), state, options(prune=True, replace_moved=True))
    assert [(a.key, a.op) for a in replaced.actions] == [("/new/about", "create"), ("/about", "delete")]
