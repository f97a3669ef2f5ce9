"""``cmssync plan``: observe the site, plan the difference, print it, optionally write a plan file.

Never sends a write request. The plan file (``-o``) is the JSON form of the :class:`Plan` (content digest,
preconditions and all), written atomically; ``apply PLANFILE`` executes exactly it, or refuses when it went stale,
and ``show PLANFILE`` renders it again. ``--format`` picks what goes to stdout — text, the JSON report, markdown
for a pull request, or the HTML report — whether or not a plan file is written: one flag, one place for each thing.

The HTML report inlines images of files the plan uploads, read from the content directory
(:mod:`cmssync.sync.html_report`).
"""

from __future__ import annotations

from pathlib import Path
from typing import Literal, TextIO

from cmssync.errors import EXIT_CHANGES, EXIT_OK
from cmssync.plan.actions import Plan
from cmssync.plan.markdown import render_markdown
from cmssync.plan.report import render_json, render_text
from cmssync.plan.request import PlanRequest
from cmssync.sync.html_report import html_report
from cmssync.sync.planning import make_plan, write_plan_file
from cmssync.sync.workspace import Workspace

OutputFormat = Literal["text", "json", "markdown", "html"]


def render(plan: Plan, output_format: OutputFormat, *, color: bool, content_dir: Path | None = None) -> str:
    """The plan in ``output_format``; ``content_dir`` lets the HTML report inline the images of new files."""
    if output_format == "json":
        return render_json(plan)
    if output_format == "markdown":
        return render_markdown(plan)
    if output_format == "html":
        return html_report(plan, content_dir)
    return render_text(plan, color=color)


async def run_plan(
    workspace: Workspace,
    request: PlanRequest,
    *,
    out: TextIO,
    output_format: OutputFormat = "text",
    plan_file: Path | None = None,
    detailed_exitcode: bool = False,
    color: bool = False,
) -> int:
    run = await make_plan(workspace, request)
    out.write(render(run.plan, output_format, color=color, content_dir=workspace.directory))
    if plan_file is not None:
        write_plan_file(run.plan, plan_file)
    if detailed_exitcode and not run.plan.is_empty:
        return EXIT_CHANGES
    return EXIT_OK
