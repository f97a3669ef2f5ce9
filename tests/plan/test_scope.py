"""``scope_for_targets``: what a ``--target`` run reads, computed from the content and the state alone (pure)."""

from __future__ import annotations

from pathlib import Path

from cmssync.plan.scope import WholeSite, scope_after_observation, scope_for_targets
from cmssync.plan.scope_model import Scope
from cmssync.state.records import PageRecord, State
from tests.sync.sitebuilder import write_content

PAGES: dict[str, str | bytes] = {
    "pages/index.yaml": "name: Home\n",
    "pages/sec.yaml": "name: Sec\n",
    "pages/sec/one.yaml": "name: One\ndescription: see ${page-id:/b}\n",
    "pages/sec/two.yaml": (
        "name: Two\nareas:\n  Main:\n    - type: content\n      value:\n"
        '        content: <a href="${page-link:/c/new}">new</a> <img src="${file:logo.png}">\n'
    ),
    "pages/b.yaml": "name: B\n",
    "pages/c.yaml": "name: C\n",
    "pages/c/new.yaml": "name: New\n",
    "files/logo.png": b"png",
}
STATE = State(pages={p: PageRecord(id=i) for i, p in enumerate(["/", "/sec", "/sec/one", "/sec/two", "/b", "/old"], 1)})


def _scope(tmp_path: Path, *targets: str, prune: bool = False, state: State = STATE) -> Scope | WholeSite:
    content = write_content(tmp_path, PAGES)
    return scope_for_targets(content, state, targets, prune=prune, replace_moved=False)


def test_a_known_page_needs_itself_and_the_pages_it_refers_to(tmp_path: Path) -> None:
    scope = _scope(tmp_path, "page:/sec/one")
    assert isinstance(scope, Scope)
    assert scope.pages == {"/sec/one", "/b"}
    assert not scope.lookups
    assert not scope.files
    assert not scope.deletes


def test_a_page_to_create_needs_its_parents_and_the_pages_it_may_have_moved_from(tmp_path: Path) -> None:
    scope = _scope(tmp_path, "page:/sec/two")
    assert isinstance(scope, Scope)
    # /c/new is not managed yet (it will be created first): its parents /c and / too, and /old, a page it may have been
    assert scope.pages == {"/sec/two", "/c/new", "/c", "/"}
    assert scope.files == {"logo.png"}
    assert scope.lookups == {"/old"}


def test_a_managed_page_found_missing_grows_the_scope(tmp_path: Path) -> None:
    content = write_content(tmp_path, PAGES)
    scope = scope_for_targets(content, STATE, ("page:/sec/one",), prune=False, replace_moved=False)
    assert isinstance(scope, Scope)
    assert scope_after_observation(scope, content, STATE, ["/sec/one", "/b"]) == scope
    grown = scope_after_observation(scope, content, STATE, ["/b"])  # /sec/one is gone from the site
    assert isinstance(grown, Scope)
    assert grown.pages == {"/sec/one", "/sec", "/b"}
    assert grown.lookups == {"/old"}


def test_a_page_delete_reads_the_whole_site(tmp_path: Path) -> None:
    assert isinstance(_scope(tmp_path, "page:/old", prune=True), WholeSite)
    assert isinstance(_scope(tmp_path, "page:/old"), Scope)  # without pruning nothing is deleted


def test_a_reference_the_state_cannot_place_reads_the_whole_site(tmp_path: Path) -> None:
    state = State(pages={p: r for p, r in STATE.pages.items() if p != "/b"})
    found = _scope(tmp_path, "page:/sec/one", state=state)
    assert isinstance(found, Scope)  # /b is a content page: found through its parent's children list
    pages: dict[str, str | bytes] = {**PAGES, "pages/sec/one.yaml": "name: One\ndescription: see ${page-id:/ext}\n"}
    pages["cmssync.yaml"] = "site:\n  url: http://site.test\nexisting_pages: [/ext]\n"
    content = write_content(tmp_path / "ext", pages)
    whole = scope_for_targets(content, STATE, ("page:/sec/one",), prune=False, replace_moved=False)
    assert isinstance(whole, WholeSite)
    assert "/ext" in whole.reason
