"""The daemon's per-run HTML reports.

The daemon keeps the report of each run that changed (or, in report mode, would change) something in
``daemon.reports`` when that is set: one file per run, named by its time and run id, written atomically and readable
by others (a report is meant to be shared; it holds no secret, since plans never do).
"""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path

import structlog

from cmssync.fileio import write_atomically
from cmssync.plan.actions import Plan
from cmssync.render.html_file import html_report
from cmssync.sync.workspace import Workspace

log = structlog.get_logger("cmssync.report")

REPORT_MODE = 0o644


def save_run_report(workspace: Workspace, plan: Plan, run_id: str, *, now: datetime | None = None) -> Path | None:
    """Write the report of a daemon run to ``daemon.reports`` (relative to the content directory); None when the
    setting is off or the plan changes nothing. A failure to write is logged, never raised: a report is a by-product
    of the run, not part of it."""
    setting = workspace.settings.daemon.reports
    if setting is None or not plan.writes:
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
