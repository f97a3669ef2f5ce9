"""``cmssync show PLANFILE``: render a saved plan again, in any format, without a site or credentials.

Like ``terraform show planfile``: the reviewed plan of a pull request (the CI artifact) can be read later as text,
JSON, markdown or the HTML report. Nothing is observed and nothing is checked for staleness; that is ``apply``'s
job. The HTML report inlines images of files the plan uploads from ``--content DIR``, the content directory the
plan was made from, or else from the bytes the plan file carries (those that match the plan's hashes).
"""

from __future__ import annotations

from pathlib import Path
from typing import TextIO

from cmssync.commands.plan import OutputFormat, render
from cmssync.errors import EXIT_OK
from cmssync.sync.plan_files import read_plan_uploads


def run_show(
    plan_file: Path,
    *,
    out: TextIO,
    output_format: OutputFormat = "text",
    content_dir: Path | None = None,
    color: bool = False,
) -> int:
    plan, uploads = read_plan_uploads(plan_file)
    out.write(render(plan, output_format, color=color, content_dir=content_dir, uploads=uploads))
    return EXIT_OK
