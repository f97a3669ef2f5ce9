"""What is worth telling someone after a run: events derived from runs, one per change of state.

A scheduled run every ten minutes on a site with one drifted page must not send a message every ten minutes. So the
:class:`EventTracker` keeps, per kind of event, the objects currently in that state with a *fingerprint* of how
(an object's drifted field names and live values, a pending change's operation, a conflict's fields, a blocked
delete's guard), and an event names only the objects that entered the state or whose fingerprint changed. The
same drift seen by ten runs: one event; a new drifted object, or the same page edited again on the site: another.

* ``run_failed`` on the first failure, and again only when the failure changes (other failed objects, another
  reason); ``recovered`` on the first success after failures. An interrupted run (SIGTERM) is neither.
* ``drift_found`` (report mode and suspended runs): objects changed on the site since cmssync applied them; in
  every mode, the editors' changes the drift policy keeps on the site (``Plan.site_changes``, ``drift: propose``);
  ``changes_pending``: content changes not applied (create, update, delete, move) — keyed by operation, so editing a
  file already pending does not notify again.
* ``drift_reverted`` (enforce mode): drifted objects the run overwrote successfully. An object whose revert does not
  stick (reverted by every run with the same live values) is reported once; once a run sees it clean, a later
  revert is news again.
* ``conflict``: objects changed both in the content and on the site (:func:`conflicted_objects` reads them from
  the plan — the one place to adapt as the planner's conflict model grows).
* ``objects_held``: objects the plan held back and nothing was written to — a page with an editor's draft (skipped
  by default), an object that cannot be read (conflicts have their own event) — keyed by reason and draft version,
  so a new draft on the same page is news again.
* ``deletes_blocked``: deletes the prune guards held back (``plan.blocked``), tracked by full runs only (incremental
  runs never plan deletes).
* ``change_proposed`` / ``change_adopted`` / ``proposal_failed``: editors' approved changes committed to the
  proposal branch (``drift: propose``) or to the checked-out branch (``drift: adopt``), or the commit or push that
  failed; made by :mod:`.proposals`, not by this tracker: each carries its :class:`Proposal` and every field's
  value before and after.

An incremental run updates only the objects its scope covers. The tracker lives in memory: a restarted daemon
reports the state it finds once. When the mode a run takes changes (suspend, resume), the mode-specific states start
afresh, so drift still present after a resume is reported again in its new form.
"""

from __future__ import annotations

import hashlib
import json
import uuid
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any, Literal, get_args

from cmssync.config.daemon import NotifyEvent
from cmssync.plan.actions import Action, BlockChange, FieldChange, Plan, SiteChange
from cmssync.plan.builtin_kinds import BUILT_IN_KINDS
from cmssync.plan.kinds import KindTable
from cmssync.plan.scope_model import Scope
from cmssync.sync.engine import Outcome
from cmssync.sync.pulled_changes import FieldValues

EventType = NotifyEvent
"""The event types are the ones a notifier's ``events`` setting may name: one list."""
EVENT_TYPES: tuple[EventType, ...] = get_args(NotifyEvent)
Severity = Literal["info", "warning", "error"]
SEVERITY: dict[EventType, Severity] = {
    "run_failed": "error",
    "recovered": "info",
    "drift_found": "warning",
    "changes_pending": "info",
    "drift_reverted": "warning",
    "conflict": "warning",
    "deletes_blocked": "warning",
    "objects_held": "warning",
    "change_proposed": "info",
    "change_adopted": "info",
    "proposal_failed": "error",
}


@dataclass(frozen=True)
class EventObject:
    """One object an event is about: ``kind:key``, the planned operation, the fields involved and, where known,
    their values before and after (a drifted field: the site's value, then the content's; a proposed one: the
    content's, then the site's)."""

    kind: str
    key: str
    op: str | None = None
    fields: tuple[str, ...] = ()
    detail: str | None = None
    tree: str | None = None
    """The locale tree of a page or stack on a site with several (``Plan.tree_of``)."""
    values: tuple[FieldValues, ...] = ()

    @property
    def id(self) -> str:
        return f"{self.kind}:{self.key}"


