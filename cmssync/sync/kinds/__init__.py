"""The managed kinds, one module each in this package: every module that declares ``KIND = ManagedKind(...)``
is a kind, found by listing the package (:func:`discover`, as block types are found), once per run, into a
:class:`Registry` that the run passes on (no table is changed after import). A kind is its pure facts
(:class:`~cmssync.plan.kinds.KindFacts`: keys, ids, delete and pull order, scope rule; ``cmssync.plan.kinds``) with
its I/O: how apply executes its actions (:attr:`ManagedKind.apply`), how a saved plan's action is checked
(:attr:`ManagedKind.stale`), how pull takes the site's objects in (:attr:`ManagedKind.pull`), how its content is
validated (:attr:`ManagedKind.validate`), and what the drift feed polls (:attr:`ManagedKind.latest`).

The built-in kinds (groups, files, pages, stacks, users: ``group.py``, ``file.py``, ``page.py``, ``stack.py``,
``user.py``) are planned one module each (``cmssync.plan.pages``, ``files``, ``users``, ``groups``), joined by
``cmssync.plan.planner``, and observed one module each (``cmssync.sync.observe_pages``, ``observe_files``,
``observe_users``, ``observe_groups``), joined by ``cmssync.sync.observe``. A kind added later brings its own
:attr:`ManagedKind.observe` (the live objects, read through the client), :attr:`ManagedKind.plan` (pure: the content
directory, what was observed and the state → actions) and :attr:`ManagedKind.stale`; it keeps its records in
``State.kinds`` (``State.record``/``forget``). Its actions come after the built-in kinds'; with a ``delete_rank`` its
deletes are guarded with theirs (``cmssync.plan.planner``). A new kind is one module here; see
``docs/architecture.md``.
"""

from __future__ import annotations

import importlib
import pkgutil
from collections import Counter
from collections.abc import Awaitable, Callable, Collection, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from cmssync.api.client import ConcreteClient
from cmssync.content.site import SiteContent
from cmssync.errors import Problem
from cmssync.plan.actions import Action
from cmssync.plan.kinds import KindFacts, KindTable
from cmssync.plan.scope_model import Scope
from cmssync.plan.snapshot import Snapshot
from cmssync.state.records import State
from cmssync.sync.engine import Handler
from cmssync.sync.observe_pages import PageProgress
from cmssync.sync.pulling import Puller

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


@dataclass
class ObserveRun:
    """One observation of the site (``cmssync.sync.observe``): the content and the state it covers (restricted to
    the scope in a scoped run), the site's tree homes and address, and what the kinds' readers note as they read
    (warnings, objects that cannot be read, list walks' tie reads)."""

    client: ConcreteClient
    content: SiteContent
    state: State
    scope: Scope | None
    roots: Mapping[str, int]
    """The home page of each locale tree by path (``cmssync.content.trees``)."""
    base_url: str
    pages_read: PageProgress
    warnings: list[str] = field(default_factory=list)
    unreadable: dict[str, str] = field(default_factory=dict)
    ties: Counter[str] = field(default_factory=Counter)


Reader = Callable[[ObserveRun], Awaitable[Mapping[str, Any]]]
"""A built-in kind's read of the site into the snapshot: what it read, by the ``Snapshot`` field it fills (the
kinds' readers run at once, ``cmssync.sync.observe``)."""
Validator = Callable[[SiteContent], list[Problem]]
"""``validate``'s check of the kind's objects in the loaded content: each problem with its file and position."""


@dataclass(frozen=True)
class ManagedKind:
    facts: KindFacts
    apply: Handler
    observe: Observer | None = None
    plan: Planner | None = None
    stale: Stale | None = None
    read: Reader | None = None
    """A built-in kind's read of the site into the snapshot (an added kind observes with :attr:`observe`)."""
    pull: Puller | None = None
    """Takes the site's objects of the kind into the content (``cmssync.sync.pulling``); with it the kind
    declares a ``pull_rank`` (``pull --kind``). None: pull does not read the kind."""
    validate: Validator | None = None
    latest: Latest | None = None
    latest_every: int = 1
    """The drift feed reads :attr:`latest` every this many polls (when the state has records of the kind), else
    the list read every poll (the pages')."""
    latest_by_id: bool = False
    """:attr:`latest` reads one recorded object by its id, the state's objects of the kind taking turns."""

    @property
    def name(self) -> str:
        return self.facts.name


