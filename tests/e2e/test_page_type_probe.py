"""Page-type ids from the site itself (issue 36 item 2): a page list naming a page type by handle is written on a
site without a page type ``page`` (another theme's types), the probe's scratch page is made once per site with a type
and template the site's pages show and reused by later runs, and a probe that cannot run says why for every block
that needs it instead of "no page type on the site has the handle …"."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import httpx
import pytest

from cmssync.emulator.embedded import Sandbox
from tests.support.sites import Site

SEED: dict[str, Any] = {
    # a site built from another theme: no page type "page" (ids as a real site numbers them: core types first)
    "page_types": {"core_stack": 1, "core_stack_category": 2, "core_desktop": 3, "landing": 4, "article": 5},
    "pages": [
        {"path": "/", "name": "Home", "type": "landing", "template": "full"},
        {"path": "/news", "name": "News", "type": "landing", "template": "right_sidebar"},
        {"path": "/news/one", "name": "One", "type": "article", "template": "right_sidebar"},
        {"path": "/news/two", "name": "Two", "type": "article", "template": "right_sidebar"},
    ],
}
LIST = '    - type: page_list\n      raw: true\n      value: {ptID: article, num: "5", pageListTitle: %s}\n'


@pytest.fixture
def site(sandbox_server: Sandbox, tmp_path: Path) -> Site:
    return Site.seeded(sandbox_server, tmp_path, SEED)


def _with_list(site: Site, path: str, title: str) -> None:
    text = (site.root / path).read_text(encoding="utf-8")
    if "areas:" not in text:
        text += "areas:\n"
    site.write(path, text + "  Main:\n" + LIST % title)


def _pages_created(site: Site) -> int:
    return int(site.sandbox.stats()["by_route"].get("POST /pages", 0))


async def test_a_page_list_is_written_on_a_site_without_a_page_type_page(site: Site) -> None:
    await site.pull()
    _with_list(site, "pages/news.yaml", "Latest")
    site.sandbox.clear_stats()
    report = await site.apply()
    assert report.exit_code == 0, site.last_output
    assert _pages_created(site) == 1  # the scratch page, of the type and template of /news
    probe_page = site.workspace().load_state().site.probe_page  # type: ignore[union-attr]
    assert probe_page is not None
    assert "Latest" in httpx.get(site.sandbox.url + "/news", timeout=30).text
    assert not (await site.plan()).actions

    _with_list(site, "pages/news/one.yaml", "Related")
    site.sandbox.clear_stats()
    report = await site.apply()
    assert report.exit_code == 0, site.last_output
    assert _pages_created(site) == 0
    assert site.workspace().load_state().site.probe_page == probe_page  # type: ignore[union-attr]  # reused
    assert not (await site.plan()).actions


async def test_a_probe_that_cannot_run_says_why_for_every_block(site: Site) -> None:
    await site.pull()
    _with_list(site, "pages/news.yaml", "Latest")
    _with_list(site, "pages/news/two.yaml", "Also")
    site.sandbox.set_faults(["500:1:method=POST:path=/ccm/api/1.0/pages$"])  # the site refuses every new page
    try:
        report = await site.apply()
    finally:
        site.sandbox.clear_faults()
    assert report.exit_code == 1
    output = site.last_output
    assert output.count("page-type ids cannot be learned: the site refused the scratch page of the probe") == 2
    assert "type landing with template right_sidebar: " in output
    assert "no page type on the site has the handle" not in output
    assert site.workspace().load_state().site.probe_page is None  # type: ignore[union-attr]
    report = await site.apply()  # not cached across runs: the next run probes and writes
    assert report.exit_code == 0, site.last_output
