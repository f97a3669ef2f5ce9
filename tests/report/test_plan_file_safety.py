"""A plan file is never written under a report's name, and no plan file or JSON report holds markup a browser runs
(issue 27 item 1): ``plan --format html -o report.html`` used to write the *plan file* (JSON) there, and Chromium,
going by the name, ran a block's ``<script>`` from it."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import pytest

from cmssync.cli import main
from cmssync.emulator.embedded import Sandbox
from cmssync.sync.plan_files import read_plan_file, write_plan_file
from cmssync.sync.planning import make_plan
from tests.report.browser import Browser, attributes
from tests.report.scenario import hostile_page, workspace
from tests.support.sites import set_sandbox_environment


@pytest.fixture
def hostile_root(example_root: Path, sandbox: Sandbox, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    hostile_page(example_root)
    set_sandbox_environment(monkeypatch, sandbox, tmp_path / "state")
    return example_root


@pytest.mark.parametrize(("name", "fmt"), [("report.html", "html"), ("Report.HTM", "html"), ("plan.md", "markdown")])
def test_a_report_name_for_the_plan_file_is_refused_and_nothing_written(
    hostile_root: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str], name: str, fmt: str
) -> None:
    target = tmp_path / name
    assert main(["plan", str(hostile_root), "--format", "html", "-o", str(target)]) == 1
    err = capsys.readouterr().err
    assert not target.exists()
    assert f"cmssync plan {hostile_root} --format html > {target}" in err
    assert main(["plan", str(hostile_root), "-o", str(target)]) == 1  # whatever --format says
    assert f"--format {fmt} > {target}" in capsys.readouterr().err
    assert not target.exists()


def test_the_plan_file_and_the_json_report_hold_no_markup(
    hostile_root: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    plan_file = tmp_path / "plan.json"
    assert main(["plan", str(hostile_root), "--format", "json", "-o", str(plan_file)]) == 0
    report = capsys.readouterr().out
    for text in (plan_file.read_text(encoding="utf-8"), report):
        assert "<" not in text
        assert ">" not in text
    assert "<script>" in json.dumps(json.loads(report))  # the same document: the script is data, escaped
    assert any("<script>" in json.dumps(a.model_dump(mode="json")) for a in read_plan_file(plan_file).actions)


def test_no_content_script_runs_in_a_plan_file_a_browser_takes_for_html(
    hostile_root: Path, sandbox: Sandbox, tmp_path: Path, browser: Browser
) -> None:
    planned = workspace(hostile_root, sandbox)
    plan = asyncio.run(make_plan(planned)).plan
    control = tmp_path / "control.html"  # the plan file as it was written before: the script must run
    control.write_text(plan.model_dump_json(indent=2), encoding="utf-8")
    browser.open(control.as_uri())
    assert browser.wait_for("document.documentElement.getAttribute('data-pwned-script')") == "1"

    saved = tmp_path / "saved-as.html"
    write_plan_file(plan, saved, planned.content)  # what any path that writes a plan file writes
    browser.open(saved.as_uri())
    assert browser.evaluate("document.readyState") == "complete"
    assert not [name for node in browser.dom_nodes() for name in attributes(node) if name.startswith("data-pwned")]
    assert browser.evaluate("document.scripts.length") == 0
