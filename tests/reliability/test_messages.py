"""Messages point at the real cause (issue 15, item 10).

* A page that Concrete numbered ``path-1`` because the path was taken is a duplicate, not a stop-word problem.
* The lock error says who holds the lock and how to stop it, never "delete the lock file" (deleting it while a run
  holds it lets a second run lock a new file: two writers on one state).
* Control characters from a file name or a server never reach the terminal raw.
* A redirect without ``Location`` is said to be one, not "redirected to ".
"""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from cmssync.emulator.embedded import Sandbox
from cmssync.state.store import StateStore
from tests.reliability.cli import run_cli
from tests.reliability.proxy import CorruptingProxy, Corruption, through
from tests.reliability.sites import ReliabilitySite
from tests.support.reliability_report import ReliabilityReport
from tests.support.sites import copy_example

NEWS = "name: News\nareas:\n  Main:\n    - type: content\n      value: {content: <p>News.</p>}\n"


def cli_site(root: Path, sandbox: Sandbox, monkeypatch: pytest.MonkeyPatch) -> ReliabilitySite:
    site = ReliabilitySite(root, sandbox)
    monkeypatch.setenv("CMSSYNC_URL", sandbox.url)
    monkeypatch.setenv("CMSSYNC_CLIENT_SECRET", sandbox.client_secret)
    monkeypatch.setenv("CMSSYNC_PASSWORD", sandbox.admin_password)
    monkeypatch.setenv("CMSSYNC_STATE", str(site.state_path))
    return site


@pytest.fixture
def news_site(tmp_path: Path, sandbox: Sandbox, monkeypatch: pytest.MonkeyPatch) -> ReliabilitySite:
    root = tmp_path / "site"
    (root / "pages").mkdir(parents=True)
    (root / "cmssync.yaml").write_text(
        "auth:\n  grant: password\n  client_id: sandbox\n  username: admin\n", encoding="utf-8"
    )
    (root / "pages" / "news.yaml").write_text(NEWS, encoding="utf-8")
    return cli_site(root, sandbox, monkeypatch)


def test_a_numbered_duplicate_is_called_a_duplicate(
    news_site: ReliabilitySite,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
    reliability_report: ReliabilityReport,
) -> None:
    """/news exists (made by an earlier run whose state is gone); the page tree hides it, so it is created again."""
    assert run_cli(capsys, "apply", "--yes", str(news_site.root)).code == 0
    monkeypatch.setenv("CMSSYNC_STATE", str(news_site.state_path.with_name("other-state.json")))
    hide = Corruption("home's children hidden", "GET", r"/pages/1/children$", body=json.dumps({"data": []}).encode())
    proxy = CorruptingProxy(hide)
    with through(proxy):
        result = run_cli(capsys, "apply", "--yes", str(news_site.root))
    reliability_report.add(cases_tried=1, faults_injected=proxy.corrupted)
    assert result.code == 1, result.text
    assert "page /news: a page with this path already exists on the site, so Concrete created a duplicate at " in (
        result.text
    )
    assert "/news-1" in result.text
    assert "drops words" not in result.text
    assert "exclude_words" not in result.text


def test_the_lock_error_says_how_to_stop_the_holder(
    tmp_path: Path,
    sandbox: Sandbox,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
    reliability_report: ReliabilityReport,
) -> None:
    root = tmp_path / "site"
    copy_example(root)
    site = cli_site(root, sandbox, monkeypatch)
    with StateStore(site.state_path).lock("cmssync apply"):
        result = run_cli(capsys, "apply", "--yes", str(root))
    reliability_report.add(cases_tried=1)
    assert result.code == 1, result.text
    assert f"state is locked by pid {os.getpid()} on host " in result.err
    assert f"stop it with `kill {os.getpid()}`" in result.err
    assert "never delete the lock file" in result.err
    assert "remove " not in result.err


def test_control_characters_in_a_file_name_are_escaped(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], reliability_report: ReliabilityReport
) -> None:
    root = tmp_path / "site"
    (root / "pages").mkdir(parents=True)
    (root / "pages" / "index.yaml").write_text("name: Home\n", encoding="utf-8")
    (root / "pages" / "evil\x1b[2J\x1b]0;pwned\x07.yml").write_text("name: Evil\n", encoding="utf-8")
    result = run_cli(capsys, "validate", str(root))
    reliability_report.add(cases_tried=1)
    assert result.code == 1, result.text
    assert "\x1b" not in result.text
    assert "\x07" not in result.text
    name = "pages/evil\\x1b[2J\\x1b]0;pwned\\x07.yml"
    assert f"{name}: a file name with a line break or another control character; rename it" in result.err


@pytest.mark.parametrize("location", [None, ""], ids=["no-header", "empty-header"])
def test_a_redirect_without_location_is_said_as_such(
    location: str | None,
    tmp_path: Path,
    sandbox: Sandbox,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
    reliability_report: ReliabilityReport,
) -> None:
    root = tmp_path / "site"
    copy_example(root)
    cli_site(root, sandbox, monkeypatch)
    headers = () if location is None else (("location", location),)
    proxy = CorruptingProxy(Corruption("redirect", "GET", "/sites/default$", status=302, headers=headers))
    with through(proxy):
        result = run_cli(capsys, "plan", str(root))
    reliability_report.add(cases_tried=1, faults_injected=proxy.corrupted)
    assert result.code == 1, result.text
    assert "redirect (302) without a Location header" in result.err, result.text
    assert "redirected to ;" not in result.err
