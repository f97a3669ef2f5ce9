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

from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field

from cmssync.content.site import SiteContent
from cmssync.plan.actions import (
    Action,
    BlockedDeletes,
    FieldConflict,
    Guard,
    HeldObject,
    KeptObjects,
    Plan,
    Rebase,
    SiteAdditions,
    SiteChange,
)
from cmssync.plan.builtin_kinds import BUILT_IN_KINDS
from cmssync.plan.kinds import KindFacts, KindInputs, KindPlan, KindTable, PlanOptions
from cmssync.plan.selection import Keyed, check_targets, excluded, matches, targeted
from cmssync.plan.snapshot import Snapshot
from cmssync.plan.warnings import shown
from cmssync.state.records import State

__all__ = ["PlanOptions", "plan"]


@dataclass
class _Joined:
    """Every kind's plan joined: what the plan is made of, restricted once to the targets and excludes."""

    actions: list[Action] = field(default_factory=list)
    blocked: list[BlockedDeletes] = field(default_factory=list)
    kept: list[KeptObjects] = field(default_factory=list)
    conflicts: list[FieldConflict] = field(default_factory=list)
    held: list[HeldObject] = field(default_factory=list)
    additions: list[SiteAdditions] = field(default_factory=list)
    site_changes: list[SiteChange] = field(default_factory=list)
    rebase: list[Rebase] = field(default_factory=list)

    @classmethod
    def of(cls, kinds: Sequence[KindPlan]) -> _Joined:
        """The kinds' plans joined in plan order (deletes apart: they are guarded first)."""
        return cls(
            actions=[action for kind in kinds for action in kind.actions],
            conflicts=[conflict for kind in kinds for conflict in kind.conflicts],
            held=[held for kind in kinds for held in kind.held],
            additions=[addition for kind in kinds for addition in kind.additions],
            site_changes=[change for kind in kinds for change in kind.site_changes],
            rebase=[entry for kind in kinds for entry in kind.rebase],
        )

    def restricted(self, keeps: Callable[[str], bool], actions: list[Action], whole: bool) -> _Joined:
        """These ``actions``, and of the rest what ``keeps`` an object id: a blocked or kept entry whole when any of
        its keys is kept (``whole``), else with only the keys kept."""
        return _Joined(
            actions,
            _entries(self.blocked, keeps, whole),
            _entries(self.kept, keeps, whole),
            [c for c in self.conflicts if keeps(c.id)],
            [h for h in self.held if keeps(h.id)],
            [a for a in self.additions if keeps(f"{a.kind}:{a.key}")],
            [c for c in self.site_changes if keeps(c.id)],
            [r for r in self.rebase if keeps(r.id)],
        )


def _entries(found: list[Keyed], keeps: Callable[[str], bool], whole: bool) -> list[Keyed]:
    if whole:
        return [entry for entry in found if any(keeps(f"{entry.kind}:{key}") for key in entry.keys)]
    trimmed = [e.model_copy(update={"keys": tuple(k for k in e.keys if keeps(f"{e.kind}:{k}"))}) for e in found]
    return [entry for entry in trimmed if entry.keys]


def plan(content: SiteContent, observed: Snapshot, state: State, options: PlanOptions) -> Plan:
    """The plan: every kind's planner in plan order (``KindFacts.plan``, built-in and added kinds alike), their
    deletes guarded together, then the targets and excludes applied once to the joined plan."""
    kinds = options.kinds or BUILT_IN_KINDS
    warnings = [*observed.warnings, *_retired(state)]
    planned: dict[str, KindPlan] = {}
    for facts in kinds.kinds:
        if facts.plan is not None:
            planned[facts.name] = facts.plan(KindInputs(content, observed, state, options, warnings, planned))
    joined = _Joined.of(list(planned.values()))
    candidates = _candidates(list(planned.values()), kinds)
    joined.actions += _guarded(options, kinds, candidates, (content, observed, state), joined)
    joined = _selected(joined, options, kinds, kinds.object_ids(content, state), warnings)
    return Plan(
        site=observed.site_url,
        publish=options.publish,
        content_digest=content.digest(),
        actions=tuple(joined.actions),
        blocked=tuple(joined.blocked),
        kept=tuple(joined.kept),
        conflicts=tuple(joined.conflicts),
        held=tuple(joined.held),
        warnings=tuple(shown(warnings, options.silenced_warnings, kinds.warnings)),
        site_additions=tuple(joined.additions),
        site_changes=tuple(joined.site_changes),
        rebase=tuple(joined.rebase),
    )


