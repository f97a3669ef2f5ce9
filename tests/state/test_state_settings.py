"""The ``state`` setting: the string form is still a local file (``CMSSYNC_STATE`` too), the mapping form picks a
backend, secrets stay out of ``cmssync.yaml``, and the lock timeout comes from the setting, its variable or the
command line (the daemon's included)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from cmssync.cli import main
from cmssync.config import load_settings
from cmssync.errors import ConfigError, ContentError
from cmssync.secrets import mask_secrets
from cmssync.state.backends import LocalStateBackend, open_state_backend
from cmssync.state.http_backend import HttpStateBackend
from cmssync.state.keyring import key_from_environment

ADDRESS = "https://gitlab.example.com/api/v4/projects/1/terraform/state/site"


def settings_file(tmp_path: Path, text: str) -> Path:
    (tmp_path / "cmssync.yaml").write_text(text, encoding="utf-8")
    return tmp_path


@pytest.fixture(autouse=True)
def clean_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in ("CMSSYNC_STATE", "CMSSYNC_LOCK_TIMEOUT", "CMSSYNC_STATE_KEY", "CMSSYNC_CONFIG"):
        monkeypatch.delenv(name, raising=False)


def test_the_string_form_is_a_local_file_as_before(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    directory = settings_file(tmp_path, "state: custom/state.json\n")
    backend = open_state_backend(load_settings(directory), directory)
    assert isinstance(backend, LocalStateBackend)
    assert backend.path == directory / "custom" / "state.json"
    assert backend.lock_timeout == 0
    monkeypatch.setenv("CMSSYNC_STATE", "/srv/state.json")
    assert open_state_backend(load_settings(directory), directory).location == "/srv/state.json"


def test_the_mapping_form_picks_the_http_backend(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("STATE_TOKEN", "glpat-abcdef123456")
    directory = settings_file(
        tmp_path,
        f"state:\n  address: {ADDRESS}\n  lock_address: {ADDRESS}/lock\n  password: ${{env:STATE_TOKEN}}\n"
        "  lock_method: POST\n  unlock_method: DELETE\nlock_timeout: 2m\n",
    )
    settings = load_settings(directory)
    backend = open_state_backend(settings, directory)
    assert isinstance(backend, HttpStateBackend)  # backend: http implied by address
    assert backend.unlock_address == f"{ADDRESS}/lock"  # defaults to lock_address
    assert backend.lock_timeout == 120
    assert backend.spool.path == directory / ".cmssync" / "state.json.spool"
    assert "glpat-abcdef123456" not in mask_secrets("token glpat-abcdef123456")  # registered as a secret
    assert open_state_backend(settings, directory, lock_timeout=5).lock_timeout == 5  # --lock-timeout wins
    monkeypatch.setenv("CMSSYNC_STATE", "/srv/state.json")  # the string form from the environment wins: local
    assert isinstance(open_state_backend(load_settings(directory), directory), LocalStateBackend)


def test_state_settings_from_nested_variables(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    directory = settings_file(tmp_path, "publish: approve\n")
    monkeypatch.setenv("CMSSYNC_STATE__ADDRESS", ADDRESS)
    monkeypatch.setenv("CMSSYNC_STATE__SAVE_INTERVAL", "30s")
    monkeypatch.setenv("CMSSYNC_LOCK_TIMEOUT", "10m")
    backend = open_state_backend(load_settings(directory), directory)
    assert isinstance(backend, HttpStateBackend)
    assert (backend.save_interval, backend.lock_timeout) == (30, 600)


@pytest.mark.parametrize(
    ("text", "message"),
    [
        (
            "state:\n  backend: http\n",
            "cmssync.yaml:2:3: state: state.address is required for backend http",
        ),
        (
            f"state:\n  address: {ADDRESS}\n  password: literal-token\n",
            "use ${env:NAME} or the CMSSYNC_STATE__PASSWORD",
        ),
        ("state:\n  address: ftp://x/y\n", "state.address must be an absolute http(s) URL"),
        ("state:\n  path: a.json\n  adress: x\n", "cmssync.yaml:3:3: state.adress: unknown setting 'adress'"),
        ("state: 3\n", "state is a file path, postgresql://…, or a mapping such as {backend: http, address: …}"),
        ("lock_timeout: soon\n", "invalid duration 'soon'"),
    ],
)
def test_bad_state_settings_are_located(tmp_path: Path, text: str, message: str) -> None:
    with pytest.raises(ContentError) as caught:
        load_settings(settings_file(tmp_path, text))
    assert message in str(caught.value) + "".join(str(problem) for problem in caught.value.problems)


@pytest.mark.parametrize(("value", "reason"), [("not-hex", "is not hex"), ("abcd", "is too short")])
def test_a_bad_state_key_is_named_never_quoted(monkeypatch: pytest.MonkeyPatch, value: str, reason: str) -> None:
    monkeypatch.setenv("CMSSYNC_STATE_KEY", value)
    with pytest.raises(ConfigError, match=f"CMSSYNC_STATE_KEY {reason}") as caught:
        key_from_environment()
    assert value not in str(caught.value)


def test_the_daemon_passes_lock_timeout_to_every_run(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    seen: dict[str, Any] = {}

    def fake_daemon(directory: Path, **options: Any) -> int:
        seen["timeout"] = load_settings(directory).lock_timeout  # what each run's workspace reads
        return 0

    monkeypatch.setattr("cmssync.daemon.main.run_daemon", fake_daemon)
    monkeypatch.setenv("CMSSYNC_LOCK_TIMEOUT", "1s")  # restored after the test (the option overwrites it)
    assert main(["daemon", str(settings_file(tmp_path, "publish: approve\n")), "--lock-timeout", "90s"]) == 0
    assert seen["timeout"] == 90
    assert main(["apply", str(tmp_path), "--lock-timeout", "later"]) == 1
    assert "invalid duration 'later'" in capsys.readouterr().err
