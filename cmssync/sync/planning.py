"""The one planning path: observe the site, restrict to the request's scope, plan (used by every command).

``plan``, ``apply``, ``status`` and the daemon all call :func:`plan_site`; a saved plan file is read and checked
here too (:func:`load_plan_file`), so "what would apply do" has exactly one answer.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from cmssync import __version__
from cmssync.api.client import ConcreteClient
from cmssync.content.site import SiteContent
from cmssync.errors import PlanError
from cmssync.fileio import write_atomically
from cmssync.plan import planner
from cmssync.plan.actions import Plan, PlanHeader
from cmssync.plan.request import PlanRequest
from cmssync.plan.snapshot import Snapshot
from cmssync.state.records import State
from cmssync.sync.observe import observe
from cmssync.sync.workspace import Workspace


@dataclass(frozen=True)
class PlanRun:
    plan: Plan
    snapshot: Snapshot
    state: State
    requests: int


async def plan_site(
    workspace: Workspace, request: PlanRequest, *, client: ConcreteClient, state: State
) -> tuple[Plan, Snapshot]:
    """Observe what ``request`` covers and plan it, with a client and state the caller holds open."""
    snapshot = await observe(client, workspace.content, state, scope=request.scope)
    content = request.scope.restrict(workspace.content) if request.scope is not None else workspace.content
    plan = planner.plan(content, snapshot, state, workspace.plan_options(state, request))
    return plan.model_copy(update={"header": _header(workspace, request)}), snapshot


def _header(workspace: Workspace, request: PlanRequest) -> PlanHeader:
    options: dict[str, Any] = {
        "targets": list(request.targets),
        "prune": request.prune,
        "replace_moved": request.replace_moved,
        "allow_mass_delete": request.allow_mass_delete,
        "incremental": request.scope is not None,
    }
    return PlanHeader(
        cmssync_version=__version__,
        created_at=datetime.now(UTC).isoformat(timespec="seconds"),
        content_dir=str(workspace.directory),
        options=options,
    )


async def make_plan(workspace: Workspace, request: PlanRequest | None = None) -> PlanRun:
    """A plan on its own (``plan``, ``status``): its own client, the state as it is; writes nothing."""
    state = workspace.load_state()
    async with workspace.client() as client:
        plan, snapshot = await plan_site(workspace, request or PlanRequest(), client=client, state=state)
        return PlanRun(plan, snapshot, state, client.stats.total)


async def load_plan_file(
    path: Path, workspace: Workspace, *, client: ConcreteClient, state: State
) -> tuple[Plan, Snapshot]:
    """A saved plan and the site as it is now; refused when the plan went stale (see :func:`check_fresh`)."""
    plan = read_plan_file(path)
    snapshot = await observe(client, workspace.content, state)
    check_fresh(plan, workspace.content, snapshot)
    return plan, snapshot


def write_plan_file(plan: Plan, path: Path) -> None:
    write_atomically(path, plan.model_dump_json(indent=2))


def read_plan_file(path: Path) -> Plan:
    try:
        return Plan.model_validate_json(path.read_bytes())
    except (OSError, ValidationError) as exc:
        reason = exc.errors()[0]["msg"] if isinstance(exc, ValidationError) else str(exc)
        raise PlanError(f"{path}: not a cmssync plan file ({reason})") from None


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
