"""``cmssync status``: connectivity, account, site, system info, scopes, who holds the state lock, and drift.

The connection checks come from ``cmssync.sync.diagnose``; this adds what only the sync layer knows: whether the
content is valid, whether another apply is running, and a one-line summary of how far the site has drifted from
the content (a plan, which writes nothing).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, TextIO

from cmssync.config import load_settings
from cmssync.errors import EXIT_ERROR, EXIT_OK, CmsSyncError, ContentError
from cmssync.plan.actions import summary_line
from cmssync.state.store import read_lock_holder
from cmssync.sync.diagnose import diagnose
from cmssync.sync.planning import make_plan
from cmssync.sync.workspace import open_workspace


async def run_status(directory: Path, *, out: TextIO, overrides: dict[str, Any] | None = None) -> int:
    settings = load_settings(directory, overrides=overrides)
    report = await diagnose(settings, base_dir=directory)
    lines = report.lines()
    ok = report.ok
    state_path = Path(settings.state) if Path(settings.state).is_absolute() else directory / settings.state
    holder = read_lock_holder(state_path)
    extra = [f"lock:      held by {holder.describe()}"] if holder is not None else []
    if report.ok:
        try:
            workspace = open_workspace(directory, overrides=overrides, any_site=overrides is not None)
            run = await make_plan(workspace)
            extra.append(f"drift:     {summary_line(run.plan)}")
        except ContentError as exc:
            ok = False
            extra.append(f"content:   invalid ({len(exc.problems)} problem(s)); run `cmssync validate` to see them")
        except CmsSyncError as exc:
            ok = False
            extra.append(f"drift:     unknown ({exc})")
    # The report's last line is its verdict on the connection; the content and drift checks can still fail after it.
    verdict = lines[-1] if not report.ok else "status:    ok" if ok else "status:    problem(s), see above"
    out.write("\n".join([*lines[:-1], *extra, verdict]) + "\n")
    return EXIT_OK if ok else EXIT_ERROR
