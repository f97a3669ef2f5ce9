"""``--target`` and ``--exclude`` (issue 27 item 5): the examples ``--help`` gives are run against the example
content and each matches something (``file:logo.png`` used to match nothing); ``*`` crosses ``/`` as documented;
``--exclude`` leaves objects out with what needs them."""

from __future__ import annotations

import json
import re
import shlex
from pathlib import Path

import click
import pytest

from cmssync.cli import cli, main
from cmssync.emulator.embedded import Sandbox
from cmssync.plan.selection import matches
from tests.support.sites import copy_example, set_sandbox_environment


def help_examples(option: str) -> list[str]:
    """The ``e.g.`` patterns of a plan option's help, as a shell would pass them."""
    command = cli.commands["plan"]
    assert isinstance(command, click.Command)
    [param] = [p for p in command.params if option in getattr(p, "opts", ())]
    text = str(getattr(param, "help", "")).split("e.g.", 1)[1]
    return [word for word in shlex.split(text.replace(",", " ")) if re.match(r"(page|file|user|group):", word)]


@pytest.fixture
def site(tmp_path: Path, sandbox: Sandbox, monkeypatch: pytest.MonkeyPatch) -> Path:
    set_sandbox_environment(monkeypatch, sandbox, tmp_path / "state")
    return copy_example(tmp_path / "site")


def test_every_help_example_matches_something(site: Path, capsys: pytest.CaptureFixture[str]) -> None:
    targets, excludes = help_examples("--target"), help_examples("--exclude")
    assert len(targets) >= 6
    assert excludes
    for pattern in targets:
        assert main(["plan", str(site), "--target", pattern]) == 0, (pattern, capsys.readouterr().err)
    for pattern in excludes:
        assert main(["plan", str(site), "--exclude", pattern]) == 0, (pattern, capsys.readouterr().err)


def test_a_star_crosses_slashes_as_documented() -> None:
    assert matches("page:/services/consulting/rates", ["page:/services/*"])
    assert matches("file:documents/brochure.pdf", ["file:*.pdf"])
    assert not matches("page:/services", ["page:/services/*"])


def test_exclude_leaves_objects_out_with_what_needs_them(site: Path, capsys: pytest.CaptureFixture[str]) -> None:
    capsys.readouterr()
    assert main(["plan", str(site), "--format", "json", "--exclude", "page:/services/*"]) == 0
    ids = [a["id"] for a in json.loads(capsys.readouterr().out)["actions"]]
    assert "page:/services" in ids
    assert not [i for i in ids if i.startswith("page:/services/")]
    assert main(["plan", str(site), "--exclude", "file:images/logo.png"]) == 0
    out = capsys.readouterr().out
    assert "file images/logo.png" not in out
    assert "left out with the excluded objects they need: page:/" in out  # the home page shows the logo
    assert main(["plan", str(site), "--exclude", "page:/no-such-page"]) == 1
    assert "--exclude 'page:/no-such-page' matches no page" in capsys.readouterr().err


def test_an_empty_selection_says_so_and_the_plan_records_the_exclusions(
    site: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["apply", str(site), "--yes"]) == 0
    (site / "pages" / "about.yaml").write_text("name: About, edited\n", encoding="utf-8")
    capsys.readouterr()
    assert main(["plan", str(site), "--exclude", "page:/about", "--detailed-exitcode"]) == 0
    out = capsys.readouterr().out
    assert "(excludes=['page:/about'])" in out  # the header says what was left out
    assert "No changes. The objects selected (--target, --exclude) match the content." in out  # not "the site"
    assert main(["plan", str(site), "--format", "markdown", "--exclude", "page:/about"]) == 0
    assert "**No changes.** The objects selected" in capsys.readouterr().out
