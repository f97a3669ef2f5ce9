"""The one planning path: observe the site, restrict to the request's scope, plan (used by every command).

``plan``, ``apply``, ``status`` and the daemon all call :func:`plan_site`, so "what would apply do" has exactly one
answer; a saved plan file is written, read and checked by ``cmssync.sync.plan_files``.

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
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

import structlog

from cmssync import __version__
from cmssync.api.client import ConcreteClient
from cmssync.content.paths import object_page_path, page_object_id
from cmssync.content.site import SiteContent
from cmssync.errors import ConfigError, ContentError
from cmssync.plan import planner
from cmssync.plan.actions import Plan, PlanHeader
from cmssync.plan.locales import locale_problems
from cmssync.plan.planner import PlanOptions
from cmssync.plan.request import PlanRequest
from cmssync.plan.scope import (
    WholeSite,
    replace_companions,
    replaced_files,
    scope_after_observation,
    scope_for_targets,
    with_changed_users,
    with_references,
)
from cmssync.plan.scope_model import Scope
from cmssync.plan.selection import check_targets
from cmssync.plan.snapshot import Snapshot
from cmssync.plan.unreadable import hold_unreadable
from cmssync.state.records import State
from cmssync.sync.kinds import Registry
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
    if not workspace.has_content:  # planned from nothing, every managed object would be deleted
        raise ConfigError(f"content directory {workspace.directory} does not exist")
    options = workspace.plan_options(state, request)
    header: dict[str, Any] = {"header": _header(workspace, request)}
    companions: list[str] = []
    if request.targets:
        known = workspace.kinds.table.object_ids(workspace.content, state)
        check_targets(options.targets, known, kinds=workspace.kinds.table.names)
        companions = replace_companions(workspace.content, state, options.targets)
        if companions:
            options = dataclasses.replace(options, targets=(*options.targets, *map(page_object_id, companions)))
    if request.targets and request.scope is None:
        targeted = await _observe_targets(workspace, options, client=client, state=state)
        if targeted is not None:
            content, snapshot = targeted
            options = dataclasses.replace(options, content_empty=workspace.kinds.table.names_nothing(workspace.content))
            plan, snapshot = await _plan_observed(content, snapshot, state, options, client)
            plan = _with_companions(plan, workspace.content, state, request.targets, companions)
            update = {**header, "content_digest": workspace.content.digest(), **_observed_facts(snapshot)}
            return plan.model_copy(update=update), snapshot
    scope = request.scope
    if scope is not None:
        scope = with_changed_users(scope, workspace.content, state, options.passwords_changed)
    scope, snapshot = await _observe_incremental(client, workspace.content, state, scope, workspace.kinds)
    content = scope.restrict(workspace.content) if scope is not None else workspace.content
    plan, snapshot = await _plan_observed(content, snapshot, state, options, client)
    plan = _with_companions(plan, workspace.content, state, request.targets, companions)
    return plan.model_copy(update={**header, **_observed_facts(snapshot)}), snapshot


def _observed_facts(snapshot: Snapshot) -> dict[str, Any]:
    """What the plan reports of the observation itself: its tied-date reads, and the site's locale trees when
    there are several (each object's tree is then named)."""
    return {"tie_reads": dict(snapshot.tie_reads), "trees": snapshot.trees.homes if snapshot.trees.multiple else {}}


async def _observe_incremental(
    client: ConcreteClient, content: SiteContent, state: State, scope: Scope | None, kinds: Registry
) -> tuple[Scope | None, Snapshot]:
    """The scope to plan and the snapshot: the whole site, or an incremental scope grown by what its references
    need (``with_references``); when that cannot be placed, the whole site is read and marked incomplete, so the
    scoped plan resolves every reference and still plans no delete."""
    if scope is None:
        return None, await observe(client, content, state, kinds=kinds)
    grown = with_references(scope, content, state)
    if isinstance(grown, Scope):
        return grown, await observe(client, content, state, scope=grown, kinds=kinds)
    log.debug("incremental run reads the whole site", reason=grown.reason)
    return scope, dataclasses.replace(await observe(client, content, state, kinds=kinds), complete=False)


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
    planned = sorted({path for a in plan.actions if (path := object_page_path(a.kind, a.key)) in companions})
    pages = ", ".join(planned) if planned else "none needs a change"
    note = (
        f"file {', '.join(files)} is replaced and its old copy deleted: the pages that link to it are planned too "
        f"({pages})"
    )
    return plan.model_copy(update={"warnings": (*plan.warnings, note)})


async def _plan_observed(
    content: SiteContent,
    snapshot: Snapshot,
    state: State,
    options: PlanOptions,
    client: ConcreteClient,
) -> tuple[Plan, Snapshot]:
    """Plan, then read the pages to write on their own and plan again (the module docstring's two phases). A page
    file's ``locale:`` the site's trees contradict is a located error first (``cmssync.plan.locales``)."""
    problems = locale_problems(content.pages, snapshot.trees)
    if problems:
        raise ContentError(problems)
    plan = hold_unreadable(planner.plan(content, snapshot, state, options), snapshot, state, options.kinds)
    to_write = pages_to_write(plan, snapshot, state)
    if to_write:
        snapshot = await read_pages_alone(client, snapshot, to_write)
        plan = hold_unreadable(planner.plan(content, snapshot, state, options), snapshot, state, options.kinds)
    return plan, snapshot


async def _observe_targets(
    workspace: Workspace, options: PlanOptions, *, client: ConcreteClient, state: State
) -> tuple[SiteContent, Snapshot] | None:
    """The content to plan and the snapshot of a ``--target`` run's scope, or None: read the whole site (logged).

    A malformed or unmatched target is refused here, before anything is read.
    """
    content = workspace.content
    found = scope_for_targets(
        content, state, options.targets, prune=options.prune, replace_moved=options.replace_moved, table=options.kinds
    )
    for _ in range(TARGET_ROUNDS):
        if isinstance(found, WholeSite):
            log.debug("targeted plan reads the whole site", targets=list(options.targets), reason=found.reason)
            return None
        scope = found
        snapshot = await observe(client, content, state, scope=scope, kinds=workspace.kinds)
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
    keys = {path for action in plan.actions if (path := object_page_path(action.kind, action.key))}
    keys |= {path for held in plan.held if (path := object_page_path(held.kind, held.key))}
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
    if workspace.settings.environment:  # --env: which environment's settings the plan is for
        options["environment"] = workspace.settings.environment
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
