"""Every exit path of the command line and its code (docs/ci.md has the table), through ``cmssync.cli.main`` as a
pipeline runs it, against the sandbox; settings come from the environment as in CI.

0: success / no changes; 2: changes (only with ``--detailed-exitcode``); 1: any error, usage errors included;
130: interrupted. Rows pinned elsewhere: Ctrl-C (tests/unit/test_cli.py), usage errors (the same file), SIGTERM
during apply (tests/reliability/test_bounded_actions.py), ``status --detailed-exitcode`` (tests/e2e/test_status.py),
a declined prompt (tests/e2e/test_progress.py).
"""

from __future__ import annotations

import dataclasses
import os
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest

from cmssync.cli import main
from cmssync.config import CONFIG_VARIABLE
from cmssync.emulator.embedded import Sandbox
from cmssync.state.store import StateStore
from cmssync.sync.diagnose import PATIENT
from tests.support.sites import PASSWORDS, copy_example, sandbox_environment


@pytest.fixture
def site(tmp_path: Path, sandbox: Sandbox, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A copy of the example content; the site, credentials and state come from ``CMSSYNC_*`` variables."""
    root = tmp_path / "site"
    copy_example(root)
    for name, value in {
        **PASSWORDS,
        **sandbox_environment(sandbox, tmp_path / "state" / "state.json"),
        "CMSSYNC_TOKEN_STORE": str(tmp_path / "state" / "tokens.json"),
    }.items():
        monkeypatch.setenv(name, value)
    monkeypatch.delenv(CONFIG_VARIABLE, raising=False)
    return root


def run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    code = main(list(argv))
    captured = capsys.readouterr()
    return code, captured.out, captured.err


def test_success_and_changes(site: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert run(capsys, "validate", str(site))[0] == 0
    assert run(capsys, "plan", str(site))[0] == 0  # changes, but no --detailed-exitcode
    assert run(capsys, "plan", str(site), "--detailed-exitcode")[0] == 2
    assert run(capsys, "apply", str(site), "--yes")[0] == 0
    assert run(capsys, "plan", str(site), "--detailed-exitcode")[0] == 0  # no changes
    assert run(capsys, "status", str(site), "--detailed-exitcode")[0] == 0
    assert run(capsys, "--version")[0] == 0
    assert run(capsys, "schema", "--kind", "settings")[0] == 0


def test_invalid_content_exits_1(site: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (site / "pages" / "broken.yaml").write_text("name: [unclosed\n")
    for argv in (["validate", str(site)], ["plan", str(site)], ["apply", str(site), "--yes"]):
        code, _, err = run(capsys, *argv)
        assert code == 1, argv
        assert "pages/broken.yaml:" in err


def test_settings_errors_exit_1(
    site: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("CMSSYNC_PRUNE__MAX_DELTES", "3")
    code, _, err = run(capsys, "plan", str(site))
    assert code == 1
    assert err.startswith(
        "error: unknown environment variable CMSSYNC_PRUNE__MAX_DELTES (did you mean CMSSYNC_PRUNE__MAX_DELETES?)"
    )


def test_site_errors_exit_1(site: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("CMSSYNC_PASSWORD", "not-the-password")
    code, _, err = run(capsys, "plan", str(site))
    assert code == 1
    assert err.startswith("error: ")
    monkeypatch.setenv("CMSSYNC_URL", f"http://127.0.0.1:{_free_port()}")
    # status is patient with a site it cannot reach (~15 s of tries, pinned in tests/reliability/test_status_faults.py):
    # the exit code is the same after one try.
    monkeypatch.setattr("cmssync.api.client.PROBE_WAITS", ())
    monkeypatch.setattr("cmssync.commands.status.PATIENT", dataclasses.replace(PATIENT, attempts=1))
    assert run(capsys, "status", str(site))[0] == 1


def test_no_confirmation_exits_1_before_writing(site: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, _, err = run(capsys, "apply", str(site))  # no --yes, and no terminal to ask on
    assert code == 1
    assert "refusing to apply without confirmation" in err
    assert run(capsys, "plan", str(site), "--detailed-exitcode")[0] == 2  # nothing was written


def test_a_stale_plan_file_exits_1(site: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    plan_file = tmp_path / "plan.json"
    assert run(capsys, "plan", str(site), "-o", str(plan_file))[0] == 0
    about = site / "pages" / "about.yaml"
    about.write_text(about.read_text().replace("About us", "About the team"))
    code, _, err = run(capsys, "apply", str(site), str(plan_file))
    assert code == 1
    assert "stale" in err
    assert run(capsys, "show", str(about))[0] == 1  # not a plan file


def test_an_unmatched_target_exits_1(site: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, _, err = run(capsys, "plan", str(site), "--target", "page:/no-such-page", "--detailed-exitcode")
    assert code == 1
    assert "page:/no-such-page" in err


def test_a_locked_state_exits_1(site: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    store = StateStore(tmp_path / "state" / "state.json")
    with store.lock("another cmssync apply"):
        code, _, err = run(capsys, "apply", str(site), "--yes")
    assert code == 1
    assert "another cmssync apply" in err


def test_a_failed_action_exits_1(site: Path, sandbox: Sandbox, capsys: pytest.CaptureFixture[str]) -> None:
    assert run(capsys, "apply", str(site), "--yes")[0] == 0
    about = site / "pages" / "about.yaml"
    about.write_text(about.read_text().replace("About us", "About the team"))
    sandbox.set_faults(["500:1:method=PUT"])
    code, out, _ = run(capsys, "apply", str(site), "--yes")
    assert code == 1
    assert "Apply failed:" in out


def test_blocked_deletes_are_changes(
    site: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    assert run(capsys, "apply", str(site), "--yes")[0] == 0
    (site / "pages" / "contact.yaml").unlink()
    monkeypatch.setenv("CMSSYNC_PRUNE__MAX_DELETES", "0")
    code, out, _ = run(capsys, "plan", str(site), "--prune", "--detailed-exitcode")
    assert code == 2
    assert "deletes blocked" in out


def test_an_os_error_exits_1(site: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (tmp_path / "a-file").write_text("")
    code, _, err = run(capsys, "plan", str(site), "-o", str(tmp_path / "a-file" / "plan.json"))
    assert code == 1
    assert err.splitlines()[-1].startswith("error: ")


def test_the_daemon_exits_0_on_sigterm_and_1_when_it_cannot_start(site: Path, tmp_path: Path) -> None:
    env = {**os.environ, "CMSSYNC_HEALTH": "127.0.0.1:0"}
    with subprocess.Popen(
        [sys.executable, "-m", "cmssync", "--log-format", "json", "daemon", str(site), "--watch", "off"],
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
    ) as process:
        assert process.stderr is not None
        deadline = time.monotonic() + 60
        for line in process.stderr:
            if '"run finished"' in line or time.monotonic() > deadline:
                break
        process.send_signal(signal.SIGTERM)
        process.stderr.read()
        assert process.wait(timeout=60) == 0

    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        busy = {**os.environ, "CMSSYNC_HEALTH": f"127.0.0.1:{taken.getsockname()[1]}"}
        result = subprocess.run(
            [sys.executable, "-m", "cmssync", "daemon", str(site), "--watch", "off"],
            env=busy,
            capture_output=True,
            text=True,
            timeout=60,
            check=False,
        )
    assert result.returncode == 1, result.stderr[-2000:]


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])
