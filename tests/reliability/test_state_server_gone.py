"""A state server gone at the end of a run (issue 29 item 11): the final upload and the unlock both fail. The run's
summary is still printed, the error names where the records were kept (the spool) and says the lock was not
released; exit 1.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from cmssync.emulator.embedded import Sandbox
from cmssync.state import http_backend
from tests.reliability.cli import run_cli
from tests.reliability.conftest import ReliabilityReport
from tests.reliability.sites import write_settings
from tests.state.state_server import Scripted, StateServer
from tests.support.sites import sandbox_environment


@pytest.mark.parametrize("output", ["text", "json"])
def test_a_state_server_gone_at_the_end_leaves_the_summary_and_the_spool_named(
    output: str,
    tmp_path: Path,
    sandbox: Sandbox,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
    reliability_report: ReliabilityReport,
) -> None:
    monkeypatch.setattr(http_backend, "_RETRY_WAITS", (0.0, 0.0))
    root = tmp_path / "site"
    (root / "pages").mkdir(parents=True)
    (root / "pages" / "server-gone.yaml").write_text("name: Server gone\n", encoding="utf-8")
    with StateServer() as server:
        write_settings(root, state=server.settings(save_interval="1h"))
        for name, value in sandbox_environment(sandbox, tmp_path / "unused.json").items():
            if name != "CMSSYNC_STATE":
                monkeypatch.setenv(name, value)
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