class Registry:
    """The kinds one run manages, in plan order (built-in and added alike), found by :func:`discover`."""

    def __init__(self, kinds: Iterable[ManagedKind]) -> None:
        self.kinds: tuple[ManagedKind, ...] = tuple(sorted(kinds, key=lambda kind: (kind.facts.plan_rank, kind.name)))
        self.table = KindTable(tuple(kind.facts for kind in self.kinds))  # refuses a name managed twice
        self._by_name = {kind.name: kind for kind in self.kinds}
        for kind in self.kinds:
            _check(kind)

    def __iter__(self) -> Iterator[ManagedKind]:
        return iter(self.kinds)

    def __contains__(self, name: object) -> bool:
        return name in self._by_name

    def __getitem__(self, name: str) -> ManagedKind:
        return self._by_name[name]

    @property
    def names(self) -> tuple[str, ...]:
        return self.table.names

    def handlers(self) -> dict[str, Handler]:
        return {kind.name: kind.apply for kind in self.kinds}

    def added(self, names: Collection[str] | None = None) -> list[ManagedKind]:
        """The kinds that observe and plan themselves (not the built-in ones, which ``cmssync.sync.observe`` and
        ``cmssync.plan.planner`` join), in plan order; only those in ``names`` when given."""
        return [kind for kind in self.kinds if kind.plan is not None and (names is None or kind.name in names)]

    def pulled(self) -> list[ManagedKind]:
        """The kinds pull reads, in the order their hooks run (plan order)."""
        return [kind for kind in self.kinds if kind.pull is not None]


def _check(kind: ManagedKind) -> None:
    if kind.facts.keys is not None and (kind.observe is None or kind.plan is None or kind.stale is None):
        raise ValueError(f"kind {kind.name!r}: an added kind brings its observer, planner and precondition check")
    if kind.stale is None:
        raise ValueError(f"kind {kind.name!r}: a kind brings its precondition check (stale)")
    if (kind.pull is None) != (kind.facts.pull_rank is None) and kind.facts.recorded_as is None:
        raise ValueError(f"kind {kind.name!r}: a kind with a pull hook declares its pull_rank, and only then")


def discover(paths: Sequence[str] | None = None) -> Registry:
    """The kinds found by listing this package (its ``__path__``, or ``paths`` when given): each module's ``KIND``.
    Called once per run; importing a module twice costs nothing, so a run never sees another run's kinds."""
    found = []
    for module in pkgutil.iter_modules(list(paths) if paths is not None else __path__):
        declared = getattr(importlib.import_module(f"{__name__}.{module.name}"), "KIND", None)
        if isinstance(declared, ManagedKind):
            found.append(declared)
    return Registry(found)


@dataclass(frozen=True)
class AddedPlan:
    """What the registered kinds plan: their actions, and the actions' ids (``KIND:KEY``: a ``--target`` or
    ``--exclude`` may name them besides the objects the content and the state name, ``object_ids``)."""

    actions: list[Action] = field(default_factory=list)
    ids: frozenset[str] = frozenset()


async def plan_added_kinds(
    kinds: Registry, directory: Path, client: ConcreteClient, state: State, patterns: Iterable[str] | None = None
) -> AddedPlan:
    """Observe and plan the registered kinds: every one, or with ``patterns`` (``KIND:KEY``: targets, or a
    file-change scope's) only the kinds they name. The actions are not yet restricted to the patterns, and their
    deletes not yet guarded (``cmssync.plan.planner.plan`` does, with the built-in kinds' deletes): a kind without
    a ``delete_rank`` deletes nothing."""
    names = None if patterns is None else {pattern.partition(":")[0] for pattern in patterns}
    actions: list[Action] = []
    for kind in kinds.added(names):
        assert kind.observe is not None
        assert kind.plan is not None
        planned = kind.plan(directory, await kind.observe(client, directory, state), state)
        if kind.facts.delete_rank is None and any(action.op == "delete" for action in planned):
            raise ValueError(f"kind {kind.name!r} plans deletes but declares no delete_rank (where they are guarded)")
        actions += planned
    return AddedPlan(actions, frozenset(action.id for action in actions))


async def observe_planned_kinds(
    kinds: Registry, actions: Iterable[Action], directory: Path, client: ConcreteClient, state: State
) -> dict[str, Any]:
    """What the added kinds with an action in a saved plan read now (for :func:`stale_now`)."""
    named = {action.kind for action in actions}
    return {kind.name: await kind.observe(client, directory, state) for kind in kinds.added(named) if kind.observe}


def stale_now(
    kinds: Registry, action: Action, snapshot: Snapshot, added: Mapping[str, Any], state: State
) -> str | None:
    """Why a saved plan's action no longer holds (None: it holds), by its kind's own check (:attr:`ManagedKind.stale`)
    against the site now: the snapshot for the built-in kinds, what its observer read for a registered kind
    (``added``: :func:`observe_planned_kinds`). An object that cannot be read now is never written blind."""
    if action.id in snapshot.unreadable:
        return f"cannot be read now: {snapshot.unreadable[action.id]}"
    if action.kind not in kinds:
        return f"is of a kind this installation does not manage (kinds: {', '.join(kinds.names)})"
    kind = kinds[action.kind]
    assert kind.stale is not None
    return kind.stale(action, added[kind.name] if kind.observe is not None else snapshot, state)
