"""End to end: ``cmssync apply`` against the sandbox with the state on a Terraform-style HTTP state server; the
lock between two runs (refused at once, or waited for with ``--lock-timeout``); ``cmssync force-unlock``; and the
same commands with the local state file."""

from __future__ import annotations

import json
import os
import threading
import time
from pathlib import Path

import pytest

from cmssync.config import StateSettings
from cmssync.emulator.embedded import Sandbox
from cmssync.state.backends import LocalStateBackend
from cmssync.state.http_backend import HttpStateBackend
from tests.reliability.cli import CliResult, run_cli
from tests.state.state_server import StateServer
from tests.support.sites import PASSWORDS, copy_example

KEY_HEX = "7a" * 32


@pytest.fixture
def site(tmp_path: Path, sandbox: Sandbox, server: StateServer, monkeypatch: pytest.MonkeyPatch) -> Path:
    """The example content, its settings naming the HTTP state server; credentials from the environment."""
    root = tmp_path / "site"
    copy_example(root)
    settings = (root / "cmssync.yaml").read_text(encoding="utf-8")
    state = server.settings(path=str(tmp_path / "work" / "state.json"))
    lines = "".join(f"  {key}: {value}\n" for key, value in state.items())
    (root / "cmssync.yaml").write_text(f"{settings.rstrip()}\nstate:\n{lines}", encoding="utf-8")
    for name, value in PASSWORDS.items():
        monkeypatch.setenv(name, value)
    monkeypatch.setenv("CMSSYNC_URL", sandbox.url)
    monkeypatch.setenv("CMSSYNC_CLIENT_ID", sandbox.client_id)
    monkeypatch.setenv("CMSSYNC_CLIENT_SECRET", sandbox.client_secret)
    monkeypatch.setenv("CMSSYNC_USERNAME", sandbox.admin_username)
    monkeypatch.setenv("CMSSYNC_PASSWORD", sandbox.admin_password)
    monkeypatch.setenv("CMSSYNC_TOKEN_STORE", str(tmp_path / "work" / "tokens.json"))
    monkeypatch.setenv("CMSSYNC_STATE_KEY", KEY_HEX)
    monkeypatch.delenv("CMSSYNC_STATE", raising=False)
    return root


def held_by_this_process(server: StateServer, tmp_path: Path) -> HttpStateBackend:
    chosen = StateSettings.model_validate(server.settings())
    return HttpStateBackend(chosen, key_path=tmp_path / "other.key", spool_path=tmp_path / "other.spool")


def test_apply_keeps_the_state_on_the_server(
    site: Path, server: StateServer, capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    applied = run_cli(capsys, "apply", "--yes", str(site))
    assert applied.code == 0, applied.text
    document = json.loads(server.documents["site"])
    assert "/about" in document["pages"]
    assert document["users"]  # the example's users, with keyed password digests …
    assert KEY_HEX not in server.documents["site"].decode()  # … whose key never travels with the state
    posts = server.requests("POST")
    assert 1 <= len(posts) <= 3, [seen.query for seen in posts]  # batched: not one request per change
    assert all(seen.query.get("ID") for seen in posts)  # every write under the run's lock id
    assert server.locks == {}
    assert not (tmp_path / "work" / "state.json").exists()  # the working path holds caches only
    assert not (tmp_path / "work" / "state.json.key").exists()  # the key came from CMSSYNC_STATE_KEY

    planned = run_cli(capsys, "plan", "--detailed-exitcode", str(site))
    assert planned.code == 0, planned.text  # the state read back from the server: nothing to do, passwords included


def test_a_held_lock_refuses_then_a_lock_timeout_waits_for_it(
    site: Path, server: StateServer, capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    other = held_by_this_process(server, tmp_path)
    with other.try_lock("cmssync apply") as holder:
        refused = run_cli(capsys, "apply", "--yes", str(site))
        unlock = run_cli(capsys, "force-unlock", holder.id, str(site), "--yes")
    assert refused.code == 1
    assert f"is locked by pid {os.getpid()} on host " in refused.err
    assert f"lock id {holder.id}" in refused.err
    assert f"`cmssync force-unlock {holder.id}`" in refused.err
    assert "site" not in server.documents  # nothing written
    assert unlock.code == 1
    assert "its holder is running on this host" in unlock.err

    released = threading.Event()

    def hold_then_release() -> None:
        with other.try_lock("cmssync apply"):
            released.wait(10)
            time.sleep(1.0)

    thread = threading.Thread(target=hold_then_release)
    thread.start()
    try:
        while "site" not in server.locks:
            time.sleep(0.01)
        released.set()
        started = time.monotonic()
        waited = run_cli(capsys, "apply", "--yes", "--lock-timeout", "30s", str(site))
    finally:
        released.set()
        thread.join()
    assert waited.code == 0, waited.text
    assert time.monotonic() - started > 0.5
    assert "/about" in json.loads(server.documents["site"])["pages"]


def test_force_unlock_from_the_command_line(
    site: Path, server: StateServer, capsys: pytest.CaptureFixture[str]
) -> None:
    server.locks["site"] = {"ID": "left-1", "Operation": "cmssync apply", "Who": "ci@gone-runner", "Info": "pid 77"}
    unconfirmed = run_cli(capsys, "force-unlock", "left-1", str(site))  # stdin is not a terminal here
    assert unconfirmed.code == 1
    assert "confirm with --yes" in unconfirmed.err
    assert server.locks["site"]["ID"] == "left-1"
    wrong = run_cli(capsys, "force-unlock", "left-2", str(site), "--yes")
    assert wrong.code == 1
    assert "under lock id left-1, not left-2" in wrong.err
    done = run_cli(capsys, "force-unlock", "left-1", str(site), "--yes")
    assert done.code == 0, done.text
    assert "released the lock left-1 of pid 77 on host gone-runner" in done.out
    assert server.locks == {}
    assert run_cli(capsys, "apply", "--yes", str(site)).code == 0


def test_a_bad_state_server_fails_the_apply_and_changes_nothing(
    site: Path, server: StateServer, capsys: pytest.CaptureFixture[str], sandbox: Sandbox
) -> None:
    server.documents["site"] = b"<html>Sign in</html>"
    result: CliResult = run_cli(capsys, "apply", "--yes", str(site))
    assert result.code == 1
    assert "the server's answer is not JSON" in result.err
    assert server.documents["site"] == b"<html>Sign in</html>"
    assert server.locks == {}  # the lock taken for the run was released
    assert server.requests("POST") == []


def test_local_state_lock_timeout_and_force_unlock(
    site: Path, capsys: pytest.CaptureFixture[str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    state_path = tmp_path / "local" / "state.json"
    monkeypatch.setenv("CMSSYNC_STATE", str(state_path))  # the string form wins over the file's mapping
    local = LocalStateBackend(state_path)
    assert "is not locked" in run_cli(capsys, "force-unlock", "x", str(site), "--yes").out
    with local.try_lock("cmssync apply") as holder:
        started = time.monotonic()
        refused = run_cli(capsys, "apply", "--yes", "--lock-timeout", "1s", str(site))
        unlock = run_cli(capsys, "force-unlock", holder.id, str(site), "--yes")
    assert refused.code == 1
    assert time.monotonic() - started >= 1.0
    assert "(waited 1 s for it: --lock-timeout)" in refused.err
    assert f"lock id {holder.id}" in refused.err
    assert unlock.code == 1
    assert "its holder is running on this host" in unlock.err
    assert run_cli(capsys, "apply", "--yes", str(site)).code == 0
    assert "/about" in json.loads(state_path.read_text())["pages"]
