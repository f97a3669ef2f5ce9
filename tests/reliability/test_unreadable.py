"""A managed page that exists but cannot be read is never created again (issue 15, item 3).

The page tree lists the page, but reading it answers 403 (a permission changed) or 404 (a server that contradicts
its own tree). Observe used to treat that as "absent", so every run created another copy (``/about-1``,
``/about-2``, …). Now the page is held (named with the server's reason), nothing is created, and apply exits 1;
``test_unreadable_isolated.py`` shows the rest of the site is still applied.
"""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import pytest

from cmssync.emulator.embedded import Sandbox
from tests.reliability.cli import run_cli
from tests.reliability.inventory import duplicates, problems, take_inventory
from tests.reliability.proxy import CorruptingProxy, Corruption, through
from tests.reliability.sites import ReliabilitySite, cli_environment
from tests.support.rawsite import RawSite
from tests.support.reliability_report import ReliabilityReport
from tests.support.sites import copy_example

ANSWERS = {
    403: {"error": True, "errors": ["You do not have access to this page."]},
    404: {"error": True, "errors": ["Page not found."]},
}


@pytest.fixture
def site(tmp_path: Path, sandbox: Sandbox, monkeypatch: pytest.MonkeyPatch) -> ReliabilitySite:
    root = tmp_path / "site"
    copy_example(root)
    return cli_environment(ReliabilitySite(root, sandbox), monkeypatch)


@pytest.mark.parametrize("status", [403, 404])
@pytest.mark.parametrize("with_state", [True, False], ids=["state-knows-it", "state-lost"])
def test_an_unreadable_page_fails_with_the_reason_and_is_not_created_again(
    status: int,
    with_state: bool,
    site: ReliabilitySite,
    capsys: pytest.CaptureFixture[str],
    reliability_report: ReliabilityReport,
) -> None:
    raw = RawSite(site.sandbox)
    try:
        seed = take_inventory(raw, block_pages=set())
        assert not asyncio.run(site.apply()).failed, site.last_output
        about = site.state().pages["/about"].id
        if not with_state:
            site.state_path.unlink()
        (site.root / "pages" / "about.yaml").write_text(
            (site.root / "pages" / "about.yaml").read_text(encoding="utf-8").replace("About us", "About the team")
        )
        before = take_inventory(raw, block_pages=set())
        proxy = CorruptingProxy(
            Corruption(
                f"page read {status}",
                "GET",
                rf"/pages/{about}$",
                status=status,
                body=json.dumps(ANSWERS[status]).encode(),
            )
        )
        results = []
        with through(proxy):
            for _ in range(3):  # every run used to make one more copy
                results.append(run_cli(capsys, "apply", "--yes", str(site.root)))
        after = take_inventory(raw, block_pages=set(site.content().pages))
    finally:
        raw.close()

    found = problems(seed, after, site.content(), None)
    reliability_report.add(
        cases_tried=1, applies=len(results), faults_injected=proxy.corrupted, duplicates_found=duplicates(found)
    )
    assert sorted(after.pages) == sorted(before.pages)
    assert duplicates(found) == 0, found
    reason = "You do not have access to this page." if status == 403 else "Page not found."
    for result in results:
        assert result.code == 1, result.text
        assert f"page /about (id {about}): the page tree lists it but it cannot be read" in result.out, result.text
        assert reason in result.out
        assert "Traceback" not in result.text
