"""``cmssync status`` sees a flaky site through: under 30% 429s, 20% 503s and 10% dropped connections it still
reports the site healthy and the drift, in 5 runs of 5 (issue 18's done-when), and a site that is down fails."""

from __future__ import annotations

import dataclasses
import io
from pathlib import Path

import pytest

import cmssync.api.client
import cmssync.commands.status
import cmssync.sync.diagnose
from cmssync.api.client import PROBE_WAITS
from cmssync.commands.status import run_status
from cmssync.emulator.embedded import Sandbox
from cmssync.sync.diagnose import PATIENT
from tests.support.reliability_report import ReliabilityReport
from tests.support.sites import PASSWORDS, Site, copy_example

FAULTS = ["429:0.3", "503:0.2", "drop:0.1"]


@pytest.fixture(autouse=True)
def _no_waits(monkeypatch: pytest.MonkeyPatch) -> None:
    """The same number of attempts as ``status`` makes, without the waits between them."""
    fast = dataclasses.replace(PATIENT, wait_initial=0.0, wait_max=0.0, wait_jitter=0.0, retry_after_max=0.0)
    monkeypatch.setattr(cmssync.commands.status, "PATIENT", fast)
    monkeypatch.setattr(cmssync.api.client, "PROBE_WAITS", (0.0,) * len(PROBE_WAITS))


async def test_status_converges_under_heavy_faults(
    tmp_path: Path, sandbox: Sandbox, monkeypatch: pytest.MonkeyPatch, reliability_report: ReliabilityReport
) -> None:
    for name, value in PASSWORDS.items():
        monkeypatch.setenv(name, value)
    converged = 0
    for run in range(5):
        root = tmp_path / f"run{run}" / "site"
        copy_example(root)
        sandbox.set_faults(FAULTS)
        out = io.StringIO()
        try:
            code = await run_status(root, out=out, overrides=Site(root, sandbox).overrides())
        finally:
            sandbox.set_faults([])
        reliability_report.add(cases_tried=1)
        assert code == 0, out.getvalue()
        assert "status:    ok" in out.getvalue()
        assert "drift:     Plan: 10 to create" in out.getvalue()
        converged += 1
    assert converged == 5


async def test_a_site_that_is_down_fails_status(tmp_path: Path, sandbox: Sandbox) -> None:
    root = tmp_path / "site"
    copy_example(root)
    sandbox.set_faults(["503:1"])
    out = io.StringIO()
    try:
        code = await run_status(root, out=out, overrides=Site(root, sandbox).overrides())
    finally:
        sandbox.set_faults([])
    assert code == 1
    assert "problem:" in out.getvalue()
