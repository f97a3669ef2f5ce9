"""The managed kinds, one module each in this package: every module that declares ``KIND = ManagedKind(...)``
is a kind, found by listing the package (:func:`discover`, as block types are found), once per run, into a
:class:`Registry` that the run passes on (no table is changed after import). A kind is its pure facts
(:class:`~cmssync.plan.kinds.KindFacts`: keys, ids, delete and pull order, scope rule; ``cmssync.plan.kinds``) with
its I/O: how apply executes its actions (:attr:`ManagedKind.apply`), how a saved plan's action is checked
(:attr:`ManagedKind.stale`), how pull takes the site's objects in (:attr:`ManagedKind.pull`), how its content is
validated (:attr:`ManagedKind.validate`), and what the drift feed polls (:attr:`ManagedKind.latest`).

The built-in kinds (groups, files, pages, stacks, users: ``group.py``, ``file.py``, ``page.py``, ``stack.py``,
``user.py``) bring their reader (:attr:`ManagedKind.read`), run at once by ``cmssync.sync.observe``, and their pure
planner (``KindFacts.plan``), run in plan order by ``cmssync.plan.planner``. A kind added later brings its own
:attr:`ManagedKind.observe` (the live objects, read through the client), :attr:`ManagedKind.plan` (pure: the content
directory, what was observed and the state → actions, each create and update carrying its object's desired form,
``Action.form``, which its applier writes: apply never reads the content) and :attr:`ManagedKind.stale`, which the
:class:`Registry` joins to the same loops; it keeps its records in ``State.kinds`` (``State.record``/``forget``).
Its actions come after the built-in kinds'; with a ``delete_rank`` its deletes are guarded with theirs. A new kind
is one module here; see ``docs/architecture.md``.
"""

from __future__ import annotations

import importlib
import pkgutil
from collections import Counter
from collections.abc import Awaitable, Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from cmssync.api.client import ConcreteClient
from cmssync.content.site import SiteContent
from cmssync.errors import Problem
from cmssync.plan.actions import Action
from cmssync.plan.kinds import KindFacts, KindInputs, KindPlan, KindPlanner, KindTable
from cmssync.plan.scope_model import Scope
from cmssync.plan.selection import targeted
from cmssync.plan.snapshot import Snapshot
from cmssync.state.records import State
from cmssync.sync.engine import Handler
from cmssync.sync.observe_pages import PageProgress
from cmssync.sync.pulling import Puller

Observer = Callable[[ConcreteClient, Path, State], Awaitable[Any]]
"""Reads what the site holds of the kind: (client, content directory, state) → the kind's observed objects. For a
saved plan's freshness check the directory may not exist (``cmssync.sync.plan_files``): read the site, not it."""
Planner = Callable[[Path, Any, State], list[Action]]
"""Pure: (content directory, what the observer read, state) → the kind's actions; a create or update carries its
object's desired form (``Action.form``), from which the kind's applier writes it."""
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
    kinds: dict[str, Any] = field(default_factory=dict)
    """What the added kinds read (``Snapshot.kinds``)."""


Binder = Callable[[ConcreteClient, int], Awaitable[tuple[Any, str]]]
"""``cmssync import`` of an object of the kind by its site id: (client, id) → the record that binds it and how the
site names it (``user jane``); the API's 404 error when the site has no such object (``cmssync refresh`` then
forgets the record)."""
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
    bind: Binder | None = None
    """Binds a site object to a key by its id (``import``) and tells whether it is still there (``refresh``); None:
    not imported by id (a page's import is ``cmssync.sync.state_ops``'s own: its record takes the content's page)."""

    @property
    def name(self) -> str:
        return self.facts.name


class Registry:
    """The kinds one run manages, in plan order (built-in and added alike), found by :func:`discover`. A kind that
    observes and plans itself (:attr:`ManagedKind.observe`, :attr:`ManagedKind.plan`) joins the same loops as the
    built-in kinds: its observer becomes its reader (:func:`_added_reader`: ``Snapshot.kinds``) and its planner its
    pure planner hook (:func:`_added_planner`)."""

    def __init__(self, found: Iterable[ManagedKind]) -> None:
        kinds = tuple(found)
        for kind in kinds:
            _check(kind)
        joined = [_joined(kind) for kind in kinds]
        self.kinds: tuple[ManagedKind, ...] = tuple(sorted(joined, key=lambda kind: (kind.facts.plan_rank, kind.name)))
        self.table = KindTable(tuple(kind.facts for kind in self.kinds))  # refuses a name managed twice
        self._by_name = {kind.name: kind for kind in self.kinds}

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


