"""``cmssync apply``: make the site match the content, safely.

Holds the state lock for the whole run. Without a plan file it plans afresh; with one it executes exactly that plan,
after checking it is still true: the content digest must be the one it was made from, and every page it touches
must still have the live version it saw (someone publishing in between makes the plan stale). It shows the plan,
asks on a terminal unless ``--yes``, reports each action's outcome as it finishes, and exits 1 if anything failed.
"""

from __future__ import annotations

from collections.abc import Callable
from contextlib import nullcontext
from dataclasses import dataclass
from pathlib import Path
from typing import TextIO

from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

from cmssync.content.site import SiteContent
from cmssync.errors import EXIT_ERROR, EXIT_OK, PlanError
from cmssync.sync import planner
from cmssync.sync.actions import Plan
from cmssync.sync.apply import ApplyContext, Handler, Outcome, execute
from cmssync.sync.apply_assets import apply_file, apply_group, apply_user, delete_retired_files
from cmssync.sync.apply_pages import apply_page
from cmssync.sync.observe import observe
from cmssync.sync.plan_command import read_plan_file
from cmssync.sync.report import render_text
from cmssync.sync.scope import Scope
from cmssync.sync.snapshot import Snapshot
from cmssync.sync.workspace import Workspace

HANDLERS: dict[str, Handler] = {"group": apply_group, "file": apply_file, "page": apply_page, "user": apply_user}


@dataclass(frozen=True)
class ApplyRequest:
    plan_file: Path | None = None
    yes: bool = False
    prune: bool | None = None
    replace_moved: bool = False
    allow_mass_delete: bool = False
    targets: tuple[str, ...] = ()
    scope: Scope | None = None
    """Incremental run (the daemon's file-change runs): only these objects, never deletes."""


@dataclass(frozen=True)
class ApplyReport:
    plan: Plan
    outcomes: list[Outcome]
    problems: list[str]
    requests: int

    @property
    def failed(self) -> bool:
        return bool(self.problems) or any(o.status == "failed" for o in self.outcomes)

    def summary(self) -> str:
        counts = {status: sum(1 for o in self.outcomes if o.status == status) for status in ("ok", "failed", "skipped")}
        head = "Apply failed" if self.failed else "Apply complete"
        return (
            f"{head}: {counts['ok']} succeeded, {counts['failed']} failed, {counts['skipped']} skipped "
            f"({self.requests} requests)."
        )


async def run_apply(
    workspace: Workspace,
    request: ApplyRequest,
    *,
    out: TextIO,
    confirm: Callable[[], bool] | None,
    color: bool = False,
) -> int:
    """The apply command. ``confirm`` asks the user (None: no terminal to ask on)."""
    report = await apply(workspace, request, out=out, confirm=confirm, color=color)
    if report is None:
        return EXIT_ERROR
    return EXIT_ERROR if report.failed else EXIT_OK


async def apply(
    workspace: Workspace,
    request: ApplyRequest,
    *,
    out: TextIO,
    confirm: Callable[[], bool] | None = None,
    color: bool = False,
) -> ApplyReport | None:
    """Plan (or read the plan file), confirm, execute. None when the user declined."""
    with workspace.store.lock("cmssync apply"):
        state = workspace.load_state()
        async with workspace.client() as client:
            snapshot = await observe(client, workspace.content, state, scope=request.scope)
            content = request.scope.restrict(workspace.content) if request.scope else workspace.content
            if request.plan_file is not None:
                plan = read_plan_file(request.plan_file)
                check_fresh(plan, workspace.content, snapshot)
            else:
                options = workspace.plan_options(
                    state,
                    targets=request.targets,
                    prune=request.prune,
                    replace_moved=request.replace_moved,
                    allow_mass_delete=request.allow_mass_delete,
                )
                plan = planner.plan(content, snapshot, state, options)
            out.write(render_text(plan, color=color))
            if not plan.has_changes:
                return ApplyReport(plan, [], [], client.stats.total)
            if not request.yes:
                if confirm is None:
                    raise PlanError("refusing to apply without confirmation: no terminal to ask on; pass --yes")
                if not confirm():
                    out.write("Apply cancelled; nothing was changed.\n")
                    return None
            context = ApplyContext(
                client=client,
                content=workspace.content,
                snapshot=snapshot,
                state=state,
                store=workspace.store,
                publish=plan.publish,
                versions_keep=workspace.settings.versions.keep,
            )
            console = Console(file=out, force_terminal=color, markup=False, highlight=False, emoji=False)
            progress = _progress(console, len(plan.actions), enabled=color)
            with progress if progress is not None else nullcontext():
                task = progress.add_task("applying", total=len(plan.actions)) if progress is not None else None

                def report(outcome: Outcome) -> None:
                    console.print(outcome.line(), soft_wrap=True)
                    if progress is not None and task is not None:
                        progress.advance(task)

                outcomes = await execute(plan, context, HANDLERS, on_outcome=report)
            problems = await delete_retired_files(context, outcomes)
            for problem in problems:
                out.write(f"problem: {problem}\n")
            result = ApplyReport(plan, outcomes, problems, client.stats.total)
    out.write(result.summary() + "\n")
    return result


def _progress(console: Console, total: int, *, enabled: bool) -> Progress | None:
    """A progress bar for applies with many actions, on a terminal only."""
    if not enabled or total < 5:
        return None
    return Progress(
        TextColumn("{task.description}"),
        BarColumn(),
        MofNCompleteColumn(),
        TimeElapsedColumn(),
        console=console,
        transient=True,
    )


def check_fresh(plan: Plan, content: SiteContent, snapshot: Snapshot) -> None:
    """Refuse a plan file whose content or touched live objects changed since it was made."""
    if plan.content_digest != content.digest():
        raise PlanError("the plan file is stale: the content changed since it was made; run `cmssync plan` again")
    if plan.site.rstrip("/") != snapshot.site_url.rstrip("/"):
        raise PlanError(f"the plan file was made for {plan.site}, not {snapshot.site_url}")
    for action in plan.actions:
        if action.kind != "page" or action.precondition.remote_id is None:
            continue
        live = snapshot.pages_by_id.get(int(action.precondition.remote_id))
        expected = action.precondition.live_version_id
        if live is None:
            raise PlanError(f"the plan file is stale: page {action.key} no longer exists on the site")
        if expected is not None and live.live_version_id != expected:
            raise PlanError(
                f"the plan file is stale: page {action.key} was published since (live version "
                f"{live.live_version_id}, the plan expected {expected}); run `cmssync plan` again"
            )