def _retired(state: State) -> list[str]:
    if not state.retired_files:
        return []
    return [
        f"{len(state.retired_files)} replaced file(s) left on the site by an earlier run that did not finish "
        f"({', '.join(sorted(r.path for r in state.retired_files.values()))}): the next apply deletes them"
    ]


def _candidates(planned: Sequence[KindPlan], kinds: KindTable) -> dict[str, list[Action]]:
    """Each deleted kind's delete candidates, in delete order (asked for once every kind has planned)."""
    candidates: dict[str, list[Action]] = {facts.name: [] for facts in kinds.deleted}
    for kind in planned:
        for action in kind.deletes():
            candidates[action.kind].append(action)
    return candidates


def _selected(joined: _Joined, options: PlanOptions, kinds: KindTable, known: set[str], warnings: list[str]) -> _Joined:
    """The joined plan restricted to ``--target`` (each action with what it depends on; a blocked or kept entry
    whole when one of its keys is targeted), then without ``--exclude`` (and the actions that need what is
    excluded; the excluded keys of blocked and kept entries)."""
    names = kinds.names
    if options.targets:
        check_targets(options.targets, known | {a.id for a in joined.actions}, kinds=names)
        actions = targeted(joined.actions, options.targets)
        joined = joined.restricted(lambda object_id: matches(object_id, options.targets), actions, whole=True)
    if options.excludes:
        check_targets(options.excludes, known | {a.id for a in joined.actions}, flag="--exclude", kinds=names)
        actions, dependents = excluded(joined.actions, options.excludes)
        if dependents:
            warnings.append(f"left out with the excluded objects they need: {', '.join(dependents)}")
        joined = joined.restricted(lambda object_id: not matches(object_id, options.excludes), actions, whole=False)
    return joined


# --- deletes and guards -------------------------------------------------------------------------------------------


def _guarded(
    options: PlanOptions,
    kinds: KindTable,
    candidates: Mapping[str, list[Action]],
    planned_from: tuple[SiteContent, Snapshot, State],
    joined: _Joined,
) -> list[Action]:
    """The deletes of managed objects the content no longer has (each deleted kind's ``candidates``), held back by
    the mass-delete guards (what they hold goes to ``joined.blocked`` or, with pruning off, ``joined.kept``)."""
    content, observed, state = planned_from
    if not any(candidates.values()):
        return []
    if not observed.complete:
        return []  # an incremental observation cannot know what disappeared
    deleted = [facts for facts in kinds.deleted if candidates[facts.name]]
    empty = options.content_empty
    if empty is None:
        empty = kinds.names_nothing(content)
    if empty:
        joined.blocked += [
            _blocked(options, facts, state, candidates[facts.name], "empty_content") for facts in deleted
        ]
        return []
    if not options.prune:
        joined.kept += [
            KeptObjects(kind=facts.name, keys=tuple(a.key for a in candidates[facts.name])) for facts in deleted
        ]
        return []
    result: list[Action] = []
    for facts in deleted:
        actions = candidates[facts.name]
        managed = len(facts.records_in(state))
        guard = None if options.allow_mass_delete else _guard_hit(len(actions), managed, options)
        if guard is not None:
            joined.blocked.append(_blocked(options, facts, state, actions, guard))
            continue
        result.extend(actions)
    return result


def _blocked(
    options: PlanOptions, facts: KindFacts, state: State, actions: Iterable[Action], guard: Guard
) -> BlockedDeletes:
    limits = {
        "max_deletes": f"max_deletes={options.max_deletes}",
        "max_fraction": f"max_fraction={options.max_fraction}",
    }
    return BlockedDeletes(
        kind=facts.name,
        keys=tuple(a.key for a in actions),
        managed=len(facts.records_in(state)),
        guard=guard,
        limit=limits.get(guard, ""),
    )


def _guard_hit(count: int, managed: int, options: PlanOptions) -> Guard | None:
    if count > options.max_deletes:
        return "max_deletes"
    # A single delete is never "bulk": deleting one of three pages is ordinary pruning.
    if count > 1 and managed > 0 and count / managed > options.max_fraction:
        return "max_fraction"
    return None
