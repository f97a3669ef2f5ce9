"""Progress that tells the truth (issue 18 item 6), against the sandbox: the reading status counts every page read,
outcomes (and so the bar) arrive as actions finish, big plans are shown one line per object before the prompt,
``apply --format json`` is NDJSON events, ``plan --step-summary`` appends to the job summary, retries are one
short log line each, and a slow request says what it is waiting for."""

from __future__ import annotations

import io
import json
import logging
import re
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from rich.progress import Progress

import cmssync.api.slowcalls
import cmssync.commands.apply
import cmssync.commands.progress
from cmssync.cli import main
from cmssync.commands.apply import run_apply
from cmssync.commands.plan import run_plan
from cmssync.logs import configure_logging
from cmssync.plan.request import PlanRequest
from cmssync.sync.applying import ApplyRequest, apply_site
from cmssync.sync.observe import observe
from tests.support.sites import Site


@pytest.fixture
def log_lines() -> Iterator[io.StringIO]:
    """Everything logged, as JSON lines (what a CI log gets)."""
    stream = io.StringIO()
    configure_logging(level=logging.INFO, json_lines=True, stream=stream)
    yield stream
    configure_logging(level=logging.WARNING)


def _events(stream: io.StringIO) -> list[dict[str, Any]]:
    return [json.loads(line) for line in stream.getvalue().splitlines() if line.strip()]


async def test_observe_reports_every_page_it_reads(example: Site) -> None:
    await example.apply()
    workspace = example.workspace()
    seen: list[tuple[int, int]] = []
    async with workspace.client() as client:
        await observe(client, workspace.content, workspace.load_state(), progress=lambda r, e: seen.append((r, e)))
    reads = [read for read, _ in seen]
    assert reads == sorted(reads)  # never goes back
    assert seen[-1][0] == seen[-1][1] == len(workspace.content.pages)  # ends at N/N, every page counted once
    assert all(read <= expected for read, expected in seen)


