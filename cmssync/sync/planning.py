"""The one planning path: observe the site, restrict to the request's scope, plan (used by every command).

``plan``, ``apply``, ``status`` and the daemon all call :func:`plan_site`; a saved plan file is read and checked
here too (:func:`load_plan_file`), so "what would apply do" has exactly one answer.

Planning runs in two phases, because the API's batched page reads (a tree level with areas and attributes in one
request, ``cmssync.sync.observe``) show only the live version of each page, never a pending draft:

1. observe (pages mostly in batches) and plan. A page whose live version matches the content needs nothing, draft
   or not: cmssync does not write there, so someone else's draft is none of its business.
2. the pages the first plan would write (every page action, every held page) and those whose state records a draft
   of cmssync's (an interrupted run, to be approved) are read again on their own, in their recent version
   (:func:`cmssync.sync.observe.read_pages_alone`), and the whole plan is made again from that snapshot. So every
   write, every foreign-draft decision (``on_foreign_draft``) and every "approve the draft left by an interrupted
   run" is planned against the version the writes will modify, exactly as when every page was read on its own.

The second plan cannot add work for a page the first found unchanged (its view did not change), so one round is
enough. A no-op plan costs only the first phase.

``--target`` runs read only their scope (``cmssync.plan.scope.scope_for_targets``): the targets and what their plan
depends on, computed from the content and the state before anything is read. The observation may show that more is
needed (a managed page of the scope is missing from the site: it will be created again, so its parents, references
and possible move sources matter), and is then made again with the grown scope. The planner gets the scoped content
plus every content page the observation happened to read (a page the state manages that was read but not planned
would look like one the content dropped: a move source or a delete candidate), and the snapshot without files
managed for other content paths; so it plans, for the targets, exactly what the whole-site plan plans. Where the
scope cannot be computed safely the whole site is read, as before, and the reason logged at debug level. A targeted
file that the plan replaces brings the pages linking to it into the targets (``cmssync.plan.scope.replace_companions``,
named in a warning): the old copy is deleted after the upload, and a page not re-pointed would keep a broken link.

An incremental run (the daemon's: ``request.scope``) whose scope holds every user because ``users.yaml`` changed
reads only the users it can change (``cmssync.plan.scope.with_changed_users``), by id when the state knows them.

Objects that exist but could not be read (``Snapshot.unreadable``) are held, with what depends on them, by
``cmssync.plan.unreadable.hold_unreadable`` after each plan; the rest of the site is planned as usual.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path, PurePosixPath
from typing import Any

import structlog
from pydantic import ValidationError

from cmssync import __version__
from cmssync.api.client import ConcreteClient
from cmssync.content.site import SiteContent
from cmssync.errors import PlanError
from cmssync.fileio import write_atomically
from cmssync.plan import planner
from cmssync.plan.actions import Action, Plan, PlanHeader, markup_free_json
from cmssync.plan.assets import file_hash
from cmssync.plan.planner import PlanOptions
from cmssync.plan.request import PlanRequest
from cmssync.plan.scope import (
    Scope,
    WholeSite,
    object_ids,
    replace_companions,
    replaced_files,
    scope_after_observation,
    scope_for_targets,
    with_changed_users,
    with_references,
)
from cmssync.plan.selection import check_targets, excluded, targeted
from cmssync.plan.snapshot import Snapshot
from cmssync.plan.unreadable import hold_unreadable
from cmssync.state.records import State
from cmssync.sync.kinds import AddedPlan, is_added, observe_planned_kinds, plan_added_kinds, stale_added
from cmssync.sync.observe import observe, read_pages_alone
from cmssync.sync.workspace import Workspace


@dataclass(frozen=True)
class PlanRun:
    plan: Plan
    snapshot: Snapshot
    state: State
    requests: int


log = structlog.get_logger("cmssync.plan")
TARGET_ROUNDS = 3
"""Observations of a targeted scope before it is given up for the whole site (one, unless pages are missing)."""


async def plan_site(
    workspace: Workspace, request: PlanRequest, *, client: ConcreteClient, state: State
) -> tuple[Plan, Snapshot]:
    """Observe what ``request`` covers and plan it, with a client and state the caller holds open."""
    added = await _plan_added(workspace, request, client, state)
    options = dataclasses.replace(workspace.plan_options(state, request), known_ids=added.ids)
    header: dict[str, Any] = {"header": _header(workspace, request)}
    companions: list[str] = []
    if request.targets:
        check_targets(options.targets, object_ids(workspace.content, state) | added.ids)
        companions = replace_companions(workspace.content, state, options.targets)
        if companions:
            options = dataclasses.replace(options, targets=(*options.targets, *(f"page:{p}" for p in companions)))
    if request.targets and request.scope is None:
        targeted = await _observe_targets(workspace, options, client=client, state=state)
        if targeted is not None:
            content, snapshot = targeted
            whole = workspace.content
            options = dataclasses.replace(
                options, content_empty=not (whole.pages or whole.files or whole.users or whole.groups)
            )
            plan, snapshot = await _plan_observed(content, snapshot, state, options, client)
            plan = _with_companions(plan, workspace.content, state, request.targets, companions)
            update = {**header, "content_digest": whole.digest(), "tie_reads": dict(snapshot.tie_reads)}
            return plan.model_copy(update={**update, "actions": (*plan.actions, *added.actions)}), snapshot
    scope = request.scope
    if scope is not None:
        scope = with_changed_users(scope, workspace.content, state, options.passwords_changed)
    scope, snapshot = await _observe_incremental(client, workspace.content, state, scope)
    content = scope.restrict(workspace.content) if scope is not None else workspace.content
    plan, snapshot = await _plan_observed(content, snapshot, state, options, client)
    plan = _with_companions(plan, workspace.content, state, request.targets, companions)
    header["actions"] = (*plan.actions, *added.actions)
    return plan.model_copy(update={**header, "tie_reads": dict(snapshot.tie_reads)}), snapshot


async def _plan_added(workspace: Workspace, request: PlanRequest, client: ConcreteClient, state: State) -> AddedPlan:
    """The registered kinds' part of the plan (``cmssync.sync.kinds``): in a full plan every registered kind, with
    targets or a file-change scope the kinds they name; restricted to the targets, the scope and the excludes as
    the planner restricts the built-in kinds' actions."""
    patterns = request.scope.kinds if request.scope is not None else request.targets or None
    added = await plan_added_kinds(workspace.directory, client, state, patterns)
    actions = added.actions if patterns is None else targeted(added.actions, patterns)
    if request.excludes:
        actions, _dependents = excluded(actions, request.excludes)
    return dataclasses.replace(added, actions=actions)


