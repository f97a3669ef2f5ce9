"""``cmssync plan``: observe the site, plan the difference, print it, optionally write a plan file.

Never sends a write request. The plan file is the JSON form of the :class:`Plan` (content digest, preconditions
and all), written atomically; ``apply PLANFILE`` executes exactly it, or refuses when it went stale.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Literal, TextIO

from cmssync.errors import EXIT_CHANGES, EXIT_OK, PlanError
from cmssync.fileio import write_atomically
from cmssync.sync import planner
from cmssync.sync.actions import Plan
from cmssync.sync.observe import observe
from cmssync.sync.report import render_json, render_markdown, render_text
from cmssync.sync.scope import Scope
from cmssync.sync.snapshot import Snapshot
from cmssync.sync.state import State
from cmssync.sync.workspace import Workspace

OutputFormat = Literal["text", "json", "markdown"]


@dataclass(frozen=True)
class PlanRun:
    plan: Plan
    snapshot: Snapshot
    state: State
    requests: int


async def make_plan(
    workspace: Workspace,
    *,
    targets: tuple[str, ...] = (),
    prune: bool | None = None,
    replace_moved: bool = False,
    allow_mass_delete: bool = False,
    scope: Scope | None = None,
) -> PlanRun:
    state = workspace.load_state()
    async with workspace.client() as client:
        snapshot = await observe(client, workspace.content, state, scope=scope)
        requests = client.stats.total
    options = workspace.plan_options(
        state, targets=targets, prune=prune, replace_moved=replace_moved, allow_mass_delete=allow_mass_delete
    )
    content = scope.restrict(workspace.content) if scope is not None else workspace.content
    return PlanRun(planner.plan(content, snapshot, state, options), snapshot, state, requests)


def render(plan: Plan, output_format: OutputFormat, *, color: bool) -> str:
    if output_format == "json":
        return render_json(plan)
    if output_format == "markdown":
        return render_markdown(plan)
    return render_text(plan, color=color)


async def run_plan(
    workspace: Workspace,
    *,
    out: TextIO,
    output_format: OutputFormat = "text",
    plan_file: Path | None = None,
    detailed_exitcode: bool = False,
    targets: tuple[str, ...] = (),
    color: bool = False,
) -> int:
    run = await make_plan(workspace, targets=targets)
    out.write(render(run.plan, output_format, color=color))
    if plan_file is not None:
        write_plan_file(run.plan, plan_file)
    if detailed_exitcode and run.plan.has_changes:
        return EXIT_CHANGES
    return EXIT_OK


def write_plan_file(plan: Plan, path: Path) -> None:
    write_atomically(path, plan.model_dump_json(indent=2))


def read_plan_file(path: Path) -> Plan:
    from pydantic import ValidationError

    try:
        return Plan.model_validate_json(path.read_bytes())
    except (OSError, ValidationError) as exc:
        reason = exc.errors()[0]["msg"] if isinstance(exc, ValidationError) else str(exc)
        raise PlanError(f"{path}: not a cmssync plan file ({reason})") from None