@dataclass(frozen=True)
class Proposal:
    """Where the daemon committed editors' changes (:mod:`.proposals`): the branch, the commit (None when it
    failed before one was made), the remote and git's summary of the push, the pull request's address."""

    branch: str
    commit: str | None = None
    remote: str | None = None
    pushed: str | None = None
    pull_request: str | None = None


@dataclass(frozen=True)
class Event:
    type: EventType
    summary: str
    run_id: str
    trigger: str
    mode: str
    objects: tuple[EventObject, ...] = ()
    """The objects that entered this state (or changed within it) with this run."""
    total: int = 0
    """How many objects are in this state now (the new ones included)."""
    reason: str | None = None
    problems: tuple[str, ...] = ()
    proposal: Proposal | None = None
    """A ``change_proposed``, ``change_adopted`` or ``proposal_failed`` event's branch, commit and push."""
    id: str = field(default_factory=lambda: uuid.uuid4().hex)
    time: str = field(default_factory=lambda: datetime.now(UTC).isoformat(timespec="seconds"))

    @property
    def severity(self) -> Severity:
        return SEVERITY[self.type]


@dataclass(frozen=True)
class RunFacts:
    """What the tracker needs to know about a finished run."""

    run_id: str
    trigger: str
    mode: str
    scope: Scope | None
    result: str
    """``success``, ``failure`` or ``interrupted``."""
    reason: str = ""
    problems: tuple[str, ...] = ()
    plan: Plan | None = None
    outcomes: tuple[Outcome, ...] = ()


class ObjectState:
    """The objects currently in one state, ``id → fingerprint``."""

    def __init__(self, kinds: KindTable = BUILT_IN_KINDS) -> None:
        self.current: dict[str, str] = {}
        self.kinds = kinds

    def update(self, seen: Mapping[str, str], scope: Scope | None) -> list[str]:
        """Take what a run saw (``scope``: the part of the site it looked at; None: all); the ids that are news."""
        news = sorted(object_id for object_id, mark in seen.items() if self.current.get(object_id) != mark)
        if scope is None:
            self.current = dict(seen)
        else:
            kept = {
                object_id: mark for object_id, mark in self.current.items() if not self.kinds.in_scope(scope, object_id)
            }
            self.current = kept | dict(seen)
        return news

    def clear(self) -> None:
        self.current = {}


def _digest(value: Any) -> str:
    return hashlib.sha256(json.dumps(value, sort_keys=True, default=str).encode()).hexdigest()[:16]


def drift_mark(action: Action) -> str:
    """How an object drifted: its changed fields with their live values (a second edit on the site is news)."""
    return _digest(
        [
            action.op,
            [(c.field, c.before) for c in action.changes],
            [(b.area, b.place, b.before) for b in action.blocks],
        ]
    )


def action_fields(action: Action) -> tuple[str, ...]:
    names = [change.field for change in action.changes]
    names += [f"{block.area}#{block.place} ({block.op} {block.block_type})" for block in action.blocks]
    return tuple(dict.fromkeys(names))


def conflicted_objects(plan: Plan) -> dict[str, EventObject]:
    """Objects the plan reports as conflicted, by id.

    Reads ``plan.conflicts`` (:class:`~cmssync.plan.actions.FieldConflict`, one entry per field, settled by a
    policy or not: ``cmssync.plan.conflicts``); entries with ``fields`` instead of ``field`` are read too.
    """
    found: dict[str, EventObject] = {}
    for entry in getattr(plan, "conflicts", None) or ():
        kind, key = str(getattr(entry, "kind", "")), str(getattr(entry, "key", ""))
        if not kind or not key:
            continue
        names = [str(getattr(entry, "field", "") or "")] + [str(n) for n in getattr(entry, "fields", None) or ()]
        object_id = f"{kind}:{key}"
        before = found.get(object_id)
        merged = tuple(dict.fromkeys([*(before.fields if before else ()), *(n for n in names if n)]))
        found[object_id] = EventObject(
            kind=kind, key=key, fields=merged, detail="changed in the content and on the site"
        )
    return found