def _joined(kind: ManagedKind) -> ManagedKind:
    """A kind that observes and plans itself, with its reader and pure planner hook (the others as they are)."""
    if kind.observe is None or kind.plan is None:
        return kind
    facts = replace(kind.facts, plan=_added_planner(kind.name, kind.plan, kind.facts.delete_rank is not None))
    return replace(kind, facts=facts, read=_added_reader(kind.name, kind.observe))


@dataclass(frozen=True)
class _Observed:
    """What an added kind's observer read (``Snapshot.kinds``), and the ``KIND:KEY`` patterns of its objects a
    scoped run plans (None: every object)."""

    value: Any
    patterns: tuple[str, ...] | None


def _added_reader(name: str, observe: Observer) -> Reader:
    async def read(run: ObserveRun) -> Mapping[str, Any]:
        patterns = None
        if run.scope is not None:  # a scoped run reads the kind only when its scope names it
            patterns = tuple(p for p in run.scope.kinds if p.partition(":")[0] == name)
            if not patterns:
                return {}
        run.kinds[name] = _Observed(await observe(run.client, run.content.root, run.state), patterns)
        return {}

    return read


def _added_planner(name: str, plan: Planner, deletes: bool) -> KindPlanner:
    def planned(given: KindInputs) -> KindPlan:
        observed = given.observed.kinds.get(name)
        if not isinstance(observed, _Observed):
            return KindPlan()  # not read: out of the run's scope
        actions = plan(given.content.root, observed.value, given.state)
        if observed.patterns is not None:
            actions = targeted(actions, observed.patterns)
        _check_planned(name, actions, deletes)
        kept = [action for action in actions if action.op != "delete"]
        return KindPlan(kept, lambda: [action for action in actions if action.op == "delete"])

    return planned


def _check_planned(name: str, actions: list[Action], deletes: bool) -> None:
    """An added kind's planner keeps the contract: a delete only with a ``delete_rank`` (where deletes are
    guarded), and every other action with its desired form (``Action.form``: what its applier writes)."""
    broken = []
    if not deletes and any(action.op == "delete" for action in actions):
        broken.append("plans deletes but declares no delete_rank (where they are guarded)")
    formless = [f"{action.op} of {action.key}" for action in actions if action.op != "delete" and action.form is None]
    if formless:
        broken.append(f"plans without the desired form (Action.form: what apply writes): {', '.join(formless)}")
    if broken:
        raise ValueError(f"kind {name!r} " + "; ".join(broken))


def discover(paths: Sequence[str] | None = None) -> Registry:
    """The kinds found by listing this package (its ``__path__``, or ``paths`` when given): each module's ``KIND``.
    Called once per run; importing a module twice costs nothing, so a run never sees another run's kinds."""
    found = []
    for module in pkgutil.iter_modules(list(paths) if paths is not None else __path__):
        declared = getattr(importlib.import_module(f"{__name__}.{module.name}"), "KIND", None)
        if isinstance(declared, ManagedKind):
            found.append(declared)
    return Registry(found)


def stale_now(kinds: Registry, action: Action, snapshot: Snapshot, state: State) -> str | None:
    """Why a saved plan's action no longer holds (None: it holds), by its kind's own check (:attr:`ManagedKind.stale`)
    against the site now: the snapshot, or for a kind that observes itself what its observer read now
    (``Snapshot.kinds``). An object that cannot be read now is never written blind, nor an added kind's create or
    update without its desired form (its applier writes from it)."""
    if action.id in snapshot.unreadable:
        return f"cannot be read now: {snapshot.unreadable[action.id]}"
    if action.kind not in kinds:
        return f"is of a kind this installation does not manage (kinds: {', '.join(kinds.names)})"
    kind = kinds[action.kind]
    if kind.observe is not None and action.op != "delete" and action.form is None:
        return "carries no desired form (a plan file written before an added kind's actions carried one, Action.form)"
    assert kind.stale is not None
    observed = snapshot.kinds.get(kind.name)
    return kind.stale(action, observed.value if isinstance(observed, _Observed) else snapshot, state)
