"""``cmssync plan``: observe the site, plan the difference, print it, optionally write a plan file.

Never sends a write request. The plan file (``-o``) is the JSON form of the :class:`Plan` (content digest,
preconditions and all), written atomically; ``apply PLANFILE`` executes exactly it, or refuses when it went stale,
and ``show PLANFILE`` renders it again. ``--format`` picks what goes to stdout — text, the JSON report, markdown
for a pull request, or the HTML report — whether or not a plan file is written: one flag, one place for each thing.

The HTML report inlines images of files the plan uploads, read from the content directory
(:mod:`cmssync.render.html_file`).

``--compact`` prints one line per object instead of every field and block change (``apply`` does so by itself
above :data:`COMPACT_ABOVE` actions, so the prompt is not preceded by thousands of lines). ``--step-summary``
also appends the markdown to the file ``$GITHUB_STEP_SUMMARY`` names (the job's summary page in GitHub
Actions), whatever goes to stdout. While the site is read, ``reading site: N/M pages`` shows on stderr
(:mod:`cmssync.commands.progress`).
"""

from __future__ import annotations

import io
import logging
import os
from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Literal, TextIO

from cmssync.commands.progress import reading_site
from cmssync.errors import PlanError
from cmssync.logs import note
from cmssync.plan.actions import plan_exit_code
from cmssync.render.text import render_compact, render_json, render_text
from cmssync.sync.plan_files import write_plan_file
from cmssync.sync.planning import make_plan

if TYPE_CHECKING:
    from cmssync.plan.actions import Plan
    from cmssync.plan.request import PlanRequest
    from cmssync.sync.workspace import Workspace

OutputFormat = Literal["text", "json", "markdown", "html"]
COMPACT_ABOVE = 50
"""``apply`` shows a plan of more actions than this one line per object before asking."""
STEP_SUMMARY = "GITHUB_STEP_SUMMARY"


REPORT_SUFFIXES: dict[str, OutputFormat] = {
    ".html": "html",
    ".htm": "html",
    ".xhtml": "html",
    ".svg": "html",
    ".md": "markdown",
    ".markdown": "markdown",
    ".txt": "text",
}
"""File names that say "report": ``-o`` never writes a plan file under one (a browser would render it)."""


def check_plan_file_name(directory: Path, plan_file: Path | None, output_format: OutputFormat) -> None:
    """Refuse ``-o report.html`` (and .md, .txt…) before anything is read: ``-o`` writes the plan file that
    ``apply`` executes, not a report; the error gives the command that saves the report."""
    if plan_file is None or plan_file.suffix.lower() not in REPORT_SUFFIXES:
        return
    wanted = REPORT_SUFFIXES[plan_file.suffix.lower()]
    report_format = output_format if output_format != "text" and output_format != "json" else wanted
    raise PlanError(
        f"-o {plan_file} would write the plan file (JSON, for `apply`) under a report's name; -o takes a .json "
        f"name. To save the report: cmssync plan {directory} --format {report_format} > {plan_file}"
        " (add -o plan.json to keep a plan file too)"
    )


def render(
    plan: Plan,
    output_format: OutputFormat,
    *,
    color: bool,
    content_dir: Path | None = None,
    compact: bool = False,
    uploads: Mapping[str, bytes] | None = None,
) -> str:
    """The plan in ``output_format``; ``content_dir``, or else ``uploads`` (a plan file's bytes), lets the HTML
    report inline the images of new files."""
    if output_format == "json":
        return render_json(plan)
    # The markdown and HTML renderers (and the HTML report's templates) are imported only when asked for: most
    # runs print text or JSON, and every module imported is paid by every command (issue 17).
    if output_format == "markdown":
        from cmssync.render.markdown import render_markdown

        return render_markdown(plan)
    if output_format == "html":
        from cmssync.render.html_file import html_report

        return html_report(plan, content_dir, uploads)
    return render_compact(plan, color=color) if compact else render_text(plan, color=color)


def append_step_summary(plan: Plan, notes: TextIO) -> None:
    """Append the plan's markdown to ``$GITHUB_STEP_SUMMARY``; outside GitHub Actions, say so on ``notes``."""
    target = os.environ.get(STEP_SUMMARY, "").strip()
    if not target:
        note(
            f"--step-summary: {STEP_SUMMARY} is not set (not in GitHub Actions); nothing appended",
            level=logging.WARNING,
            stream=notes,
        )
        return
    from cmssync.render.markdown import render_markdown

    with open(target, "a", encoding="utf-8") as summary:
        summary.write(render_markdown(plan) + "\n")


async def run_plan(
    workspace: Workspace,
    request: PlanRequest,
    *,
    out: TextIO,
    output_format: OutputFormat = "text",
    plan_file: Path | None = None,
    detailed_exitcode: bool = False,
    color: bool = False,
    compact: bool = False,
    step_summary: bool = False,
    notes: TextIO | None = None,
    progress: bool = False,
    progress_color: bool = True,
) -> int:
    """The plan command; ``notes`` (stderr) gets the progress display (``progress``) and remarks."""
    notes = notes if notes is not None else io.StringIO()
    check_plan_file_name(workspace.directory, plan_file, output_format)
    with reading_site(notes, terminal=notes.isatty(), enabled=progress, color=progress_color):
        run = await make_plan(workspace, request)
    out.write(render(run.plan, output_format, color=color, content_dir=workspace.directory, compact=compact))
    if plan_file is not None:
        write_plan_file(run.plan, plan_file, workspace.content)
    if step_summary:
        append_step_summary(run.plan, notes)
    return plan_exit_code(run.plan, detailed=detailed_exitcode)
