"""``cmssync plan``: observe the site, plan the difference, print it, optionally write a plan file.

Never sends a write request. The plan file (``-o``) is the JSON form of the :class:`Plan` (content digest,
preconditions and all), written atomically; ``apply PLANFILE`` executes exactly it, or refuses when it went stale,
and ``show PLANFILE`` renders it again. ``--format`` picks what goes to stdout — text, the JSON report, markdown
for a pull request, or the HTML report — whether or not a plan file is written: one flag, one place for each thing.

The HTML report inlines images of files the plan uploads; this module reads their bytes from the content
directory (:func:`report_files`) and hands them to the pure renderer.
"""

from __future__ import annotations

from pathlib import Path
from typing import Literal, TextIO

from cmssync.errors import EXIT_CHANGES, EXIT_OK
from cmssync.plan.actions import Plan
from cmssync.plan.html import files_wanted, render_html
from cmssync.plan.html.preview import MAX_IMAGE_BYTES
from cmssync.plan.markdown import render_markdown
from cmssync.plan.report import render_json, render_text
from cmssync.plan.request import PlanRequest
from cmssync.sync.planning import make_plan, write_plan_file
from cmssync.sync.workspace import Workspace

OutputFormat = Literal["text", "json", "markdown", "html"]
FORMATS: tuple[OutputFormat, ...] = ("text", "json", "markdown", "html")


def render(plan: Plan, output_format: OutputFormat, *, color: bool, content_dir: Path | None = None) -> str:
    """The plan in ``output_format``; ``content_dir`` lets the HTML report inline the images of new files."""
    if output_format == "json":
        return render_json(plan)
    if output_format == "markdown":
        return render_markdown(plan)
    if output_format == "html":
        return render_html(plan, files=report_files(plan, content_dir) if content_dir is not None else None)
    return render_text(plan, color=color)


def report_files(plan: Plan, content_dir: Path) -> dict[str, bytes]:
    """The bytes of the content files the HTML report wants (new images), read from ``content_dir/files``.

    A path that leaves ``files/`` (a hand-edited plan file), a missing file or an oversized one is left out: the
    report then shows a placeholder naming it instead.
    """
    root = (content_dir / "files").resolve()
    found: dict[str, bytes] = {}
    for name in files_wanted(plan):
        path = (root / name).resolve()
        if not path.is_relative_to(root):
            continue
        try:
            if path.stat().st_size > MAX_IMAGE_BYTES:
                continue
            found[name] = path.read_bytes()
        except OSError:
            continue
    return found


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
