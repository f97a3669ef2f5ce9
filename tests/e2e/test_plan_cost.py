"""What a plan costs in requests (issue 17: batched observation).

A no-op plan reads the page tree one level at a time, one request per parent of managed pages
(``GET /pages/{id}/children?includes=areas,custom_attributes``), plus the home page, the file, user and group lists
and a constant: about parents + files/100 + users/100 + a constant, whatever the number of pages. A plan with changes
reads the pages it will write again on their own (their drafts); an incremental run reads only its scope.
"""

from __future__ import annotations

import math
from pathlib import Path

import httpx
import pytest

from cmssync.emulator.embedded import Sandbox
from cmssync.plan.request import PlanRequest
from cmssync.plan.scope_model import Scope
from cmssync.sync.planning import make_plan
from tests.support.rawsite import RawSite, trash_page
from tests.support.sites import pulled_site, requests_by_route
from tests.support.tokens import sandbox_token

EDITOR = "pages:read pages:update pages:versions:read"


@pytest.mark.slow
@pytest.mark.parametrize(("pages", "files", "users"), [(20, 120, 110), (250, 250, 230)])
async def test_no_op_plan_costs_one_request_per_parent(
    tmp_path: Path, sandbox: Sandbox, pages: int, files: int, users: int
) -> None:
    site = await pulled_site(tmp_path, sandbox, f"pages={pages},blocks=2,files={files},users={users}")
    sandbox.clear_stats()
    run = await make_plan(site.workspace())
    assert run.plan.actions == ()
    assert len(run.snapshot.pages) >= pages
    routes = requests_by_route(sandbox)
    sections = math.ceil(pages / 100)  # the generator puts up to 100 pages under each section below home
    # one children list per parent: home and every section, never a page read on its own except home
    assert routes.get("GET /pages/{pageID}/children") == 1 + sections, routes
    assert routes.get("GET /pages/{pageID}") == 1, routes
    assert "GET /page_versions/{pageID}" not in routes, routes
    # Users the list walk skips (the generator gives them all one date: concrete-api.md §13) are read one by one.
    raw = RawSite(sandbox)  # after the reset, which revokes earlier tokens
    listed = {user["id"] for user in raw.all("/users")}
    raw.close()
    missed = len([record for record in run.state.users.values() if record.id not in listed])
    parents = 1 + sections
    bound = parents + 1 + math.ceil(files / 100) + math.ceil(users / 100) + missed
    # constant: token, default site, groups list, and one extra list page per list that ends on a full page
    assert bound <= run.requests <= bound + 6, (run.requests, bound, missed, routes)


def _leave_drafts(sandbox: Sandbox, paths: list[str]) -> None:
    """An editor changes the description of each page and leaves the change as an unapproved draft."""
    raw = RawSite(sandbox)
    token = sandbox_token(sandbox, EDITOR)
    with httpx.Client(base_url=sandbox.api_url, headers={"Authorization": f"Bearer {token}"}) as editor:
        for path in paths:
            page = raw.page_by_path(path)
            assert page is not None
            answer = editor.put(f"/pages/{page['id']}", json={"description": f"an editor's draft of {path}"})
            answer.raise_for_status()
    raw.close()


@pytest.mark.slow
async def test_changes_read_only_the_pages_to_write_on_their_own(tmp_path: Path, sandbox: Sandbox) -> None:
    """Phase two: the pages with planned changes are read again in their recent version, the others are not; a
    foreign draft on a page that gets a change is still found (and holds it), one on an unchanged page costs
    nothing and is left alone."""
    site = await pulled_site(tmp_path, sandbox, "pages=30,blocks=2")
    content = site.workspace().content
    leaves = sorted(path for path in content.pages if path.count("/") == 2)
    changed, untouched = leaves[:3], leaves[-1]
    for path in changed:
        source = content.pages[path].source
        assert source is not None
        file = Path(source.file) if Path(source.file).is_absolute() else site.root / source.file
        file.write_text(file.read_text().replace("name: ", "name: Changed ", 1))
    _leave_drafts(sandbox, [changed[0], untouched])
    sandbox.clear_stats()
    run = await make_plan(site.workspace())
    routes = requests_by_route(sandbox)
    assert sorted(action.key for action in run.plan.actions) == changed[1:]
    assert [held.key for held in run.plan.held] == [changed[0]]
    assert [held.reason for held in run.plan.held] == ["foreign_draft"]
    # home alone, then each changed page in its recent version, and the live version of the drafted one
    assert routes.get("GET /pages/{pageID}") == 1 + len(changed) + 1, routes
    assert not run.snapshot.pages[untouched].has_draft
    assert run.snapshot.pages[untouched].batched


@pytest.mark.slow
async def test_incremental_run_reads_only_its_scope(tmp_path: Path, sandbox: Sandbox) -> None:
    site = await pulled_site(tmp_path, sandbox, "pages=150,blocks=3,files=30,users=20")
    page = sorted(path for path in site.workspace().content.pages if path.count("/") == 2)[7]
    sandbox.clear_stats()
    run = await make_plan(site.workspace(), PlanRequest(scope=Scope(pages=frozenset({page}))))
    assert run.plan.actions == ()
    routes = requests_by_route(sandbox)
    # the token, the default site and the page (known by id): no parent, no list, no tree level
    assert routes.get("GET /pages/{pageID}") == 1, routes
    assert not any("children" in route or route in ("GET /files", "GET /users", "GET /pages") for route in routes)
    assert run.requests <= 3, routes


@pytest.mark.slow
async def test_incremental_run_for_a_new_page_reads_only_its_parents_level(tmp_path: Path, sandbox: Sandbox) -> None:
    """A page the state does not know yet: its known parent on its own and the parent's children list (to see that
    the page is absent), never the home page or another level."""
    site = await pulled_site(tmp_path, sandbox, "pages=150,blocks=3")
    section = sorted(path for path in site.workspace().content.pages if path.count("/") == 1)[1]
    site.write(f"pages{section}/brand-new.yaml", "name: Brand new\n")
    sandbox.clear_stats()
    new = f"{section}/brand-new"
    run = await make_plan(site.workspace(), PlanRequest(scope=Scope(pages=frozenset({new}))))
    assert [(action.key, action.op) for action in run.plan.actions] == [(new, "create")]
    routes = requests_by_route(sandbox)
    assert routes.get("GET /pages/{pageID}") == 1, routes  # the section, known by id from the state
    assert routes.get("GET /pages/{pageID}/children") == 1, routes  # the section's children: the page is absent
    assert run.requests <= 5, routes


@pytest.mark.slow
async def test_a_page_the_tree_no_longer_shows_is_read_by_its_id(tmp_path: Path, sandbox: Sandbox) -> None:
    """A managed page moved to the trash outside cmssync is not in its parent's children list: observe reads its
    state id on its own (the trash answers "pending deletion"), so the plan creates it again, as before batching."""
    site = await pulled_site(tmp_path, sandbox, "pages=30,blocks=2")
    gone = sorted(path for path in site.workspace().content.pages if path.count("/") == 2)[4]
    page_id = trash_page(sandbox, gone)
    sandbox.clear_stats()
    run = await make_plan(site.workspace())
    assert [(action.key, action.op) for action in run.plan.actions] == [(gone, "create")]
    assert run.plan.actions[0].drift
    assert page_id not in run.snapshot.pages_by_id
    routes = requests_by_route(sandbox)
    assert routes.get("GET /pages/{pageID}") == 2, routes  # the home page, and the trashed page by its id
