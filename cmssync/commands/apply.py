"""``cmssync apply`` on a terminal or in CI: show the plan, ask, show each outcome, a bar, and a summary line.

The work is :func:`cmssync.sync.applying.apply_site`; this module only renders it. Without a terminal to ask on
and without ``--yes`` a plan with changes is refused before anything is written; a saved plan file is applied
without asking (it was reviewed when it was made).

What shows while it runs: ``reading site: N/M pages`` on stderr while the site is read; then the plan, one line
per object when it has more than :data:`~cmssync.commands.plan.COMPACT_ABOVE` actions (or with ``--compact``), so
the prompt is not preceded by the whole plan; then one line per finished action with a bar (on a terminal) that
advances as each action finishes.

``--format json`` writes NDJSON events to stdout instead, one JSON object per line, for CI: ``{"event": "plan",
"plan": …}`` (the document of ``plan --format json``), then ``{"event": "outcome", …}`` as each action finishes,
then ``{"event": "summary", …}`` with the counts, problems and exit code. Remarks (SIGTERM) go to stderr then.

SIGTERM (``docker stop``, a CI timeout, ``kill``) stops the apply cleanly: the actions in flight (at most
``concurrency``) finish, each saving the state as usual, the others are not started; the command says so and exits
130 (interrupted), and the next apply finishes the work. A second SIGTERM cancels the actions in flight at once
(the state still holds every change that completed).
"""

from __future__ import annotations

import asyncio
import dataclasses
import io
import json
import logging
import signal
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any, Literal, TextIO

from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

from cmssync.commands.plan import COMPACT_ABOVE
from cmssync.commands.progress import reading_site
from cmssync.errors import EXIT_ERROR, EXIT_INTERRUPTED, PlanError
from cmssync.logs import note
from cmssync.plan.actions import OUTPUT_FORMAT_VERSION, Plan, markup_free_json
from cmssync.render.text import render_compact, render_json, render_text
from cmssync.sync.applying import ApplyReport, ApplyRequest, apply_site
from cmssync.sync.engine import STOPPED, Outcome
from cmssync.sync.workspace import Workspace


async def run_apply(
    workspace: Workspace,
    request: ApplyRequest,
    *,
    out: TextIO,
    yes: bool = False,
    ask: Callable[[], bool] | None = None,
    color: bool = False,
    output_format: Literal["text", "json"] = "text",
    compact: bool | None = None,
    notes: TextIO | None = None,
    progress: bool = False,
    progress_color: bool = True,
) -> int:
    """The apply command. ``ask`` asks the user (None: no terminal to ask on).

    A saved plan (``request.plan_file``) was reviewed when it was made, and apply refuses it if it went stale, so
    applying it asks nothing (``terraform apply planfile``); ``--yes`` matters only when apply plans itself.
    ``compact``: one line per object (None: when the plan has more than ``COMPACT_ABOVE`` actions). ``notes``
    (stderr) gets the reading status (``progress``) and, with ``--format json``, the remarks.
    """
    notes = notes if notes is not None else io.StringIO()
    events = output_format == "json"

    def remark(text: str) -> None:
        """A remark (SIGTERM): with ``--format json`` on stderr (a warning line, JSON under --log-format json),
        else on stdout between the outcomes it is about."""
        if events:
            note(text, level=logging.WARNING, stream=notes)
        else:
            out.write(text + "\n")
            out.flush()

    console = Console(file=out, force_terminal=color, markup=False, highlight=False, emoji=False)
    bar: Progress | None = None

    def confirm(plan: Plan) -> bool:
        nonlocal bar
        status.stop()
        if events:
            _event(out, "plan", plan=json.loads(render_json(plan)))
        else:
            out.write(_shown(plan, color=color, compact=compact))
        if not yes and request.plan_file is None:
            if ask is None or events:
                how = "--format json cannot ask" if events and ask is not None else "no terminal to ask on"
                raise PlanError(f"refusing to apply without confirmation: {how}; pass --yes or a plan file")
            if not ask():
                return False
        bar = None if events else _progress(console, len(plan.actions), enabled=color and progress)
        return True

    def on_outcome(outcome: Outcome) -> None:
        if events:
            _event(out, "outcome", **_outcome_json(outcome))
        else:
            console.print(outcome.line(), soft_wrap=True)
        if bar is not None:
            bar.advance(bar.tasks[0].id)

    stop = asyncio.Event()
    try:
        with (
            _stop_on_sigterm(stop, remark),
            reading_site(notes, terminal=notes.isatty(), enabled=progress, color=progress_color) as status,
        ):
            report = await apply_site(
                workspace, dataclasses.replace(request, stop=stop), confirm=confirm, on_outcome=on_outcome
            )
    except asyncio.CancelledError:
        task = asyncio.current_task()
        if not stop.is_set() or task is None or task.uncancel() > 0:
            raise  # not our second SIGTERM: someone else cancelled
        remark("Cancelled by a second SIGTERM; the state holds every completed change. Run apply again.")
        if events:
            _event(out, "summary", status="cancelled", exit_code=EXIT_INTERRUPTED)
        return EXIT_INTERRUPTED
    finally:
        if bar is not None:
            bar.stop()
    stopped = stop.is_set() and not report.declined
    exit_code = EXIT_INTERRUPTED if stopped else report.exit_code
    if events:
        if not report.plan.writes:
            _event(out, "plan", plan=json.loads(render_json(report.plan)))
        _event(out, "summary", **_summary_json(report, stopped=stopped, exit_code=exit_code))
        return exit_code
    _write_ending(out, report, color=color, stopped=stopped)
    return EXIT_ERROR if report.declined else exit_code