async def _observe_incremental(
    client: ConcreteClient, content: SiteContent, state: State, scope: Scope | None
) -> tuple[Scope | None, Snapshot]:
    """The scope to plan and the snapshot: the whole site, or an incremental scope grown by what its references
    need (``with_references``); when that cannot be placed, the whole site is read and marked incomplete, so the
    scoped plan resolves every reference and still plans no delete."""
    if scope is None:
        return None, await observe(client, content, state)
    grown = with_references(scope, content, state)
    if isinstance(grown, Scope):
        return grown, await observe(client, content, state, scope=grown)
    log.debug("incremental run reads the whole site", reason=grown.reason)
    return scope, dataclasses.replace(await observe(client, content, state), complete=False)


def _with_companions(
    plan: Plan, content: SiteContent, state: State, targets: tuple[str, ...], companions: list[str]
) -> Plan:
    """Say which pages a targeted file replace brought into the plan (see the module docstring)."""
    if not companions:
        return plan
    replacing = {a.key for a in plan.actions if a.kind == "file" and a.op == "replace"}
    files = [path for path in replaced_files(content, state, targets) if path in replacing]
    if not files:
        return plan
    planned = sorted({a.key for a in plan.actions if a.kind == "page" and a.key in companions})
    pages = ", ".join(planned) if planned else "none needs a change"
    note = (
        f"file {', '.join(files)} is replaced and its old copy deleted: the pages that link to it are planned too "
        f"({pages})"
    )
    return plan.model_copy(update={"warnings": (*plan.warnings, note)})