class EventTracker:
    """Turns finished runs into events, deduplicated (see the module docstring)."""

    def __init__(self, kinds: KindTable = BUILT_IN_KINDS) -> None:
        self.failure: str | None = None
        """Fingerprint of the failure being reported (None: the last run did not fail)."""
        self.failures = 0
        self.mode: str | None = None
        self.drifted = ObjectState(kinds)
        self.pending = ObjectState(kinds)
        self.reverted = ObjectState(kinds)
        self.conflicts = ObjectState(kinds)
        self.blocked = ObjectState(kinds)
        self.held = ObjectState(kinds)

    def observe(self, run: RunFacts) -> list[Event]:
        if run.result == "interrupted":
            return []
        if run.mode != self.mode:
            for state in (self.drifted, self.pending, self.reverted):
                state.clear()
            self.mode = run.mode
        events = self._health(run)
        if run.plan is not None:
            events += self._plan_events(run, run.plan)
        return events

    def _event(self, run: RunFacts, type_: EventType, summary: str, **values: Any) -> Event:
        return Event(type=type_, summary=summary, run_id=run.run_id, trigger=run.trigger, mode=run.mode, **values)

    def _health(self, run: RunFacts) -> list[Event]:
        if run.result == "success":
            failures, self.failures, self.failure = self.failures, 0, None
            if failures:
                plural = "s" if failures != 1 else ""
                return [
                    self._event(run, "recovered", f"Recovered: a run succeeded after {failures} failed run{plural}")
                ]
            return []
        self.failures += 1
        failed = sorted(o.action.id for o in run.outcomes if o.status == "failed")
        mark = _digest(failed) if failed else _digest([run.reason, run.problems])
        if mark == self.failure:
            return []
        self.failure = mark
        objects = tuple(
            EventObject(o.action.kind, o.action.key, o.action.op, detail=o.message)
            for o in run.outcomes
            if o.status == "failed"
        )
        return [
            self._event(
                run,
                "run_failed",
                f"Run failed: {run.reason or 'unknown error'}",
                objects=objects,
                total=len(objects),
                reason=run.reason,
                problems=run.problems,
            )
        ]

    def _plan_events(self, run: RunFacts, plan: Plan) -> list[Event]:
        events: list[Event] = []
        objects = {a.id: _object(a, plan) for a in plan.actions}
        objects |= {c.id: _site_object(c, plan) for c in plan.site_changes}
        kept = {c.id: site_change_mark(c) for c in plan.site_changes}  # drift: propose/adopt, in every mode
        drifted = {a.id: drift_mark(a) for a in plan.actions if a.drift} if run.mode == "report" else {}
        events += self._reported(
            run,
            self.drifted,
            drifted | kept,
            objects,
            "drift_found",
            lambda total, news: (
                f"Drift found: {total} object{_s(total)} changed on the site ({len(news)} new): {_ids(news)}"
            ),
        )
        if run.mode == "report":
            events += self._reported(
                run,
                self.pending,
                {a.id: a.op for a in plan.actions if not a.drift},
                objects,
                "changes_pending",
                lambda total, news: f"{total} content change{_s(total)} not applied (report mode): {_ids(news)}",
            )
        else:
            done = {o.action.id: drift_mark(o.action) for o in run.outcomes if o.status == "ok" and o.action.drift}
            news = self.reverted.update(done, run.scope)
            if news:
                reverted = tuple(objects[i] for i in news)
                summary = f"Reverted {len(news)} object{_s(len(news))} changed on the site: {_ids(news)}"
                events.append(self._event(run, "drift_reverted", summary, objects=reverted, total=len(news)))
        conflicted = conflicted_objects(plan)
        news = self.conflicts.update({i: _digest(o.fields) for i, o in conflicted.items()}, run.scope)
        if news:
            total = len(self.conflicts.current)
            summary = f"Conflict: {total} object{_s(total)} changed both in the content and on the site: {_ids(news)}"
            shown = tuple(conflicted[i] for i in news)
            events.append(self._event(run, "conflict", summary, objects=shown, total=total))
        events += self._held(run, plan)
        if run.scope is None:
            events += self._blocked(run, plan)
        return events

    def _reported(
        self,
        run: RunFacts,
        state: ObjectState,
        marks: Mapping[str, str],
        objects: Mapping[str, EventObject],
        type_: EventType,
        summary: Callable[[int, list[str]], str],
    ) -> list[Event]:
        """One event when ``marks`` (object id -> mark) name objects ``state`` had not seen yet; its total counts
        every object ``state`` holds now."""
        news = state.update(marks, run.scope)
        if not news:
            return []
        total = len(state.current)
        return [self._event(run, type_, summary(total, news), objects=tuple(objects[i] for i in news), total=total)]

    def _held(self, run: RunFacts, plan: Plan) -> list[Event]:
        entries = {entry.id: entry for entry in plan.held if entry.reason != "conflict"}
        marks = {i: _digest([e.reason, e.draft.version_id if e.draft else None]) for i, e in entries.items()}
        news = self.held.update(marks, run.scope)
        if not news:
            return []
        objects = tuple(
            EventObject(entries[i].kind, entries[i].key, detail=entries[i].message) for i in news if i in entries
        )
        total = len(self.held.current)
        summary = f"Held back: {total} object{_s(total)} nothing was written to: {_ids(news)}"
        return [self._event(run, "objects_held", summary, objects=objects, total=total)]

    def _blocked(self, run: RunFacts, plan: Plan) -> list[Event]:
        held = {f"{entry.kind}:{key}": entry.guard for entry in plan.blocked for key in entry.keys}
        news = self.blocked.update(held, None)
        if not news:
            return []
        reasons = tuple(entry.describe() for entry in plan.blocked)
        objects = tuple(
            EventObject(entry.kind, key, "delete", detail=f"guard {entry.limit or entry.guard}")
            for entry in plan.blocked
            for key in entry.keys
            if f"{entry.kind}:{key}" in news
        )
        total = len(held)
        summary = f"Prune guard held back {total} delete{_s(total)}: {'; '.join(reasons)}"
        return [self._event(run, "deletes_blocked", summary, objects=objects, total=total, problems=reasons)]


