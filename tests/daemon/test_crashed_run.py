"""A daemon run that crashes (a bug: any exception that is not a cmssync error) is a failed run where runs are
watched: ``/healthz`` says failing with the crash as its reason, and ``on_finished`` hears of it (issue 29 item 8:
``/healthz`` stayed "ready" while every run crashed)."""

from __future__ import annotations

from pathlib import Path

import pytest

import cmssync.daemon.runner
from cmssync.daemon.gate import RequestGate
from cmssync.daemon.health import Readiness
from cmssync.daemon.metrics import DaemonMetrics
from cmssync.daemon.reconciler import Batch
from cmssync.daemon.runner import DaemonSite, RunRecord, SyncRunner


async def test_a_crashed_run_marks_readiness_failing(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    def crash(*args: object, **kwargs: object) -> None:
        raise ValueError("Exceeds the limit (4300 digits) for integer string conversion")

    monkeypatch.setattr(cmssync.daemon.runner, "open_workspace", crash)
    readiness = Readiness()
    readiness.ready({"run_id": "before"})
    finished: list[RunRecord] = []
    runner = SyncRunner(
        DaemonSite(tmp_path, {}, RequestGate()),
        metrics=DaemonMetrics(),
        readiness=readiness,
        on_finished=lambda batch, record: finished.append(record),
    )
    batch = Batch(run_id="r1", triggers=("schedule",), trigger="schedule", scope=None, first_change_at=None)

    with pytest.raises(ValueError, match="4300 digits"):
        await runner(batch)

    document = readiness.document()
    assert document["status"] == "failing"
    assert document["reason"].startswith("run crashed: ValueError: Exceeds the limit")
    assert document["last_run"]["run_id"] == "r1"
    assert [(record.result, record.reason[:24]) for record in finished] == [("failure", "run crashed: ValueError:")]