async def _plan_observed(
    content: SiteContent, snapshot: Snapshot, state: State, options: PlanOptions, client: ConcreteClient
) -> tuple[Plan, Snapshot]:
    """Plan, then read the pages to write on their own and plan again (the module docstring's two phases)."""
    plan = hold_unreadable(planner.plan(content, snapshot, state, options), snapshot, state)
    to_write = pages_to_write(plan, snapshot, state)
    if to_write:
        snapshot = await read_pages_alone(client, snapshot, to_write)
        plan = hold_unreadable(planner.plan(content, snapshot, state, options), snapshot, state)
    return plan, snapshot


async def _observe_targets(
    workspace: Workspace, options: PlanOptions, *, client: ConcreteClient, state: State
) -> tuple[SiteContent, Snapshot] | None:
    """The content to plan and the snapshot of a ``--target`` run's scope, or None: read the whole site (logged).

    A malformed or unmatched target is refused here, before anything is read.
    """
    content = workspace.content
    found = scope_for_targets(content, state, options.targets, prune=options.prune, replace_moved=options.replace_moved)
    for _ in range(TARGET_ROUNDS):
        if isinstance(found, WholeSite):
            log.debug("targeted plan reads the whole site", targets=list(options.targets), reason=found.reason)
            return None
        scope = found
        snapshot = await observe(client, content, state, scope=scope)
        found = scope_after_observation(scope, content, state, snapshot.pages, snapshot.unreadable)
        if found == scope:
            return _planned_part(scope, content, state, snapshot)
    log.debug("targeted plan reads the whole site", targets=list(options.targets), reason="the scope kept growing")
    return None


def _planned_part(scope: Scope, content: SiteContent, state: State, snapshot: Snapshot) -> tuple[SiteContent, Snapshot]:
    """The content a targeted run plans and the snapshot it plans from (see the module docstring)."""
    read = frozenset(path for path in snapshot.pages if path in content.pages)
    planned = dataclasses.replace(scope, pages=scope.pages | read).restrict(content)
    managed = {str(record.id).lower(): path for path, record in state.files.items()}
    files = {
        file_id: live
        for file_id, live in snapshot.files.items()
        if file_id not in managed or managed[file_id] in scope.files
    }
    return planned, dataclasses.replace(snapshot, files=files)


def pages_to_write(plan: Plan, snapshot: Snapshot, state: State) -> list[str]:
    """Batched pages whose drafts the plan needs to see (the module docstring's second phase): pages with an
    action or held, and pages with a draft of cmssync's on record."""
    keys = {action.key for action in plan.actions if action.kind == "page"}
    keys |= {held.key for held in plan.held if held.kind == "page"}
    keys |= {path for path, record in state.pages.items() if record.draft_version_id is not None}
    return snapshot.batched_pages(keys)


