"""Global flags before or after the command, shell completion, and the generated settings reference."""

from __future__ import annotations

import json
import logging
import os
import subprocess
import sys
from pathlib import Path

import pytest
from pydantic import BaseModel

from cmssync.cli import cli, main
from cmssync.config import CONFIG_VARIABLE, Settings
from cmssync.content.schema import schema_for
from cmssync.content.settings_reference import settings_reference
from cmssync.errors import ConfigError
from cmssync.settings_env import section_model, setting_paths

REPO = Path(__file__).resolve().parents[2]


@pytest.fixture(autouse=True)
def restore_logging(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv(CONFIG_VARIABLE, raising=False)
    monkeypatch.setattr(logging.getLogger(), "level", logging.getLogger().level)


@pytest.mark.parametrize("argv", [["--debug", "schema"], ["schema", "--debug"]])
def test_debug_before_or_after_the_command(argv: list[str], monkeypatch: pytest.MonkeyPatch) -> None:
    def broken(**_: object) -> None:
        assert logging.getLogger().level == logging.DEBUG
        raise ConfigError("boom")

    monkeypatch.setattr(cli.commands["schema"], "callback", broken)
    with pytest.raises(ConfigError, match="boom"):  # --debug shows the traceback wherever it was given
        main(argv)


@pytest.mark.parametrize("argv", [["--quiet", "schema"], ["schema", "-q"]])
def test_quiet_logs_only_warnings(argv: list[str], monkeypatch: pytest.MonkeyPatch) -> None:
    seen: list[int] = []
    monkeypatch.setattr(cli.commands["schema"], "callback", lambda **_: seen.append(logging.getLogger().level))
    assert main(argv) == 0
    assert seen == [logging.WARNING]


def test_log_format_after_the_command(capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch) -> None:
    def logs(**_: object) -> None:
        logging.getLogger("cmssync.test").warning("hello %s", "there")

    monkeypatch.setattr(cli.commands["schema"], "callback", logs)
    assert main(["schema", "--log-format", "json"]) == 0
    line = capsys.readouterr().err.strip().splitlines()[-1]
    assert json.loads(line)["event"] == "hello there"


def test_every_command_takes_the_global_flags() -> None:
    for name, command in cli.commands.items():
        options = {opt for param in command.params for opt in getattr(param, "opts", [])}
        assert {"--debug", "--log-format", "--config", "--no-color", "--quiet"} <= options, name


def test_shell_completion_script_and_answers() -> None:
    env = {**os.environ, "_CMSSYNC_COMPLETE": "bash_source"}
    script = subprocess.run(
        [sys.executable, "-m", "cmssync"], env=env, capture_output=True, text=True, timeout=60, check=False
    )
    assert "_cmssync_completion" in script.stdout
    env = {**os.environ, "_CMSSYNC_COMPLETE": "bash_complete", "COMP_WORDS": "cmssync pl", "COMP_CWORD": "1"}
    answer = subprocess.run(
        [sys.executable, "-m", "cmssync"], env=env, capture_output=True, text=True, timeout=60, check=False
    )
    assert "plain,plan" in answer.stdout.splitlines()


def test_the_settings_reference_is_up_to_date() -> None:
    """docs/settings.md is generated: regenerate it with
    ``cmssync schema --kind settings --format markdown > docs/settings.md``."""
    assert (REPO / "docs" / "settings.md").read_text() == settings_reference()


def test_every_setting_is_described_and_documented() -> None:
    reference = settings_reference()
    schema = schema_for("settings")
    definitions = schema["$defs"]
    for path, field in setting_paths(Settings):
        dotted = ".".join(path)
        # Field docstrings become descriptions when a schema is generated (cmssync.config.values), not at import.
        owner: type[BaseModel] = Settings
        for part in path[:-1]:
            section = section_model(owner.model_fields[part])
            assert section is not None
            owner = section
        properties = schema["properties"] if owner is Settings else definitions[owner.__name__]["properties"]
        assert properties[path[-1]].get("description"), f"{dotted} has no docstring"
        if section_model(field) is None:
            assert f"| `{dotted}` |" in reference, dotted
    for name, prop in definitions["NotifySettings"]["properties"].items():
        assert prop.get("description"), f"daemon.notify[].{name}"


def test_schema_markdown_needs_the_settings_kind(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["schema", "--format", "markdown"]) == 1
    assert "add --kind settings" in capsys.readouterr().err


@pytest.mark.parametrize("argv", [["--no-color", "schema"], ["schema", "--no-color"]])
def test_no_color_before_or_after_the_command(argv: list[str], monkeypatch: pytest.MonkeyPatch) -> None:
    from cmssync import cli as cli_module

    monkeypatch.delenv("NO_COLOR", raising=False)
    monkeypatch.setattr(cli_module.sys.stdout, "isatty", lambda: True)
    seen: list[bool] = []
    monkeypatch.setattr(cli.commands["schema"], "callback", lambda **_: seen.append(cli_module.wants_color()))
    assert main(argv) == 0
    assert main(["schema"]) == 0
    assert seen == [False, True]
