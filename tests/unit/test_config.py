from __future__ import annotations

import logging
from pathlib import Path

import pytest

from cmssync.config import load_settings, parse_duration
from cmssync.errors import ConfigError, ContentError

SECRET = "s3cr3t-Value-That-Must-Not-Leak"


def write(directory: Path, text: str) -> Path:
    (directory / "cmssync.yaml").write_text(text)
    return directory


def test_defaults_without_a_file(tmp_path: Path) -> None:
    settings = load_settings(tmp_path, secrets_dir=None)
    assert settings.site.api_prefix == "/ccm/api/1.0"
    assert settings.publish == "approve"
    assert settings.concurrency == "auto"
    assert settings.daemon.debounce == 1.0


def test_file_then_environment_wins(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    write(tmp_path, "site:\n  url: https://file.example.com/\nconcurrency: 4\n")
    assert load_settings(tmp_path, secrets_dir=None).site.url == "https://file.example.com"
    monkeypatch.setenv("CMSSYNC_URL", "https://env.example.com")
    monkeypatch.setenv("CMSSYNC_CONCURRENCY", "2")
    settings = load_settings(tmp_path, secrets_dir=None)
    assert settings.site.url == "https://env.example.com"
    assert settings.concurrency == 2


def test_secrets_dir_is_read_and_environment_wins(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    secrets = tmp_path / "secrets"
    secrets.mkdir()
    (secrets / "cmssync_client_secret").write_text("from-file")
    monkeypatch.delenv("CMSSYNC_CLIENT_SECRET", raising=False)
    secret = load_settings(None, secrets_dir=secrets).auth.client_secret
    assert secret is not None
    assert secret.get_secret_value() == "from-file"
    monkeypatch.setenv("CMSSYNC_CLIENT_SECRET", "from-env")
    secret = load_settings(None, secrets_dir=secrets).auth.client_secret
    assert secret is not None
    assert secret.get_secret_value() == "from-env"


def test_env_references_are_resolved(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("MY_SECRET", SECRET)
    monkeypatch.setenv("MY_USER", "editor")
    write(tmp_path, "auth:\n  username: ${env:MY_USER}\n  password: ${env:MY_SECRET}\n  client_id: a$${b}\n")
    settings = load_settings(tmp_path, secrets_dir=None)
    assert settings.auth.username == "editor"
    assert settings.auth.client_id == "a${b}"
    assert settings.auth.password is not None
    assert settings.auth.password.get_secret_value() == SECRET


def test_a_secret_never_prints(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("CMSSYNC_PASSWORD", SECRET)
    monkeypatch.setenv("CMSSYNC_CLIENT_SECRET", SECRET)
    settings = load_settings(tmp_path, secrets_dir=None)
    assert SECRET not in repr(settings)
    assert SECRET not in str(settings)
    assert SECRET not in settings.model_dump_json()


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("auth:\n  password: hunter22\n", "cmssync.yaml:2:13: auth.password: a secret must not be written"),
        ("auth:\n  grant: magic\n", "cmssync.yaml:2:10: auth.grant: 'magic' is not one of password"),
        ("sitee:\n  url: x\n", "cmssync.yaml:1:1: sitee: unknown setting 'sitee' (did you mean 'site'?)"),
        ("site:\n  url: ftp://x\n", "cmssync.yaml:2:8: site.url: site.url must be an absolute"),
        ("daemon:\n  debounce: soon\n", "cmssync.yaml:2:13: daemon.debounce: invalid duration"),
        ("site: [1, 2\n", "cmssync.yaml:2:1: invalid YAML"),
        (
            "a: &x [1]\nb: [*x, *x]\n",
            "cmssync.yaml:1:4: anchors and aliases (&name, *name) are not allowed in cmssync.yaml",
        ),
        ("- a\n- b\n", "cmssync.yaml:1:1: cmssync.yaml must be a mapping"),
    ],
)
def test_file_problems_are_located(tmp_path: Path, text: str, expected: str) -> None:
    write(tmp_path, text)
    with pytest.raises(ContentError) as caught:
        load_settings(tmp_path, secrets_dir=None)
    assert str(caught.value).startswith(expected), str(caught.value)


def test_an_unset_variable_leaves_the_setting_out(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("CMSSYNC_TEST_UNSET", raising=False)
    monkeypatch.delenv("CMSSYNC_PASSWORD", raising=False)
    write(tmp_path, "auth:\n  username: ${env:CMSSYNC_TEST_UNSET}\n  password: ${env:CMSSYNC_TEST_UNSET}\n")
    settings = load_settings(tmp_path, secrets_dir=None)
    assert settings.auth.username is None
    assert settings.auth.password is None


def test_all_file_problems_are_reported_at_once(tmp_path: Path) -> None:
    write(tmp_path, "auth:\n  password: literal\n  grant: magic\nconcurrency: 0\n")
    with pytest.raises(ContentError) as caught:
        load_settings(tmp_path, secrets_dir=None)
    assert len(caught.value.problems) == 3


def test_bad_environment_value_is_a_config_error(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("CMSSYNC_CONCURRENCY", "many")
    with pytest.raises(ConfigError, match="CMSSYNC_CONCURRENCY"):
        load_settings(None, secrets_dir=None)


@pytest.mark.parametrize(
    ("value", "seconds"), [("1s", 1.0), ("500ms", 0.5), ("10m", 600.0), ("1h", 3600.0), (5, 5.0), ("2.5", 2.5)]
)
def test_durations(value: object, seconds: float) -> None:
    assert parse_duration(value) == seconds


def test_a_secret_from_the_environment_never_reaches_logs_or_output(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    import structlog

    from cmssync.cli import main
    from cmssync.logs import configure_logging

    monkeypatch.setenv("CMSSYNC_PASSWORD", SECRET)
    settings = load_settings(tmp_path, secrets_dir=None)
    configure_logging(level=logging.DEBUG, json_lines=True)
    log = structlog.get_logger("test")
    log.info("settings loaded", settings=settings, password=SECRET, headers={"Authorization": f"Bearer {SECRET}"})
    log.info(f"token request sent: client_secret={SECRET}&grant_type=password")
    logging.getLogger("httpx").warning("Authorization: Bearer %s", SECRET)
    main(["--help"])
    captured = capsys.readouterr()
    assert SECRET not in captured.out + captured.err
    assert "(sensitive)" in captured.err