async def test_plan_shows_the_reading_status_on_stderr_only(example: Site, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(cmssync.commands.progress, "LOG_EVERY", 0.0)
    out, notes = io.StringIO(), io.StringIO()
    await run_plan(example.workspace(), PlanRequest(), out=out, notes=notes, progress=True)
    lines = notes.getvalue().splitlines()
    assert lines
    assert all(line.startswith("reading site: ") and line.endswith(" pages") for line in lines)
    assert re.fullmatch(r"reading site: (\d+)/\1 pages", lines[-1])  # the last count is the whole: N/N
    assert "reading site" not in out.getvalue()
    quiet = io.StringIO()
    await run_plan(example.workspace(), PlanRequest(), out=io.StringIO(), notes=quiet, progress=False)
    assert quiet.getvalue() == ""


async def test_off_a_terminal_the_status_is_a_few_lines_not_one_per_page(example: Site) -> None:
    notes = io.StringIO()
    started = time.monotonic()
    await run_plan(example.workspace(), PlanRequest(), out=io.StringIO(), notes=notes, progress=True)
    elapsed = time.monotonic() - started
    lines = notes.getvalue().splitlines()
    assert 1 <= len(lines) <= 2 + elapsed / cmssync.commands.progress.LOG_EVERY


async def test_outcomes_arrive_as_actions_finish(example: Site) -> None:
    """The bar advances on each outcome; the outcomes must come as the actions finish, not all at the end."""
    example.sandbox.set_faults(["latency:1:ms=120:method=POST,PUT"])
    times: list[float] = []
    started = time.monotonic()
    report = await apply_site(
        example.workspace(), ApplyRequest(), on_outcome=lambda outcome: times.append(time.monotonic() - started)
    )
    assert not report.failed
    assert len(times) == len(report.plan.actions) >= 10
    span = times[-1] - times[0]
    assert span > 0.3  # spread over the run ...
    assert times[0] < times[-1] - span / 2  # ... the first long before the last


async def test_the_bar_counts_every_finished_action(example: Site, monkeypatch: pytest.MonkeyPatch) -> None:
    bars: list[Progress] = []
    original = cmssync.commands.apply._progress

    def recording(*args: Any, **kwargs: Any) -> Progress | None:
        bar = original(*args, **kwargs)
        if bar is not None:
            bars.append(bar)
        return bar

    monkeypatch.setattr(cmssync.commands.apply, "_progress", recording)
    out = io.StringIO()
    code = await run_apply(example.workspace(), ApplyRequest(), out=out, yes=True, color=True, progress=True)
    assert code == 0
    [bar] = bars
    assert bar.tasks[0].completed == bar.tasks[0].total == out.getvalue().count("ok      ")


async def test_a_big_plan_is_shown_one_line_per_object_before_the_prompt(
    example: Site, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(cmssync.commands.apply, "COMPACT_ABOVE", 5)
    asked: list[str] = []
    out = io.StringIO()

    def ask() -> bool:
        asked.append(out.getvalue())
        return False

    code = await run_apply(example.workspace(), ApplyRequest(), out=out, ask=ask)
    assert code == 1
    [shown] = asked
    plan = await example.plan()
    lines = shown.splitlines()
    object_lines = [line for line in lines if line[:2] in ("+ ", "~ ", "- ", "> ")]
    assert len(object_lines) == len(plan.actions)
    assert not any(line.startswith("    ") for line in lines)  # no field values, no block diffs
    assert f"({len(plan.actions)} actions, one line each;" in shown
    # --no-compact is the full plan, with its field changes
    full = io.StringIO()
    await run_apply(example.workspace(), ApplyRequest(), out=full, ask=lambda: False, compact=False)
    assert any(line.startswith("    ") for line in full.getvalue().splitlines())


async def test_apply_json_is_ndjson_events(example: Site) -> None:
    out, notes = io.StringIO(), io.StringIO()
    code = await run_apply(
        example.workspace(), ApplyRequest(), out=out, yes=True, output_format="json", notes=notes, progress=True
    )
    assert code == 0
    events = [json.loads(line) for line in out.getvalue().splitlines()]  # every line is one JSON document
    assert [e["event"] for e in events[:1]] == ["plan"]
    plan = events[0]["plan"]
    outcomes = [e for e in events if e["event"] == "outcome"]
    assert len(outcomes) == len(plan["actions"])
    assert {o["status"] for o in outcomes} == {"ok"}
    assert {o["id"] for o in outcomes} == {a["id"] for a in plan["actions"]}
    summary = events[-1]
    assert summary["event"] == "summary"
    assert summary["status"] == "complete"
    assert summary["exit_code"] == 0
    assert summary["counts"] == {"ok": len(outcomes), "failed": 0, "skipped": 0}
    assert "reading site" in notes.getvalue()  # progress on stderr, never among the events

    again = io.StringIO()
    assert await run_apply(example.workspace(), ApplyRequest(), out=again, yes=True, output_format="json") == 0
    kinds = [json.loads(line)["event"] for line in again.getvalue().splitlines()]
    assert kinds == ["plan", "summary"]


async def test_apply_json_without_yes_is_refused_before_writing(example: Site) -> None:
    from cmssync.errors import PlanError

    with pytest.raises(PlanError, match="--format json cannot ask; pass --yes or a plan file"):
        await run_apply(example.workspace(), ApplyRequest(), out=io.StringIO(), ask=lambda: True, output_format="json")
    assert (await example.plan()).has_changes


async def test_step_summary_appends_the_markdown(
    example: Site, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    summary = tmp_path / "step-summary.md"
    summary.write_text("earlier step\n")
    monkeypatch.setenv("GITHUB_STEP_SUMMARY", str(summary))
    out = io.StringIO()
    await run_plan(example.workspace(), PlanRequest(), out=out, step_summary=True)
    text = summary.read_text()
    assert text.startswith("earlier step\n")
    assert "| create | update | delete | move |" in text
    assert out.getvalue().startswith("cmssync plan for")  # stdout still has the format asked for
    monkeypatch.delenv("GITHUB_STEP_SUMMARY")
    notes = io.StringIO()
    await run_plan(example.workspace(), PlanRequest(), out=io.StringIO(), step_summary=True, notes=notes)
    assert "GITHUB_STEP_SUMMARY is not set" in notes.getvalue()


async def test_retries_are_one_short_line_each(example: Site, log_lines: io.StringIO) -> None:
    example.sandbox.set_faults(["503:1:times=2:path=/ccm/api/1.0/sites/*"])
    await example.plan()
    events = _events(log_lines)
    retries = [e for e in events if e.get("logger") == "cmssync.retry"]
    assert [e["retry"] for e in retries] == [1, 2]
    for event in retries:
        assert event["level"] == "info"
        assert event["event"].startswith(f"retry {event['retry']} in ")
        assert "GET /ccm/api/1.0/sites/default (503)" in event["event"]
        assert not {"args", "kwargs", "callable", "caused_by"} & set(event)
    assert not any(e.get("event") == "stamina.retry_scheduled" for e in events)


async def test_a_slow_request_says_what_it_waits_for(
    example: Site, log_lines: io.StringIO, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(cmssync.api.slowcalls, "SLOW_AFTER", 0.25)
    example.sandbox.set_faults(["latency:1:ms=700:path=/ccm/api/1.0/sites/*"])
    await example.plan()
    waiting = [e["event"] for e in _events(log_lines) if e.get("logger") == "cmssync.api.slow"]
    # every 0.25 s while the 0.7 s answer is awaited: at about 0.25 and 0.5 s
    assert len(waiting) == 2, waiting
    assert re.fullmatch(r"still waiting for GET /ccm/api/1\.0/sites/default \(0\.[23] s\)", waiting[0])
    assert re.fullmatch(r"still waiting for GET /ccm/api/1\.0/sites/default \(0\.[56] s\)", waiting[1])
    assert all("/sites/default" in line for line in waiting)  # fast requests said nothing


class _Terminal(io.StringIO):
    def isatty(self) -> bool:
        return True


def test_no_color_reaches_the_reading_spinner(example: Site, monkeypatch: pytest.MonkeyPatch) -> None:
    """``--no-color`` (issue 36): the spinner on a terminal was still coloured."""
    monkeypatch.delenv("NO_COLOR", raising=False)
    for flags, coloured in (((), True), (("--no-color",), False)):
        notes = _Terminal()
        monkeypatch.setattr(sys, "stderr", notes)
        assert main([*flags, "plan", str(example.root), "--sandbox"]) == 0
        assert "reading site: " in notes.getvalue()
        assert bool(re.search(r"\x1b\[[0-9;]*3\dm", notes.getvalue())) is coloured, notes.getvalue()
