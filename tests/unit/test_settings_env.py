"""Every setting from the environment (nested names), the short names of design.md, and ``--config FILE``."""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

import pytest

from cmssync.cli import main
from cmssync.config import CONFIG_VARIABLE, Settings, load_settings
from cmssync.errors import ConfigError, ContentError
from cmssync.settings_env import setting_paths, variable_name


@pytest.fixture(autouse=True)
def no_config_variable(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    monkeypatch.delenv(CONFIG_VARIABLE, raising=False)
    yield
    # --config sets the variable for the process (so the daemon and every loader see it); undo it per test, not
    # through monkeypatch, which would restore the value it found at teardown.
    os.environ.pop(CONFIG_VARIABLE, None)


def test_nested_variables_set_every_kind_of_setting(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    (tmp_path / "cmssync.yaml").write_text("prune:\n  enabled: true\n  max_deletes: 3\nprotect:\n  users: [boss]\n")
    monkeypatch.setenv("CMSSYNC_PRUNE__MAX_DELETES", "5")
    monkeypatch.setenv("CMSSYNC_PROTECT__PAGES", '["/", "/legal"]')
    monkeypatch.setenv("CMSSYNC_DAEMON__INTERVAL", "1h")
    monkeypatch.setenv("CMSSYNC_DAEMON__NOTIFY", '[{"url": "https://hooks.example.com/x", "format": "slack"}]')
    monkeypatch.setenv("CMSSYNC_FOLDERS", '{"images": 12}')
    monkeypatch.setenv("cmssync_versions__keep", "3")  # names are not case-sensitive
    settings = load_settings(tmp_path, secrets_dir=None)
    assert settings.prune.enabled is True  # from the file: a variable of one key leaves the others alone
    assert settings.prune.max_deletes == 5
    assert settings.protect.pages == ["/", "/legal"]
    assert settings.protect.users == ["boss"]
    assert settings.daemon.interval == 3600.0
    assert settings.daemon.notify[0].format == "slack"
    assert settings.folders == {"/images": 12}
    assert settings.versions.keep == 3


def test_short_names_keep_working_and_the_nested_name_wins(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("CMSSYNC_URL", "https://short.example.com")
    monkeypatch.setenv("CMSSYNC_HEALTH", "0.0.0.0:9090")
    monkeypatch.setenv("CMSSYNC_PASSWORD", "from-short-name")
    settings = load_settings(None, secrets_dir=None)
    assert (settings.site.url, settings.daemon.health) == ("https://short.example.com", "0.0.0.0:9090")
    monkeypatch.setenv("CMSSYNC_SITE__URL", "https://nested.example.com")
    monkeypatch.setenv("CMSSYNC_AUTH__PASSWORD", "from-nested-name")
    settings = load_settings(None, secrets_dir=None)
    assert settings.site.url == "https://nested.example.com"
    assert settings.auth.password is not None
    assert settings.auth.password.get_secret_value() == "from-nested-name"


@pytest.mark.parametrize(
    ("name", "value", "message"),
    [
        ("CMSSYNC_PRUNE__MAX_DELTES", "5", r"CMSSYNC_PRUNE__MAX_DELTES \(did you mean CMSSYNC_PRUNE__MAX_DELETES\?\)"),
        ("CMSSYNC_TIMOUT", "5", r"unknown environment variable CMSSYNC_TIMOUT \(did you mean CMSSYNC_TIMEOUT\?\)"),
        ("CMSSYNC_CONCURRENCY", "lots", "CMSSYNC_CONCURRENCY: "),
        ("CMSSYNC_PRUNE__MAX_DELETES", "many", "CMSSYNC_PRUNE__MAX_DELETES: Input should be a valid integer"),
        ("CMSSYNC_PROTECT__PAGES", "/legal", "lists and mappings are written as JSON"),
    ],
)
def test_a_bad_variable_is_named(name: str, value: str, message: str, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(name, value)
    with pytest.raises(ConfigError, match=message):
        load_settings(None, secrets_dir=None)


def test_a_bad_value_of_a_top_level_variable_is_refused(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("CMSSYNC_TIMEOUT", "soon")
    with pytest.raises(ConfigError, match=r"timeout \(CMSSYNC_TIMEOUT\): invalid duration"):
        load_settings(None, secrets_dir=None)


def test_a_variable_the_settings_file_references_is_the_users(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """``${env:CMSSYNC_WEBHOOK_URL}`` in cmssync.yaml (docs/daemon.md) is a name the user chose: not refused."""
    (tmp_path / "cmssync.yaml").write_text("daemon:\n  notify:\n    - url: ${env:CMSSYNC_WEBHOOK_URL}\n")
    monkeypatch.setenv("CMSSYNC_WEBHOOK_URL", "https://hooks.example.com/x")
    assert load_settings(tmp_path, secrets_dir=None).daemon.notify[0].url.get_secret_value().endswith("/x")
    monkeypatch.setenv("CMSSYNC_WEBHOK_SECRET", "x")
    with pytest.raises(ConfigError, match="unknown environment variable CMSSYNC_WEBHOK_SECRET"):
        load_settings(tmp_path, secrets_dir=None)


def test_every_setting_has_a_variable_that_sets_it(monkeypatch: pytest.MonkeyPatch) -> None:
    """One variable per leaf setting, each read back where it belongs (a section added later is covered too)."""
    samples = {
        "site.url": ("https://x.example.com", "https://x.example.com"),
        "site.api_prefix": ("/cms/api/1.0", "/cms/api/1.0"),
        "auth.grant": ("client_credentials", "client_credentials"),
        "auth.scopes": ('["system"]', ["system"]),
        "state": ("/var/state.json", "/var/state.json"),
        "publish": ("draft", "draft"),
        "concurrency": ("3", 3),
        "timeout": ("5s", 5.0),
        "existing_pages": ('["/blog"]', ["/blog"]),
        "daemon.watch": ("poll", "poll"),
        "daemon.debounce": ("250ms", 0.25),
        "daemon.cron": ("@daily", "@daily"),
        "daemon.mode": ("report", "report"),
        "daemon.reports": ("reports", "reports"),
        "prune.max_fraction": ("0.5", 0.5),
    }
    leaves = [path for path, field in setting_paths(Settings) if not _is_section(field)]
    assert len(leaves) >= 30
    for path in leaves:
        dotted = ".".join(path)
        if dotted not in samples:
            continue
        raw, expected = samples[dotted]
        monkeypatch.setenv(variable_name(path), raw)
        value: object = load_settings(None, secrets_dir=None)
        for part in path:
            value = getattr(value, part)
        if hasattr(value, "get_secret_value"):
            value = value.get_secret_value()
        assert value == expected, dotted
        monkeypatch.delenv(variable_name(path))


def _is_section(field: object) -> bool:
    from cmssync.settings_env import section_model

    return section_model(field) is not None  # type: ignore[arg-type]


def test_config_names_a_settings_file_elsewhere(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    content = tmp_path / "site"
    (content / "pages").mkdir(parents=True)
    (content / "pages" / "about.yaml").write_text("name: About\n")
    elsewhere = tmp_path / "ops" / "production.yaml"
    elsewhere.parent.mkdir()
    elsewhere.write_text("site:\n  url: https://prod.example.com\nprune:\n  max_deletes: lots\n")
    # After the command, as a global flag: the file is read (its invalid value is reported at its place) …
    assert main(["validate", str(content), "--config", str(elsewhere)]) == 1
    assert f"{elsewhere}:4:16: prune.max_deletes" in capsys.readouterr().err
    elsewhere.write_text("site:\n  url: https://prod.example.com\nprune:\n  max_deletes: 2\n")
    assert main(["validate", str(content), "--config", str(elsewhere)]) == 0
    assert "valid" in capsys.readouterr().out
    # … and the flag ends with the command: the next one in the same process reads no file elsewhere.
    assert CONFIG_VARIABLE not in os.environ


def test_problems_in_a_config_file_name_its_path(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    elsewhere = tmp_path / "production.yaml"
    elsewhere.write_text("prune:\n  max_deletes: lots\n")
    monkeypatch.setenv(CONFIG_VARIABLE, str(elsewhere))
    with pytest.raises(ContentError) as caught:
        load_settings(tmp_path, secrets_dir=None)
    assert str(caught.value.problems[0]).startswith(f"{elsewhere}:2:16: prune.max_deletes")


def test_a_missing_config_file(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(CONFIG_VARIABLE, str(tmp_path / "nope.yaml"))
    with pytest.raises(ConfigError, match=r"nope.yaml \(--config or CMSSYNC_CONFIG\) does not exist"):
        load_settings(tmp_path, secrets_dir=None)
    # On the command line the option checks the file itself: a usage error, exit 1.
    monkeypatch.delenv(CONFIG_VARIABLE)
    assert main(["--config", str(tmp_path / "nope.yaml"), "validate", str(tmp_path)]) == 1


def test_a_receiver_url_in_the_environment_is_expanded_and_its_errors_name_the_variable(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Issue 36: ``${env:NAME}`` in a variable's value stayed as written, and an error named
    ``CMSSYNC_DAEMON__NOTIFY__URL``, a variable that does not exist."""
    monkeypatch.setenv("SLACK_HOOK", "https://hooks.example.com/services/T0/B0/secret")
    monkeypatch.setenv("CMSSYNC_DAEMON__NOTIFY", '[{"url": "${env:SLACK_HOOK}", "format": "slack"}]')
    settings = load_settings(tmp_path, secrets_dir=None)
    url = settings.daemon.notify[0].url
    assert url is not None
    assert url.get_secret_value() == "https://hooks.example.com/services/T0/B0/secret"
    monkeypatch.setenv("CMSSYNC_DAEMON__NOTIFY", '[{"url": "https://ok.example/x"}, {"url": "hooks.example/x"}]')
    with pytest.raises(ConfigError, match=r"CMSSYNC_DAEMON__NOTIFY \(item 2, url\): .*absolute http\(s\) URL") as found:
        load_settings(tmp_path, secrets_dir=None)
    assert "NOTIFY__URL" not in str(found.value)
    monkeypatch.setenv("CMSSYNC_DAEMON__NOTIFY", '[{"url": "${env:NOT_SET_ANYWHERE}"}]')
    with pytest.raises(ConfigError, match=r"CMSSYNC_DAEMON__NOTIFY: \$\{env:NOT_SET_ANYWHERE\} names a variable"):
        load_settings(tmp_path, secrets_dir=None)