def _write_ending(out: TextIO, report: ApplyReport, *, color: bool, stopped: bool) -> None:
    """The text after the outcomes: the plan if nothing was to be written, then that the user declined, or the
    problems, the files drift: adopt wrote, the summary and what a SIGTERM left not started."""
    if not report.plan.writes:
        out.write(render_text(report.plan, color=color))
    if report.declined:
        out.write("Apply cancelled; nothing was changed.\n")
        return
    for problem in report.problems:
        out.write(f"problem: {problem}\n")
    if report.adopted is not None and report.adopted.files:
        files = ", ".join(str(path) for path in report.adopted.files)
        out.write(f"Site changes written into the content (drift: adopt): {files}\n")
    out.write(summary(report) + "\n")
    if stopped:
        not_started = sum(1 for o in report.outcomes if o.message == STOPPED)
        out.write(
            f"Stopped by SIGTERM: {not_started} actions not started; the state holds every completed change. "
            "Run apply again to finish.\n"
        )


def _shown(plan: Plan, *, color: bool, compact: bool | None) -> str:
    """The plan before the prompt: in full, or one line per object for a big plan (or ``--compact``)."""
    automatic = compact is None and len(plan.actions) > COMPACT_ABOVE
    if not (compact or automatic):
        return render_text(plan, color=color)
    hint = (
        f"({len(plan.actions)} actions, one line each; `cmssync plan` or `cmssync show PLANFILE` shows every change)\n"
        if automatic
        else ""
    )
    return render_compact(plan, color=color) + hint


def _event(out: TextIO, event: str, **fields: Any) -> None:
    line = {"format_version": OUTPUT_FORMAT_VERSION, "event": event, **fields}
    out.write(markup_free_json(json.dumps(line, ensure_ascii=False)) + "\n")
    out.flush()


def _outcome_json(outcome: Outcome) -> dict[str, Any]:
    action = outcome.action
    return {
        "id": action.id,
        "kind": action.kind,
        "key": action.key,
        "op": action.op,
        "status": outcome.status,
        "message": outcome.message,
    }


def _summary_json(report: ApplyReport, *, stopped: bool, exit_code: int) -> dict[str, Any]:
    state = "declined" if report.declined else "stopped" if stopped else outcome_word(report)
    return {
        "status": state,
        "counts": report.counts(),
        "not_started": sum(1 for o in report.outcomes if o.message == STOPPED),
        "problems": list(report.problems),
        "adopted": [str(path) for path in report.adopted.files] if report.adopted is not None else [],
        "requests": report.requests,
        "exit_code": exit_code,
    }


@contextmanager
def _stop_on_sigterm(stop: asyncio.Event, remark: Callable[[str], None]) -> Iterator[None]:
    """While inside, the first SIGTERM sets ``stop`` and the second cancels the running task."""
    loop = asyncio.get_running_loop()
    task = asyncio.current_task()

    def on_sigterm() -> None:
        if stop.is_set() and task is not None:
            remark("Second SIGTERM: cancelling the actions in flight.")
            task.cancel()
            return
        stop.set()
        remark("SIGTERM: finishing the actions in flight, starting no more.")

    try:
        loop.add_signal_handler(signal.SIGTERM, on_sigterm)
    except (NotImplementedError, RuntimeError):  # not the main thread, or no signals here: run as before
        yield
        return
    try:
        yield
    finally:
        loop.remove_signal_handler(signal.SIGTERM)


def outcome_word(report: ApplyReport) -> str:
    """How the apply ended, in one word that agrees with its exit code: ``failed`` (an action failed),
    ``incomplete`` (every action ran, but objects were held back: refused, unreadable — exit 1), ``complete``."""
    if report.failed:
        return "failed"
    return "incomplete" if report.exit_code != 0 else "complete"


def summary(report: ApplyReport) -> str:
    counts = report.counts()
    head = f"Apply {outcome_word(report)}"
    unreadable = len(report.plan.unreadable)
    refused = len(report.plan.refused) - unreadable
    held = f" {unreadable} held back: cannot be read, or need an object that cannot (see above)." if unreadable else ""
    if refused:
        held += f" {refused} refused, not applied (conflicts or foreign drafts; see above)."
    return (
        f"{head}: {counts['ok']} succeeded, {counts['failed']} failed, {counts['skipped']} skipped "
        f"({report.requests} requests).{held}"
    )


def _progress(console: Console, total: int, *, enabled: bool) -> Progress | None:
    """A progress bar for applies with many actions, on a terminal only (started here, stopped by the caller)."""
    if not enabled or total < 5:
        return None
    progress = Progress(
        TextColumn("{task.description}"),
        BarColumn(),
        MofNCompleteColumn(),
        TimeElapsedColumn(),
        console=console,
        transient=True,
    )
    progress.add_task("applying", total=total)
    progress.start()
    return progress
