"""``daemon.reports``: the daemon keeps the HTML report of each run that changed something, and only those."""

from __future__ import annotations

from pathlib import Path

from cmssync.daemon.gate import RequestGate
from cmssync.daemon.health import Readiness
from cmssync.daemon.metrics import DaemonMetrics
from cmssync.daemon.reconciler import Batch
from cmssync.daemon.runner import DaemonSite, SyncRunner
from cmssync.emulator.embedded import Sandbox
from tests.report.markup import read
from tests.report.scenario import overrides


def _runner(root: Path, sandbox: Sandbox, reports: str | None) -> SyncRunner:
    settings = overrides(root, sandbox)
    if reports is not None:
        settings["daemon"] = {"reports": reports}
    return SyncRunner(DaemonSite(root, settings, RequestGate()), metrics=DaemonMetrics(), readiness=Readiness())


def _batch(run_id: str) -> Batch:
    return Batch(run_id=run_id, triggers=("schedule",), trigger="schedule", scope=None, first_change_at=None)


async def test_a_run_that_changes_something_leaves_its_report(tmp_path: Path, sandbox: Sandbox) -> None:
    root = tmp_path / "site"
    (root / "pages").mkdir(parents=True)
    (root / "pages/news.yaml").write_text(
        "name: News\nareas:\n  Main:\n    - type: content\n      value: {content: <p>First news.</p>}\n"
    )
    runner = _runner(root, sandbox, "reports")
    assert await runner(_batch("run1"))
    (report,) = (root / "reports").iterdir()
    assert report.name.endswith("-run1.html")
    assert report.stat().st_mode & 0o777 == 0o644
    assert read(report.read_text()).data["docs"] == ["<p>First news.</p>"]

    assert await runner(_batch("run2"))  # nothing left to change: no report
    assert [p.name for p in (root / "reports").iterdir()] == [report.name]


async def test_without_the_setting_no_report_is_written(tmp_path: Path, sandbox: Sandbox) -> None:
    root = tmp_path / "site"
    (root / "pages").mkdir(parents=True)
    (root / "pages/news.yaml").write_text("name: News\n")
    assert await _runner(root, sandbox, None)(_batch("run1"))
    assert sorted(p.name for p in root.iterdir()) == ["pages"]