def _header(workspace: Workspace, request: PlanRequest) -> PlanHeader:
    options: dict[str, Any] = {
        "targets": list(request.targets),
        "excludes": list(request.excludes),
        "prune": request.prune,
        "replace_moved": request.replace_moved,
        "allow_mass_delete": request.allow_mass_delete,
        "force": request.force,
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
    snapshot = await read_pages_alone(client, snapshot, pages_to_write(plan, snapshot, state))
    added = await observe_planned_kinds(plan.actions, workspace.directory, client, state)
    check_fresh(plan, workspace.content, snapshot, state, added)
    return plan, snapshot


def write_plan_file(plan: Plan, path: Path) -> None:
    """The plan as JSON, markup escaped (:func:`markup_free_json`), written atomically."""
    write_atomically(path, markup_free_json(plan.model_dump_json(indent=2)))


def read_plan_file(path: Path) -> Plan:
    try:
        return Plan.model_validate_json(path.read_bytes())
    except (OSError, ValidationError) as exc:
        reason = exc.errors()[0]["msg"] if isinstance(exc, ValidationError) else str(exc)
        raise PlanError(f"{path}: not a cmssync plan file ({reason})") from None


def check_fresh(
    plan: Plan, content: SiteContent, snapshot: Snapshot, state: State, added: Mapping[str, Any] | None = None
) -> None:
    """Refuse a plan file whose content changed, or one of whose preconditions no longer holds on the site.

    Every action's precondition is checked against ``snapshot`` (the site now) and ``state``: an object the action
    changes or deletes must still exist (a page also still at the live version the plan saw), and an object the
    action creates must still be absent (``Precondition.absent``). A plan file applied twice, say by a re-run CI
    job, is so refused instead of creating ``/news-1``, a second group and second copies of every file. An action of
    a registered kind is checked by the kind's own check against what its observer read now (``added``, by kind:
    ``cmssync.sync.kinds.observe_planned_kinds``).
    """
    if plan.content_digest != content.digest():
        raise PlanError("the plan file is stale: the content changed since it was made; run `cmssync plan` again")
    if plan.site.rstrip("/") != snapshot.site_url.rstrip("/"):
        raise PlanError(f"the plan file was made for {plan.site}, not {snapshot.site_url}")
    for action in plan.actions:
        if is_added(action.kind):
            problem = stale_added(action, added or {}, state)
        else:
            problem = _stale(action, content, snapshot, state)
        if problem is not None:
            raise PlanError(f"the plan file is stale: {action.kind} {action.key} {problem}; run `cmssync plan` again")


def _stale(action: Action, content: SiteContent, snapshot: Snapshot, state: State) -> str | None:
    """Why ``action``'s precondition no longer holds, or None."""
    if action.id in snapshot.unreadable:  # its precondition cannot be checked: never written blind
        return f"cannot be read now: {snapshot.unreadable[action.id]}"
    condition = action.precondition
    if condition.absent:
        found = _present(action, content, snapshot, state)
        return f"exists on the site now ({found}), and the plan was made to create it" if found else None
    if condition.remote_id is None:
        return None
    remote = condition.remote_id
    if action.kind == "page":
        live = snapshot.pages_by_id.get(int(remote))
        if live is None:
            return f"(id {remote}) no longer exists on the site"
        expected = condition.live_version_id
        if expected is not None and live.live_version_id != expected:
            return f"was published since (live version {live.live_version_id}, the plan expected {expected})"
        return None
    if action.kind == "file":
        return _stale_file(action, remote.lower(), content, snapshot, state)
    if action.kind == "user" and not any(str(user.id) == remote for user in snapshot.users.values()):
        return f"(user id {remote}) no longer exists on the site"
    return None


def _stale_file(action: Action, remote: str, content: SiteContent, snapshot: Snapshot, state: State) -> str | None:
    """A file action's site file must still exist; an adoption's (the state does not know the path yet) must still
    be one that holds the content's bytes and that nothing else claims (observe hashed it again just now)."""
    live = snapshot.files.get(remote)
    if live is None:
        return f"(site file {remote}) no longer exists on the site"
    spec = content.files.get(action.key)
    if action.op == "delete" or spec is None or action.key in state.files:
        return None
    if live.sha256 != file_hash(spec):
        return f"was to adopt site file {remote}, which no longer holds its bytes or is now managed as another file"
    return None


def _present(action: Action, content: SiteContent, snapshot: Snapshot, state: State) -> str | None:
    """What now stands where ``action`` was planned to create something, described; None if it is still absent."""
    key = action.key
    if action.kind == "page":
        page = snapshot.pages.get(key)
        return f"page id {page.id}" if page is not None else None
    if action.kind == "group":
        group = snapshot.groups.get(key)
        return f"group id {group.id}" if group is not None else None
    if action.kind == "user":
        user = snapshot.users.get(key)
        return f"user id {user.id}" if user is not None else None
    record = state.files.get(key)
    if record is not None and str(record.id).lower() in snapshot.files:
        return f"site file {str(record.id).lower()}, recorded in the state"
    spec = content.files.get(key)
    if spec is None:
        return None
    managed = {str(r.id).lower() for r in state.files.values()}
    adoptable, _same = snapshot.file_to_adopt(
        PurePosixPath(key).name, spec.folder_id, spec.size, file_hash(spec), managed
    )
    return f"site file {adoptable.id} with the same bytes" if adoptable is not None else None
