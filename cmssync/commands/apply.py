"""``cmssync apply`` on a terminal or in CI: show the plan, ask, show each outcome, a bar, and a summary line.

The work is :func:`cmssync.sync.applying.apply_site`; this module only renders it. Without a terminal to ask on
and without ``--yes`` a plan with changes is refused before anything is written; a saved plan file is applied
without asking (it was reviewed when it was made).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TextIO

from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

from cmssync.errors import EXIT_ERROR, PlanError
from cmssync.plan.actions import Plan
from cmssync.plan.report import render_text
from cmssync.sync.applying import ApplyReport, ApplyRequest, apply_site
from cmssync.sync.engine import Outcome
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

    try:
        report = await apply_site(workspace, request, confirm=confirm, on_outcome=on_outcome)
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
    return report.exit_code


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
