"""A symbolic link can never publish a hidden file (issue 15, item 6).

``files/x -> ../.git/config`` stays inside the content directory, so the old rule ("links must not leave the
content") let it through: validation passed and apply uploaded the repository's config to the public file manager.
Links whose target has a hidden component are now refused at validation, with the file named, and checked again
just before an upload, for a tree that changed after it was validated.
"""

from __future__ import annotations

import asyncio
import os
from pathlib import Path
from typing import Any

import pytest

import cmssync.sync.applying
from cmssync.emulator.embedded import Sandbox
from tests.reliability.cli import run_cli
from tests.reliability.inventory import take_inventory
from tests.reliability.sites import ReliabilitySite, cli_environment
from tests.support.rawsite import RawSite
from tests.support.reliability_report import ReliabilityReport
from tests.support.sites import copy_example

pytestmark = pytest.mark.skipif(not hasattr(os, "symlink"), reason="needs symbolic links")

GIT_CONFIG = '[remote "origin"]\n\turl = https://deploy:ghp_hiddenTokenValue@example.com/site.git\n'

LINKS = [
    ("files/config.txt", "../.git/config", ".git/config"),
    ("files/docs/state.json", "../../.cmssync/state.json", ".cmssync/state.json"),
    ("files/env.txt", ".env", "files/.env"),
    ("pages/secret.yaml", "../.private/page.yaml", ".private/page.yaml"),
]


@pytest.fixture
def site(tmp_path: Path, sandbox: Sandbox, monkeypatch: pytest.MonkeyPatch) -> ReliabilitySite:
    root = tmp_path / "site"
    copy_example(root)
    (root / ".git").mkdir()
    (root / ".git" / "config").write_text(GIT_CONFIG, encoding="utf-8")
    (root / ".cmssync").mkdir()
    (root / ".cmssync" / "state.json").write_text("{}", encoding="utf-8")
    (root / "files" / ".env").write_text("TOKEN=hidden\n", encoding="utf-8")
    (root / ".private").mkdir()
    (root / ".private" / "page.yaml").write_text("name: Private\n", encoding="utf-8")
    return cli_environment(ReliabilitySite(root, sandbox), monkeypatch)


@pytest.mark.parametrize(("link", "target", "shown"), LINKS, ids=[link for link, _, _ in LINKS])
def test_a_link_to_a_hidden_file_is_refused_at_validation(
    link: str,
    target: str,
    shown: str,
    site: ReliabilitySite,
    capsys: pytest.CaptureFixture[str],
    reliability_report: ReliabilityReport,
) -> None:
    path = site.root / link
    path.parent.mkdir(parents=True, exist_ok=True)
    path.symlink_to(target)
    site.sandbox.clear_stats()

    validate = run_cli(capsys, "validate", str(site.root))
    apply = run_cli(capsys, "apply", "--yes", str(site.root))
    requests = site.sandbox.stats()["requests"]

    reliability_report.add(cases_tried=1)
    expected = f"{link}: symbolic link points to a hidden file or directory ({shown})"
    assert validate.code == 1, validate.text
    assert expected in validate.err, validate.text
    assert apply.code == 1, apply.text
    assert expected in apply.err, apply.text
    assert "ghp_hiddenTokenValue" not in validate.text + apply.text
    assert [r for r in requests if r["method"] != "GET" and r["route"] != "/oauth/2.0/token"] == []


def test_a_file_swapped_for_a_link_after_validation_is_not_uploaded(
    site: ReliabilitySite,
    sandbox: Sandbox,
    monkeypatch: pytest.MonkeyPatch,
    reliability_report: ReliabilityReport,
) -> None:
    """Between loading the content and uploading, ``files/report.txt`` becomes a link to ``.git/config``."""
    report = site.root / "files" / "report.txt"
    report.write_text("quarterly report\n", encoding="utf-8")
    execute = cmssync.sync.applying.execute

    async def swap_then_execute(*args: Any, **kwargs: Any) -> Any:
        report.unlink()
        report.symlink_to("../.git/config")
        return await execute(*args, **kwargs)

    monkeypatch.setattr(cmssync.sync.applying, "execute", swap_then_execute)
    result = asyncio.run(site.apply())

    raw = RawSite(sandbox)
    try:
        inventory = take_inventory(raw, block_pages=set())
    finally:
        raw.close()
    failed = [outcome for outcome in result.outcomes if outcome.status == "failed"]
    reliability_report.add(cases_tried=1)
    assert [outcome.action.key for outcome in failed] == ["report.txt"], site.last_output
    assert "symbolic link points to a hidden file or directory (.git/config); " in failed[0].message
    assert "not uploaded" in failed[0].message
    assert "report.txt" not in inventory.file_names
    assert "config" not in inventory.file_names
