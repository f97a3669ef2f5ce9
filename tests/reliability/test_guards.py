"""The delete guards (design.md §5, issue 9): an empty or wrongly mounted content directory never deletes anything,
not even with ``--prune --allow-mass-delete``; pruning beyond ``max_deletes`` or ``max_fraction`` is refused unless
``--allow-mass-delete`` is given; what cmssync does not manage is never deleted.
"""

from __future__ import annotations

import asyncio
import shutil
from pathlib import Path
from typing import Any

import pytest

from tests.reliability.cli import run_cli
from tests.reliability.inventory import Inventory, take_inventory
from tests.reliability.sites import ReliabilitySite
from tests.support.rawsite import RawSite
from tests.support.reliability_report import ReliabilityReport
from tests.support.sites import sandbox_environment

LEAVES = ("pages/about/team.yaml", "pages/services/consulting.yaml", "pages/services/training.yaml")
LEAF_PATHS = {"/about/team", "/services/consulting", "/services/training"}


def deletes(stats: dict[str, Any]) -> list[str]:
    return [f"{r['route']} x{r['count']}" for r in stats["requests"] if r["method"] == "DELETE"]


def applied(site: ReliabilitySite) -> Inventory:
    report = asyncio.run(site.apply())
    assert not report.failed, site.last_output
    raw = RawSite(site.sandbox)
    try:
        return take_inventory(raw, block_pages=set())
    finally:
        raw.close()


def inventory(site: ReliabilitySite) -> Inventory:
    raw = RawSite(site.sandbox)
    try:
        return take_inventory(raw, block_pages=set())
    finally:
        raw.close()


def wrong_mount(root: Path, variant: str) -> None:
    shutil.rmtree(root)
    root.mkdir()
    if variant == "only cmssync.yaml":
        (root / "cmssync.yaml").write_text("auth: {grant: password, client_id: sandbox, username: admin}\n")
    elif variant == "empty subdirectories":
        (root / "cmssync.yaml").write_text("auth: {grant: password, client_id: sandbox, username: admin}\n")
        for name in ("pages", "files"):
            (root / name).mkdir()


@pytest.mark.parametrize("variant", ["empty directory", "only cmssync.yaml", "empty subdirectories"])
def test_an_empty_or_wrong_mount_never_deletes(
    variant: str,
    example_site: ReliabilitySite,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
    reliability_report: ReliabilityReport,
) -> None:
    site, sandbox = example_site, example_site.sandbox
    before = applied(site)
    wrong_mount(site.root, variant)
    for name, value in sandbox_environment(sandbox, site.state_path).items():
        monkeypatch.setenv(name, value)
    sandbox.clear_stats()

    result = run_cli(capsys, "apply", "--yes", "--prune", "--allow-mass-delete", str(site.root))

    reliability_report.add(cases_tried=1)
    assert "Traceback" not in result.text
    assert "the content directory is empty" in result.out, result.text
    assert deletes(sandbox.stats()) == [], result.text
    after = inventory(site)
    assert set(after.pages) == set(before.pages)
    assert after.files == before.files
    assert after.users == before.users
    assert after.groups == before.groups


def test_pruning_beyond_max_fraction_needs_allow_mass_delete(
    example_site: ReliabilitySite, reliability_report: ReliabilityReport
) -> None:
    site = example_site
    before = applied(site)
    for leaf in LEAVES:  # 3 of 7 managed pages: above max_fraction 0.25, within max_deletes 10
        (site.root / leaf).unlink()
    (site.root / "users.yaml").write_text("[]\n")  # 2 of 2 managed users

    site.sandbox.clear_stats()
    refused = asyncio.run(site.apply(prune=True))
    assert deletes(site.sandbox.stats()) == []
    assert "refusing to delete 3 of 7 managed pages" in site.last_output
    assert "refusing to delete 2 of 2 managed users" in site.last_output
    assert not refused.failed

    report = asyncio.run(site.apply(prune=True, allow_mass_delete=True))
    assert not report.failed, site.last_output
    after = inventory(site)
    reliability_report.add(cases_tried=2)
    assert set(before.pages) - set(after.pages) == LEAF_PATHS
    assert {"jane.editor", "sam_writer"} & set(after.users) == set()
    assert set(after.users) == set(before.users) - {"jane.editor", "sam_writer"}, "unmanaged users stay"
    assert {"/blog", "/blog/hello-world", "/about", "/services"} <= set(after.pages), "unmanaged pages stay"


def test_pruning_beyond_max_deletes_needs_allow_mass_delete(
    example_site: ReliabilitySite, reliability_report: ReliabilityReport
) -> None:
    site = example_site
    site.settings["prune"] = {"max_deletes": 2, "max_fraction": 1.0}
    before = applied(site)
    for leaf in LEAVES:
        (site.root / leaf).unlink()

    site.sandbox.clear_stats()
    asyncio.run(site.apply(prune=True))
    assert deletes(site.sandbox.stats()) == []
    assert "refusing to delete 3 of 7 managed pages (guard max_deletes=2)" in site.last_output

    (site.root / "pages/about/team.yaml").write_text("name: Team\n")  # back to 2 deletes: within the guards
    asyncio.run(site.apply(prune=True))
    after = inventory(site)
    reliability_report.add(cases_tried=2)
    assert set(before.pages) - set(after.pages) == {"/services/consulting", "/services/training"}


def test_without_prune_nothing_is_deleted(example_site: ReliabilitySite, reliability_report: ReliabilityReport) -> None:
    site = example_site
    before = applied(site)
    (site.root / LEAVES[0]).unlink()
    site.sandbox.clear_stats()
    asyncio.run(site.apply(allow_mass_delete=True))
    reliability_report.add(cases_tried=1)
    assert deletes(site.sandbox.stats()) == []
    assert "no longer in the content, kept (use --prune to delete): /about/team" in site.last_output
    assert set(inventory(site).pages) == set(before.pages)
