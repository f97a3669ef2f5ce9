"""``plan(desired, observed, state) → Plan``: the pure diff at the heart of cmssync (design.md §5).

Nothing here does I/O or imports the API client. The inputs are the loaded content, a :class:`Snapshot` of the
live objects, the ownership state, and the options of this run; the output is an ordered, dependency-annotated
:class:`Plan`. Planning the result of an apply gives an empty plan, because both sides are compared in the form
the server stores (``cmssync.plan.desired`` and ``cmssync.plan.normalize``).

Rules worth knowing when reading the code:

* Pages are compared in their *recent* version, the one every write modifies. With ``publish: approve`` a page
  that needs no change but carries the unapproved draft of an interrupted cmssync run gets a ``publish`` action;
  someone else's pending draft is never written into or approved by default: the page is held (``Plan.held``)
  under ``on_foreign_draft: fail`` (apply) or ``skip`` (the daemon); ``merge`` writes into it.
* Drift ("changed outside cmssync") is reported when the content of an object is what cmssync last applied (same
  digest as in the state, or per field the recorded base) and yet the site differs: then only the site can have
  changed. When both changed, the field is a three-way conflict (``cmssync.plan.conflicts``), settled by policy;
  unsettled, the page is held back. Ignore rules (``cmssync.plan.ignore``) hide differences editors own.
* Deletes are planned only for objects cmssync manages (in the state), only with pruning on, never for protected
  objects, never from an empty content directory or an incomplete (incremental) observation, and never in bulk
  beyond the guards (``max_deletes``, ``max_fraction``) unless the run explicitly allows it.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Literal

from cmssync.config import ForeignDraftPolicy, GlobalIgnoreRule
from cmssync.content.site import SiteContent
from cmssync.plan.actions import (
    Action,
    BlockedDeletes,
    FieldConflict,
    Guard,
    HeldObject,
    KeptObjects,
    Plan,
)
from cmssync.plan.conflicts import ConflictPolicies, Settling
from cmssync.plan.files import file_deletes, plan_files
from cmssync.plan.groups import plan_groups
from cmssync.plan.kinds import BUILT_IN_KINDS, FILE, PAGE, USER, KindTable
from cmssync.plan.pages import PageContext, page_deletes, plan_pages
from cmssync.plan.selection import check_targets, excluded, matches, targeted, without_keys
from cmssync.plan.snapshot import Snapshot
from cmssync.plan.users import plan_users, user_deletes
from cmssync.plan.warnings import shown
from cmssync.state.records import State


@dataclass(frozen=True)
class PlanOptions:
    base_url: str
    publish: Literal["approve", "draft"] = "approve"
    prune: bool = False
    protect_pages: frozenset[str] = frozenset({"/"})
    protect_users: frozenset[str] = frozenset({"admin"})
    max_deletes: int = 10
    max_fraction: float = 0.25
    allow_mass_delete: bool = False
    targets: tuple[str, ...] = ()
    """``KIND:KEY`` patterns (:mod:`cmssync.plan.selection`); empty means everything."""
    excludes: tuple[str, ...] = ()
    """``KIND:KEY`` patterns left out of the plan, with the actions that need them."""
    replace_moved: bool = False
    api_username: str | None = None
    """The account cmssync acts as: never deleted."""
    passwords_changed: frozenset[str] = frozenset()
    """Usernames whose password (from the environment) differs from the one last applied, or is not known."""
    passwords_unset: frozenset[str] = frozenset()
    """Usernames whose password variable is not set in the environment."""
    existing_pages: frozenset[str] = frozenset()
    conflicts: ConflictPolicies = field(default_factory=ConflictPolicies)
    """How three-way conflicts are settled (``--force``: the content wins everywhere)."""
    on_foreign_draft: ForeignDraftPolicy = "fail"
    """Someone else's pending draft: ``fail`` (apply's default), ``skip`` (the daemon's) or ``merge``."""
    ignore_rules: tuple[GlobalIgnoreRule, ...] = ()
    areas_owned: bool = False
    """The content owns its managed areas (``areas: owned``): blocks editors add are deleted, not kept."""
    silenced_warnings: frozenset[str] = frozenset()
    """Kinds of warnings left out of the plan (``warnings:`` in the settings; :mod:`cmssync.plan.warnings`)."""
    known_ids: frozenset[str] = frozenset()
    """``KIND:KEY`` of the objects of kinds registered with ``cmssync.sync.kinds`` (planned by their own modules):
    what targets and excludes may name besides the objects this planner knows."""
    kinds: KindTable = BUILT_IN_KINDS
    """The kinds this run manages (``cmssync.sync.kinds.discover``'s table)."""
    content_empty: bool | None = None
    """Whether the whole content is empty, when the planner is given a part of it (a ``--target`` run plans its
    scope): the empty-content guard is about the whole content. None: judged from the content planned."""


def plan(
    content: SiteContent, observed: Snapshot, state: State, options: PlanOptions, added: Sequence[Action] = ()
) -> Plan:
    """The plan; ``added`` is what the registered kinds' planners planned (``cmssync.sync.kinds``): their deletes
    are guarded with the built-in kinds' and come last with them, their other actions after the built-in kinds'."""
    warnings: list[str] = list(observed.warnings)
    if state.retired_files:
        warnings.append(
            f"{len(state.retired_files)} replaced file(s) left on the site by an earlier run that did not finish "
            f"({', '.join(sorted(r.path for r in state.retired_files.values()))}): the next apply deletes them"
        )
    file_settling, user_settling = Settling(options.conflicts), Settling(options.conflicts)
    files = plan_files(content, observed, state, warnings, file_settling)
    groups = plan_groups(content, observed, state, warnings)
    context = PageContext(
        content=content,
        observed=observed,
        state=state,
        publish=options.publish,
        base_url=options.base_url,
        file_urls=files.urls,
        file_ids=files.ids,
        changing_files=frozenset(files.changing),
        replace_moved=options.replace_moved,
        ignore_rules=options.ignore_rules,
        conflicts=options.conflicts,
        on_foreign_draft=options.on_foreign_draft,
        protect_pages=options.protect_pages,
        areas_owned=options.areas_owned,
    )
    pages = plan_pages(context, warnings)
    conflicts: list[FieldConflict] = [*file_settling.conflicts, *pages.conflicts]
    held: list[HeldObject] = [*file_settling.held, *pages.held]
    additions = pages.additions
    users = plan_users(
        content, observed, state, options.passwords_changed, options.passwords_unset, warnings, user_settling
    )
    conflicts.extend(user_settling.conflicts)
    held.extend(user_settling.held)

    blocked: list[BlockedDeletes] = []
    kept: list[KeptObjects] = []
    added_deletes = [action for action in added if action.op == "delete"]
    deletes = _deletes(options, pages.moved_from, added_deletes, warnings, blocked, kept, context)
    others = [action for action in added if action.op != "delete"]
    actions = [*groups, *files.actions, *pages.actions, *users, *others, *deletes]
    known = options.kinds.object_ids(content, state) | options.known_ids
    if options.targets:
        check_targets(options.targets, known | {a.id for a in actions}, kinds=options.kinds.names)
        actions = targeted(actions, options.targets)
        blocked = [b for b in blocked if any(matches(f"{b.kind}:{key}", options.targets) for key in b.keys)]
        kept = [k for k in kept if any(matches(f"{k.kind}:{key}", options.targets) for key in k.keys)]
        conflicts = [c for c in conflicts if matches(c.id, options.targets)]
        held = [h for h in held if matches(h.id, options.targets)]
        additions = [a for a in additions if matches(f"{a.kind}:{a.key}", options.targets)]
    if options.excludes:
        check_targets(options.excludes, known | {a.id for a in actions}, flag="--exclude", kinds=options.kinds.names)
        actions, dependents = excluded(actions, options.excludes)
        if dependents:
            warnings.append(f"left out with the excluded objects they need: {', '.join(dependents)}")
        blocked = [b for b in (without_keys(b, options.excludes) for b in blocked) if b.keys]
        kept = [k for k in (without_keys(k, options.excludes) for k in kept) if k.keys]
        conflicts = [c for c in conflicts if not matches(c.id, options.excludes)]
        held = [h for h in held if not matches(h.id, options.excludes)]
        additions = [a for a in additions if not matches(f"{a.kind}:{a.key}", options.excludes)]
    return Plan(
        site=observed.site_url,
        publish=options.publish,
        content_digest=content.digest(),
        actions=tuple(actions),
        blocked=tuple(blocked),
        kept=tuple(kept),
        conflicts=tuple(conflicts),
        held=tuple(held),
        warnings=tuple(shown(warnings, options.silenced_warnings)),
        site_additions=tuple(additions),
    )


# --- deletes and guards -------------------------------------------------------------------------------------------


def _deletes(
    options: PlanOptions,
    moved_from: set[str],
    added: list[Action],
    warnings: list[str],
    blocked: list[BlockedDeletes],
    kept: list[KeptObjects],
    context: PageContext,
) -> list[Action]:
    """The deletes of managed objects the content no longer has (``context`` holds the content, the site and the
    state), held back by the mass-delete guards."""
    content, observed, state = context.content, context.observed, context.state
    candidates = _delete_candidates(options, moved_from, added, warnings, context)
    if not any(candidates.values()):
        return []
    if not observed.complete:
        return []  # an incremental observation cannot know what disappeared
    empty = options.content_empty
    if empty is None:
        empty = options.kinds.names_nothing(content)
    if empty:
        for kind in (facts.name for facts in options.kinds.deleted):
            if candidates[kind]:
                keys = tuple(a.key for a in candidates[kind])
                managed = len(options.kinds[kind].records_in(state))
                blocked.append(BlockedDeletes(kind=kind, keys=keys, managed=managed, guard="empty_content"))
        return []
    if not options.prune:
        kept.extend(
            KeptObjects(kind=kind, keys=tuple(a.key for a in candidates[kind]))
            for kind in (facts.name for facts in options.kinds.deleted)
            if candidates[kind]
        )
        return []
    result: list[Action] = []
    for kind in (facts.name for facts in options.kinds.deleted):
        actions = candidates[kind]
        managed = len(options.kinds[kind].records_in(state))
        guard = None if options.allow_mass_delete else _guard_hit(len(actions), managed, options)
        if actions and guard is not None:
            limit = (
                f"max_deletes={options.max_deletes}"
                if guard == "max_deletes"
                else f"max_fraction={options.max_fraction}"
            )
            blocked.append(
                BlockedDeletes(kind=kind, keys=tuple(a.key for a in actions), managed=managed, guard=guard, limit=limit)
            )
            continue
        result.extend(actions)
    return result


def _guard_hit(count: int, managed: int, options: PlanOptions) -> Guard | None:
    if count > options.max_deletes:
        return "max_deletes"
    # A single delete is never "bulk": deleting one of three pages is ordinary pruning.
    if count > 1 and managed > 0 and count / managed > options.max_fraction:
        return "max_fraction"
    return None


def _delete_candidates(
    options: PlanOptions, moved_from: set[str], added: list[Action], warnings: list[str], context: PageContext
) -> dict[str, list[Action]]:
    """Each deleted kind's deletes of the managed objects the content no longer has (its planner's; a registered
    kind's are in ``added``)."""
    content, observed, state = context.content, context.observed, context.state
    protect_users = options.protect_users | ({options.api_username} if options.api_username else set())
    candidates: dict[str, list[Action]] = {facts.name: [] for facts in options.kinds.deleted}
    candidates[PAGE.name] = page_deletes(context, moved_from, warnings)
    candidates[FILE.name] = file_deletes(content, observed, state)
    candidates[USER.name] = user_deletes(content, observed, state, protect_users, warnings)
    for action in added:
        candidates[action.kind].append(action)
    return candidates


# --- targets ------------------------------------------------------------------------------------------------------
