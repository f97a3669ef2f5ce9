"""The managed kinds' I/O: for each, how apply executes its actions and how a saved plan's action is checked, and
for a kind added later how it is observed and planned. A kind's pure facts (keys, ids, delete and pull order, scope
rule) are its :class:`~cmssync.plan.kinds.KindFacts` (``cmssync.plan.kinds``, the one table of them, whose names
and order are ``KIND_ORDER``); a :class:`ManagedKind` is those facts with the kind's I/O.

The built-in kinds (groups, files, pages, stacks, users) are planned one module each (``cmssync.plan.pages``,
``files``, ``users``, ``groups``), joined by ``cmssync.plan.planner``, observed one module each
(``cmssync.sync.observe_pages``, ``observe_files``, ``observe_users``, ``observe_groups``), joined by
``cmssync.sync.observe``, and checked by ``cmssync.plan.preconditions``. A kind added with :func:`register` declares
its facts as a built-in kind does (a ``KindFacts`` with ``keys``: the content's objects of the kind, and ``scope``:
which changed content files are its), which :func:`register` adds to the table, and brings its own
:attr:`ManagedKind.observe` (the live objects, read through the client), :attr:`ManagedKind.plan` (pure: the content
directory, what was observed and the state → actions) and :attr:`ManagedKind.stale` (its precondition check when a
saved plan is applied); it keeps its records in ``State.kinds`` (``State.record``/``forget``) and is applied by its
:attr:`ManagedKind.apply`. Its actions come after the built-in kinds'; with a ``delete_rank`` its deletes are guarded
with theirs (``cmssync.plan.planner``). A new kind is one module that calls
:func:`register`; see ``docs/architecture.md``.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Awaitable, Callable, Collection, Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from cmssync.api.client import ConcreteClient
from cmssync.plan.actions import Action
from cmssync.plan.kinds import FILE, GROUP, PAGE, STACK, USER, KindFacts, add, remove
from cmssync.plan.preconditions import stale_file, stale_group, stale_page, stale_user
from cmssync.plan.snapshot import Snapshot
from cmssync.state.records import State
from cmssync.sync.apply_assets import apply_file, apply_group, apply_user
from cmssync.sync.apply_pages import apply_page
from cmssync.sync.apply_stacks import apply_stack
from cmssync.sync.engine import Handler

Observer = Callable[[ConcreteClient, Path, State], Awaitable[Any]]
"""Reads what the site holds of the kind: (client, content directory, state) → the kind's observed objects. For a
saved plan's freshness check the directory may not exist (``cmssync.sync.plan_files``): read the site, not it."""
Planner = Callable[[Path, Any, State], list[Action]]
"""Pure: (content directory, what the observer read, state) → the kind's actions."""
Stale = Callable[[Action, Any, State], str | None]
"""A saved plan's action of the kind against what the observer reads now and the state: why its precondition no
longer holds (``"exists on the site now"``), or None."""
Latest = Callable[[ConcreteClient, int, Any], Awaitable[list[tuple[str, Any]]]]
"""What the daemon's drift feed reads of a kind to notice editors' changes: (client, limit, after) → (id as the
state records it, lowercase; its mark). Either the kind's site list sorted by modification, newest first (``after``:
the last id of the previous page or None; the mark: the date of the last change, which orders the list), or, for a
kind in no list (:attr:`ManagedKind.latest_by_id`), one object the state records read by its id (``after``: that
id; the mark: whatever an edit changes in that read, compared with the mark its previous read showed)."""


@dataclass(frozen=True)
class ManagedKind:
    facts: KindFacts
    apply: Handler
    observe: Observer | None = None
    plan: Planner | None = None
    stale: Stale | None = None
    latest: Latest | None = None
    latest_every: int = 1
    """The drift feed reads :attr:`latest` every this many polls (when the state has records of the kind), else
    the list read every poll (the pages')."""
    latest_by_id: bool = False
    """:attr:`latest` reads one recorded object by its id, the state's objects of the kind taking turns."""

    @property
    def name(self) -> str:
        return self.facts.name


async def _latest_pages(client: ConcreteClient, limit: int, after: Any) -> list[tuple[str, dt.datetime | None]]:
    return [(str(page.id), page.date_last_updated) for page in await client.latest_pages(limit=limit, after=after)]


async def _stack_mark(client: ConcreteClient, limit: int, after: Any) -> list[tuple[str, Any]]:
    """A stack is in no list; its recent version moves on every write and ``date_last_updated`` on an approval or a
    page update (``tests/conformance/concrete-9.3.1/stack-feed.jsonl``): one ``GET /pages/{id}?version=recent``."""
    page = await client.get_page(int(after), version="recent")
    return [(str(page.id), (page.date_last_updated, page.version.id if page.version is not None else None))]


