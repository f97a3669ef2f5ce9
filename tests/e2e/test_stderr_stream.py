"""stderr as one stream per format (issue 27 item 4): with ``--log-format json`` every stderr line is JSON (errors,
usage errors, located problems, progress, the sandbox's address); ``-q`` leaves only warnings and errors; ``pull``
shows progress; the read counter only grows; an apply that held objects back does not end "Apply complete"."""

from __future__ import annotations

import io
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from cmssync.commands.apply import run_apply
from cmssync.commands.progress import ReadingStatus
from cmssync.emulator.embedded import Sandbox
from cmssync.sync.applying import ApplyRequest
from tests.support.editors import Editor
from tests.support.sites import EXAMPLE, PASSWORDS, Site

ROOT = Path(__file__).resolve().parents[2]


def cmssync(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, **PASSWORDS, "PYTHONPATH": str(ROOT)}
    env.pop("CMSSYNC_CONFIG", None)
    return subprocess.run(
        [sys.executable, "-m", "cmssync", *args], cwd=cwd, env=env, capture_output=True, text=True, timeout=120,
        check=False,
    )  # fmt: skip


def json_lines(stderr: str) -> list[dict[str, object]]:
    lines = [line for line in stderr.splitlines() if line.strip()]
    assert lines
    return [json.loads(line) for line in lines]  # each one JSON, or this raises


@pytest.fixture
def content(tmp_path: Path) -> Path:
    root = tmp_path / "site"
    shutil.copytree(EXAMPLE, root, ignore=shutil.ignore_patterns(".cmssync"))
    return root


def test_every_stderr_line_is_json_under_log_format_json(content: Path, tmp_path: Path) -> None:
    run = cmssync("--log-format", "json", "plan", str(content), "--sandbox", cwd=tmp_path)
    assert run.returncode == 0, run.stderr
    events = json_lines(run.stderr)
    assert any(str(e["event"]).startswith("sandbox: ") for e in events)
    progress = [e for e in events if "read" in e]
    assert progress
    assert all(e["level"] == "info" and e["logger"] == "cmssync.cli" for e in progress)
    run = cmssync("plan", str(content), "--sandbox", "--target", "file:nothing", "--log-format", "json", cwd=tmp_path)
    assert run.returncode == 1
    assert json_lines(run.stderr)[-1]["level"] == "error"
    run = cmssync("plan", str(content), "--no-such-flag", "--log-format", "json", cwd=tmp_path)  # a usage error
    assert (run.returncode, json_lines(run.stderr)[-1]["usage"]) == (1, True)
    (content / "pages/about.yaml").write_text("name: [unclosed\n")
    run = cmssync("validate", str(content), "--log-format=json", cwd=tmp_path)
    assert run.returncode == 1
    assert all(e["level"] == "error" for e in json_lines(run.stderr))


def test_quiet_prints_only_warnings_and_errors(content: Path, tmp_path: Path) -> None:
    run = cmssync("plan", str(content), "--sandbox", "-q", cwd=tmp_path)
    assert run.returncode == 0
    assert run.stderr == ""  # no sandbox line, no progress
    run = cmssync("-q", "plan", str(content), "--sandbox", "--target", "file:nothing", cwd=tmp_path)
    assert run.stderr.startswith("error: ")


def test_pull_shows_progress_that_only_grows(tmp_path: Path) -> None:
    run = cmssync("--log-format", "json", "pull", str(tmp_path / "pulled"), "--sandbox", cwd=tmp_path)
    assert run.returncode == 0, run.stderr
    reads = [(e["read"], e["total"]) for e in json_lines(run.stderr) if "read" in e]
    assert reads
    assert reads[-1][0] == reads[-1][1] > 0
    assert [r for r, _ in reads] == sorted(r for r, _ in reads)


def test_the_read_counter_only_grows_across_passes() -> None:
    stream = io.StringIO()
    status = ReadingStatus(stream, terminal=False)
    shown = []
    for read, expected in [(0, 308), (5, 308), (6, 6), (0, 5), (4, 5), (5, 5)]:  # the plan's two passes
        status._last_line = 0.0  # every update written
        status.update(read, expected)
        shown.append(stream.getvalue().splitlines()[-1])
    counts = [int(line.split(": ")[1].split("/")[0]) for line in shown]
    assert counts == [0, 5, 6, 6, 10, 11]
    assert all(int(line.split("/")[1].split()[0]) >= count for line, count in zip(shown, counts, strict=True))


async def test_an_apply_that_refused_a_page_does_not_say_complete(example: Site, sandbox: Sandbox) -> None:
    assert not (await example.apply()).failed
    editor = Editor(sandbox)
    try:
        editor.edit("/about", description="Written by the editor.")
    finally:
        editor.close()
    text = (example.root / "pages/about.yaml").read_text()
    (example.root / "pages/about.yaml").write_text(text.replace("Who we are and how we work.", "From the content."))
    out = io.StringIO()
    code = await run_apply(example.workspace(), ApplyRequest(), out=out, yes=True)
    assert code == 1
    assert "Apply complete" not in out.getvalue()
    assert "Apply incomplete: " in out.getvalue()
    assert "1 refused, not applied" in out.getvalue()
    events = io.StringIO()
    (example.root / "pages/contact.yaml").write_text((example.root / "pages/contact.yaml").read_text() + "\n")
    code = await run_apply(example.workspace(), ApplyRequest(), out=events, yes=True, output_format="json")
    summary = json.loads(events.getvalue().splitlines()[-1])
    assert (code, summary["status"], summary["exit_code"]) == (1, "incomplete", 1)
