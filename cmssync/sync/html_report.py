"""The HTML plan report as a file: the bytes of the images it inlines, and the daemon's per-run reports.

The renderer (:mod:`cmssync.plan.html`) is pure; this is its I/O. Images of files a plan uploads are read from the
content directory (``files/PATH``), never from outside it, and only up to the renderer's size limit; a missing or
refused file shows as a named placeholder in the report. The daemon keeps the report of each run that changed (or,
in report mode, would change) something in ``daemon.reports`` when that is set: one file per run, named by its time
and run id, written atomically and readable by others (a report is meant to be shared; it holds no secret, since
plans never do).
"""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path

import structlog

from cmssync.fileio import write_atomically
from cmssync.plan.actions import Plan
from cmssync.plan.html import files_wanted, render_html
from cmssync.plan.html.preview import MAX_IMAGE_BYTES
from cmssync.sync.workspace import Workspace

log = structlog.get_logger("cmssync.report")

REPORT_MODE = 0o644


def report_files(plan: Plan, content_dir: Path) -> dict[str, bytes]:
    """The bytes of the content files the report wants (new images), read from ``content_dir/files``.

    A path that leaves ``files/`` (a hand-edited plan file), a missing file or an oversized one is left out.
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


def html_report(plan: Plan, content_dir: Path | None) -> str:
    """The report of ``plan``, with the new images of ``content_dir`` inlined when it is given."""
    return render_html(plan, files=report_files(plan, content_dir) if content_dir is not None else None)


def save_run_report(workspace: Workspace, plan: Plan, run_id: str, *, now: datetime | None = None) -> Path | None:
    """Write the report of a daemon run to ``daemon.reports`` (relative to the content directory); None when the
    setting is off or the plan changes nothing. A failure to write is logged, never raised: a report is a by-product
    of the run, not part of it."""
    setting = workspace.settings.daemon.reports
    if setting is None or not plan.has_changes:
        return None
    moment = now or datetime.now(UTC)
    path = workspace.settings.resolve(workspace.directory, setting) / f"{moment:%Y%m%dT%H%M%SZ}-{run_id}.html"
    try:
        write_atomically(path, html_report(plan, workspace.directory), mode=REPORT_MODE, durable=False)
    except OSError as exc:
        log.warning("run report not written", path=str(path), reason=str(exc))
        return None
    log.info("run report written", path=str(path), actions=len(plan.actions))
    return path
