from __future__ import annotations

import os
import signal
import time
from pathlib import Path

import pytest

from cmssync.cli import cli, main
from cmssync.errors import ConfigError, ContentError, Problem

COMMANDS = ["validate", "plan", "apply", "pull", "daemon", "status", "schema", "emulator"]


def test_help_lists_every_command(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["--help"]) == 0
    out = capsys.readouterr().out
    for command in COMMANDS:
        assert f"  {command} " in out


@pytest.mark.parametrize("command", COMMANDS)
def test_every_command_has_help(command: str, capsys: pytest.CaptureFixture[str]) -> None:
    assert main([command, "--help"]) == 0
    assert "Usage: cmssync" in capsys.readouterr().out


def test_an_error_prints_one_line_and_exits_1(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    def broken(**_: object) -> None:
        raise ConfigError("site.url is not set")

    monkeypatch.setattr(cli.commands["schema"], "callback", broken)
    assert main(["schema"]) == 1
    captured = capsys.readouterr()
    assert captured.err == "error: site.url is not set\n"
    assert "Traceback" not in captured.err


def test_content_errors_print_every_location(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    def broken(**_: object) -> None:
        raise ContentError([Problem("pages/b.yaml", 3, 1, "second"), Problem("pages/a.yaml", 12, 7, "first")])

    monkeypatch.setattr(cli.commands["schema"], "callback", broken)
    assert main(["schema"]) == 1
    lines = capsys.readouterr().err.splitlines()
    assert lines == ["pages/a.yaml:12:7: first", "pages/b.yaml:3:1: second", "error: 2 problems in the content"]


def test_debug_shows_the_traceback(monkeypatch: pytest.MonkeyPatch) -> None:
    def broken(**_: object) -> None:
        raise ConfigError("boom")

    monkeypatch.setattr(cli.commands["schema"], "callback", broken)
    with pytest.raises(ConfigError, match="boom"):
        main(["--debug", "schema"])


def test_ctrl_c_exits_130(monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    def interrupted(**_: object) -> None:
        raise KeyboardInterrupt

    monkeypatch.setattr(cli.commands["schema"], "callback", interrupted)
    assert main(["schema"]) == 130
    # click ends the interrupted line on the terminal first, hence the leading newline.
    assert capsys.readouterr().err.strip() == "interrupted"


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["plan", "--format", "yaml"], "Invalid value for '--format'"),
        (["plan", "--detailed-exitcod"], "No such option '--detailed-exitcod'"),
        (["aply"], "No such command 'aply'"),
        (["apply", "a", "b"], "File 'b' does not exist"),
    ],
)
def test_usage_errors_exit_1_not_the_changes_code(
    argv: list[str], message: str, capsys: pytest.CaptureFixture[str]
) -> None:
    """2 means "changes present" under --detailed-exitcode: a typo must never read as that."""
    assert main(argv) == 1
    assert message in capsys.readouterr().err


def test_apply_with_its_arguments_swapped_says_the_order(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """``cmssync apply plan.json site`` is a usage error that names the order, not "Directory … is a file"."""
    plan_file = tmp_path / "plan.json"
    plan_file.write_text("{}")
    (tmp_path / "site").mkdir()
    assert main(["apply", str(plan_file), str(tmp_path / "site")]) == 1
    err = capsys.readouterr().err
    assert f"'{plan_file}' is a file, not a content directory: the order is `cmssync apply DIR PLANFILE`" in err
    assert "is a file." not in err


def test_sigterm_before_the_actions_start_exits_130_with_a_word(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """A SIGTERM while apply loads the content (before its own handler takes over) says so and exits 130, not the
    default 143 without a word; afterwards SIGTERM is handled as before the command."""
    import cmssync.cli as cli_module

    reached: list[str] = []

    def terminated_while_loading(*_: object, **__: object) -> None:
        os.kill(os.getpid(), signal.SIGTERM)
        time.sleep(5)  # the handler raises at the next bytecode; never reached when it works
        reached.append("after the signal")

    def recorded(signum: int, frame: object) -> None:  # stands for the default, which would end pytest itself
        reached.append("the handler from before the command")

    monkeypatch.setattr(cli_module, "open_site_workspace", terminated_while_loading)
    previous = signal.signal(signal.SIGTERM, recorded)
    try:
        assert main(["apply", str(tmp_path), "--yes"]) == 130
        assert signal.getsignal(signal.SIGTERM) is recorded
    finally:
        signal.signal(signal.SIGTERM, previous)
    assert capsys.readouterr().err.strip() == "interrupted"
    assert reached == []