def _object(action: Action, plan: Plan) -> EventObject:
    tree = plan.tree_of(action.kind, action.key)
    values = field_values(action.changes, action.blocks)
    return EventObject(action.kind, action.key, action.op, action_fields(action), action.note, tree, values)


def _site_object(change: SiteChange, plan: Plan) -> EventObject:
    """A site change the drift policy keeps (``propose``/``adopt``): its fields, and what becomes of it."""
    op = f"site change ({change.action})"
    tree = plan.tree_of(change.kind, change.key)
    values = field_values(change.changes, change.blocks)
    return EventObject(change.kind, change.key, op, change.fields, change.describe(), tree, values)


def field_values(changes: Iterable[FieldChange], blocks: Iterable[BlockChange]) -> tuple[FieldValues, ...]:
    """Fields and blocks with their values before and after, as the plan has them (an action: the site's, then the
    content's; a site change: the content's, then the site's); a sensitive field (a password) has none."""
    values = [FieldValues(c.field, c.before, c.after) for c in changes if not c.sensitive]
    values += [FieldValues(f"{b.area}#{b.place} ({b.op} {b.block_type})", b.before, b.after) for b in blocks]
    return tuple(values)


def site_change_mark(change: SiteChange) -> str:
    """How a kept site change looks: its fields with the site's values (a second edit on the site is news)."""
    return _digest([[(c.field, c.after) for c in change.changes], [(b.area, b.place, b.after) for b in change.blocks]])


def _s(count: int) -> str:
    return "" if count == 1 else "s"


def _ids(ids: list[str], limit: int = 5) -> str:
    shown = ", ".join(ids[:limit])
    return shown + (f" and {len(ids) - limit} more" if len(ids) > limit else "")
