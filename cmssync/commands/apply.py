"""``cmssync apply`` on a terminal or in CI: show the plan, ask, show each outcome, a bar, and a summary line.

The work is :func:`cmssync.sync.applying.apply_site`; this module only renders it. Without a terminal to ask on
and without ``--yes`` a plan with changes is refused before anything is written; a saved plan file is applied
without asking (it was reviewed when it was made).

SIGTERM (``docker stop``, a CI timeout, ``kill``) stops the apply cleanly: the actions in flight (at most
``concurrency``) finish, each saving the state as usual, the others are not started; the command says so and exits
130 (interrupted), and the next apply finishes the work. A second SIGTERM cancels the actions in flight at once
(the state still holds every change that completed).
"""

from __future__ import annotations

import asyncio
import dataclasses
import signal
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import TextIO

from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

from cmssync.errors import EXIT_ERROR, EXIT_INTERRUPTED, PlanError
from cmssync.plan.actions import Plan
from cmssync.plan.report import render_text
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
) -> int:
    """The apply command. ``ask`` asks the user (None: no terminal to ask on).

    A saved plan (``request.plan_file``) was reviewed when it was made, and apply refuses it if it went stale, so
    applying it asks nothing (``terraform apply planfile``); ``--yes`` matters only when apply plans itself.
    """
    console = Console(file=out, force_terminal=color, markup=False, highlight=False, emoji=False)
    progress: Progress | None = None

    def confirm(plan: Plan) -> bool:
        nonlocal progress
        out.write(render_text(plan, color=color))
        if not yes and request.plan_file is None:
            if ask is None:
                raise PlanError("refusing to apply without confirmation: no terminal to ask on; pass --yes")
            if not ask():
                return False
        progress = _progress(console, len(plan.actions), enabled=color)
        return True

    def on_outcome(outcome: Outcome) -> None:
        console.print(outcome.line(), soft_wrap=True)
        if progress is not None:
            progress.advance(progress.tasks[0].id)

    stop = asyncio.Event()
    try:
        with _stop_on_sigterm(stop, out):
            report = await apply_site(
                workspace, dataclasses.replace(request, stop=stop), confirm=confirm, on_outcome=on_outcome
            )
    except asyncio.CancelledError:
        task = asyncio.current_task()
        if not stop.is_set() or task is None or task.uncancel() > 0:
            raise  # not our second SIGTERM: someone else cancelled
        out.write("Cancelled by a second SIGTERM; the state holds every completed change. Run apply again.\n")
        return EXIT_INTERRUPTED
    finally:
        if progress is not None:
            progress.stop()
    if not report.plan.has_changes:
        out.write(render_text(report.plan, color=color))
    if report.declined:
        out.write("Apply cancelled; nothing was changed.\n")
        return EXIT_ERROR
    for problem in report.problems:
        out.write(f"problem: {problem}\n")
    out.write(summary(report) + "\n")
    if stop.is_set():
        not_started = sum(1 for o in report.outcomes if o.message == STOPPED)
        out.write(
            f"Stopped by SIGTERM: {not_started} actions not started; the state holds every completed change. "
            "Run apply again to finish.\n"
        )
        return EXIT_INTERRUPTED
    return report.exit_code


@contextmanager
def _stop_on_sigterm(stop: asyncio.Event, out: TextIO) -> Iterator[None]:
    """While inside, the first SIGTERM sets ``stop`` and the second cancels the running task."""
    loop = asyncio.get_running_loop()
    task = asyncio.current_task()

    def on_sigterm() -> None:
        if stop.is_set() and task is not None:
            out.write("Second SIGTERM: cancelling the actions in flight.\n")
            task.cancel()
            return
        stop.set()
        out.write("SIGTERM: finishing the actions in flight, starting no more.\n")
        out.flush()

    try:
        loop.add_signal_handler(signal.SIGTERM, on_sigterm)
    except (NotImplementedError, RuntimeError):  # not the main thread, or no signals here: run as before
        yield
        return
    try:
        yield
    finally:
        loop.remove_signal_handler(signal.SIGTERM)


def summary(report: ApplyReport) -> str:
    counts = report.counts()
    head = "Apply failed" if report.failed else "Apply complete"
    return (
        f"{head}: {counts['ok']} succeeded, {counts['failed']} failed, {counts['skipped']} skipped "
        f"({report.requests} requests)."
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
