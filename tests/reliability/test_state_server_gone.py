"""A state server gone at the end of a run (issue 29 item 11): the final upload and the unlock both fail. The run's
summary is still printed, the error names where the records were kept (the spool) and says the lock was not
released; exit 1.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from cmssync.emulator.embedded import Sandbox
from tests.reliability.cli import run_cli
from tests.reliability.sites import state_server_site
from tests.state.state_server import Scripted, StateServer
from tests.support.reliability_report import ReliabilityReport


@pytest.mark.parametrize("output", ["text", "json"])
def test_a_state_server_gone_at_the_end_leaves_the_summary_and_the_spool_named(
    output: str,
    tmp_path: Path,
    sandbox: Sandbox,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
    reliability_report: ReliabilityReport,
) -> None:
    with StateServer() as server:
        root = state_server_site(
            tmp_path / "site", sandbox, server.settings(save_interval="1h"), monkeypatch, page="server-gone"
        )
        gone = b"<html><body>503 Service Unavailable</body></html>"
        server.script += [Scripted("POST", 503, gone)] * 3 + [Scripted("UNLOCK", 503, gone)] * 3

        result = run_cli(capsys, "apply", "--yes", "--format", output, str(root))

    reliability_report.add(cases_tried=1, faults_injected=6)
    assert result.code == 1, result.text
    assert "Traceback" not in result.text
    assert "1 succeeded" in result.out or '"ok": 1' in result.out, result.text
    assert "the state was not saved at the end" in result.text
    assert "the records of this run are kept in" in result.text
    assert "state.json.spool" in result.text
    assert "the lock was not released either" in result.text
