"""What ``cmssync pull`` costs in requests (issue 28 item 1): one children list per parent, the flat page list as the
map of which pages are parents, and single-page reads only where no batch can tell — counted in the summary."""

from __future__ import annotations

import io
from pathlib import Path

from cmssync.commands.pull import run_pull
from cmssync.emulator.embedded import Sandbox
from cmssync.sync.planning import make_plan
from tests.support.sites import Site, requests_by_route


async def _pull(tmp_path: Path, sandbox: Sandbox, generate: str) -> tuple[Site, str, dict[str, int]]:
    sandbox.reset(seed="empty", generate=generate)
    root = tmp_path / "site"
    root.mkdir()
    site = Site(root, sandbox)
    out = io.StringIO()
    sandbox.clear_stats()
    assert await run_pull(root, out=out, overrides=site.overrides()) == 0
    return site, out.getvalue(), requests_by_route(sandbox)


async def test_pull_reads_a_children_list_per_parent_where_the_page_list_is_a_map(
    tmp_path: Path, sandbox: Sandbox
) -> None:
    site, summary, routes = await _pull(tmp_path, sandbox, "pages=250,blocks=2,rate=10")
    assert routes["GET /pages/{pageID}/children"] == 1 + 3  # home and its 3 sections; never a leaf's
    # single pages: the home page, which no children list holds (plus the ids the stack probe of
    # cmssync.sync.pull_stacks reads: ids the tree did not show, none of them a page of the tree)
    assert routes["GET /pages/{pageID}"] < 250
    assert routes["GET /pages"] <= 4  # 250 pages (+ the seed's) at 100 a request
    assert "pages read one request each (no batch could tell): 1 the home page" in summary
    run = await make_plan(site.workspace())
    assert run.plan.actions == ()
    assert len(run.snapshot.pages) == 251


async def test_pull_reads_every_childrens_list_when_the_page_dates_tie(tmp_path: Path, sandbox: Sandbox) -> None:
    site, summary, routes = await _pull(tmp_path, sandbox, "pages=150,blocks=1")
    # every page in one second: the list's cursor skips pages, so it cannot say which pages are leaves
    assert routes["GET /pages/{pageID}/children"] == 1 + 150
    assert "children of every page (the page list has tied dates)" in summary
    run = await make_plan(site.workspace())
    assert run.plan.actions == ()
