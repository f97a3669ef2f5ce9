"""The daemon's own settings are checked before it starts: watch mode, schedule, time zone, health address."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from cmssync.config import DaemonSettings
from cmssync.daemon.main import DaemonConfig, watch_mode
from cmssync.errors import ConfigError
from tests.support.daemon import REPO


@pytest.mark.parametrize(
    ("option", "setting", "mode"),
    [
        (None, True, "inotify"),
        (None, "poll", "poll"),
        (None, False, None),
        ("poll", True, "poll"),
        ("off", True, None),
        ("inotify", False, "inotify"),
    ],
)
def test_watch_mode(option: str | None, setting: bool | str, mode: str | None) -> None:
    assert watch_mode(option, setting) == mode


def test_defaults() -> None:
    config = DaemonConfig.from_settings(DaemonSettings(), None)
    assert config.watch == "inotify"
    assert (config.host, config.port) == ("127.0.0.1", 9090)
    assert set(config.triggers) == {"interval"}
    assert str(config.timezone) == "UTC"


def test_interval_and_cron_together() -> None:
    config = DaemonConfig.from_settings(
        DaemonSettings(interval=None, cron="0 3 * * 0", timezone="Europe/Berlin", health="0.0.0.0:0"), "off"
    )
    assert set(config.triggers) == {"cron"}
    assert config.watch is None


@pytest.mark.parametrize(
    ("settings", "message"),
    [
        (DaemonSettings(cron="0 3 * * 8"), "daemon.cron"),
        (DaemonSettings(timezone="Nowhere/Special"), "daemon.timezone"),
        (DaemonSettings(health="9090"), "daemon.health"),
        (DaemonSettings(interval=0), "daemon.interval"),
    ],
)
def test_bad_settings_are_config_errors(settings: DaemonSettings, message: str) -> None:
    with pytest.raises(ConfigError, match=message.replace(".", r"\.")):
        DaemonConfig.from_settings(settings, None)


def test_a_bad_cron_line_stops_the_start_with_a_clear_error(tmp_path: Path) -> None:
    (tmp_path / "cmssync.yaml").write_text(
        "site: {url: 'http://127.0.0.1:9'}\ndaemon: {cron: '0 3 * * 9', health: '127.0.0.1:0'}\n"
    )
    result = subprocess.run(
        [sys.executable, "-m", "cmssync", "daemon", str(tmp_path)],
        capture_output=True,
        text=True,
        timeout=30,
        cwd=REPO,
        check=False,
    )
    assert result.returncode == 1
    assert "daemon.cron '0 3 * * 9': day-of-week 9 is out of range 0-7 (0 and 7 are Sunday)" in result.stderr