async def _latest_files(client: ConcreteClient, limit: int, after: Any) -> list[tuple[str, dt.datetime | None]]:
    return [(file.id.lower(), file.date_added) for file in await client.latest_files(limit=limit, after=after)]


KINDS: dict[str, ManagedKind] = {
    kind.name: kind
    for kind in (
        ManagedKind(GROUP, apply_group, stale=stale_group),
        ManagedKind(FILE, apply_file, stale=stale_file, latest=_latest_files, latest_every=3),
        ManagedKind(PAGE, apply_page, stale=stale_page, latest=_latest_pages),
        ManagedKind(STACK, apply_stack, stale=stale_page, latest=_stack_mark, latest_every=2, latest_by_id=True),
        ManagedKind(USER, apply_user, stale=stale_user),
    )
}


def register(kind: ManagedKind) -> None:
    """Manage one more kind: its facts join the table (``cmssync.plan.kinds.add``), its actions come after the
    built-in kinds'."""
    if kind.observe is None or kind.plan is None or kind.stale is None:
        raise ValueError(f"kind {kind.name!r}: a registered kind brings its observer, planner and precondition check")
    add(kind.facts)
    KINDS[kind.name] = kind


def unregister(name: str) -> None:
    """Forget a registered kind (the built-in kinds stay)."""
    if KINDS.get(name) is not None and KINDS[name].plan is not None:
        del KINDS[name]
        remove(name)


def handlers() -> dict[str, Handler]:
    return {name: kind.apply for name, kind in KINDS.items()}


def added_kinds(names: Collection[str] | None = None) -> list[ManagedKind]:
    """The registered kinds (not the built-in ones), in plan order; only those in ``names`` when given."""
    return [kind for kind in KINDS.values() if kind.plan is not None and (names is None or kind.name in names)]


@dataclass(frozen=True)
class AddedPlan:
    """What the registered kinds plan: their actions, and the actions' ids (``KIND:KEY``: a ``--target`` or
    ``--exclude`` may name them besides the objects the content and the state name, ``object_ids``)."""

    actions: list[Action] = field(default_factory=list)
    ids: frozenset[str] = frozenset()


async def plan_added_kinds(
    directory: Path, client: ConcreteClient, state: State, patterns: Iterable[str] | None = None
) -> AddedPlan:
    """Observe and plan the registered kinds: every one, or with ``patterns`` (``KIND:KEY``: targets, or a
    file-change scope's) only the kinds they name. The actions are not yet restricted to the patterns, and their
    deletes not yet guarded (``cmssync.plan.planner.plan`` does, with the built-in kinds' deletes): a kind without
    a ``delete_rank`` deletes nothing."""
    names = None if patterns is None else {pattern.partition(":")[0] for pattern in patterns}
    actions: list[Action] = []
    for kind in added_kinds(names):
        assert kind.observe is not None
        assert kind.plan is not None
        planned = kind.plan(directory, await kind.observe(client, directory, state), state)
        if kind.facts.delete_rank is None and any(action.op == "delete" for action in planned):
            raise ValueError(f"kind {kind.name!r} plans deletes but declares no delete_rank (where they are guarded)")
        actions += planned
    return AddedPlan(actions, frozenset(action.id for action in actions))


async def observe_planned_kinds(
    actions: Iterable[Action], directory: Path, client: ConcreteClient, state: State
) -> dict[str, Any]:
    """What the registered kinds with an action in a saved plan read now (for :func:`stale_now`)."""
    named = {action.kind for action in actions}
    return {kind.name: await kind.observe(client, directory, state) for kind in added_kinds(named) if kind.observe}


def stale_now(action: Action, snapshot: Snapshot, added: Mapping[str, Any], state: State) -> str | None:
    """Why a saved plan's action no longer holds (None: it holds), by its kind's own check (:attr:`ManagedKind.stale`)
    against the site now: the snapshot for the built-in kinds, what its observer read for a registered kind
    (``added``: :func:`observe_planned_kinds`). An object that cannot be read now is never written blind."""
    if action.id in snapshot.unreadable:
        return f"cannot be read now: {snapshot.unreadable[action.id]}"
    kind = KINDS[action.kind]
    assert kind.stale is not None
    return kind.stale(action, added[kind.name] if kind.observe is not None else snapshot, state)
