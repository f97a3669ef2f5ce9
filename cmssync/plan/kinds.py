"""The managed kinds' pure facts, one :class:`KindFacts` each, in plan order: the one table of them.

Each kind says here what is true of it without any I/O: the keys its content and its state records name, its
object ids (``KIND:KEY``), whether and in which order a prune deletes it, and which changed content files are its
(its scope rule, for the daemon's file-change runs), and its pure planner. The built-in kinds' facts are listed in
``cmssync.plan.builtin_kinds``; each kind module
of ``cmssync.sync.kinds`` (built-in or added) brings its facts with its I/O, and the kinds found there make one
:class:`KindTable` per run (``cmssync.sync.kinds.discover``), so object ids, targets, scope rules and ``in_scope``
read an added kind like a built-in one. Nothing here is changed after import.
A stack is planned and recorded as its page (``/!stacks/<handle>``): its content and records are the page kind's,
which names them ``stack:<handle>`` (``cmssync.content.paths.page_object_id``).
"""

from __future__ import annotations

import functools
import operator
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field, fields
from typing import Any, Literal

from cmssync.config import ForeignDraftPolicy, GlobalIgnoreRule
from cmssync.content.lists import list_kind
from cmssync.content.paths import page_object
from cmssync.content.site import SiteContent
from cmssync.plan.actions import Action, FieldConflict, HeldObject, Rebase, SiteAdditions, SiteChange
from cmssync.plan.conflicts import ConflictPolicies
from cmssync.plan.drift import DriftPolicies
from cmssync.plan.scope_model import Scope
from cmssync.plan.snapshot import Snapshot
from cmssync.state.records import State

_SCOPE_FIELDS = frozenset(part.name for part in fields(Scope))
"""The kinds a :class:`Scope` names by a field of their own (pages, files, users); the others by pattern."""

PathScope = Callable[[str], Scope | None]
"""A changed content file (POSIX, relative to the content directory) → what a run must plan for it, or None when
the file is not the kind's; raises ``ValueError`` for a file of the kind that is not valid (a full run reports it)."""


@dataclass(frozen=True)
class KindFacts:
    name: str
    plural: str
    """Also the name of the kind's objects in the content (``SiteContent.files``), the state (``State.files``) and a
    scope (``Scope.files``), unless they are another kind's."""
    object_id: Callable[[str], str] | None = None
    """A key's ``KIND:KEY`` id; None: ``<name>:<key>``."""
    delete_rank: int | None = None
    """Where a prune deletes the kind's objects (lowest first: pages 0, then files 1, then users 2; an added kind's
    deletes, which its planner plans, are guarded with these at its rank); None: never."""
    pull_rank: int | None = None
    """Where pull lists the kind (``--kind``'s choices, what it did not take in); None: pull does not take it (an
    added kind with a pull hook declares one, after the built-in kinds': 5 or more)."""
    scope: PathScope | None = None
    recorded_as: Callable[[str], str] | None = None
    """A key → the key of the other kind's object it is kept as (a stack's handle → its page path); None: the kind
    keeps its own objects."""
    binds: str | None = None
    """What its records' ids name on the site (``group``, ``user``, …; None: its own name): two kinds that bind
    the same site objects (a kind added over groups, and the group kind) never bind one object twice
    (:meth:`KindTable.shared_bindings`)."""
    plan_rank: int = 100
    """Where the kind is planned and shown (the built-in kinds 0-4: groups, files, pages, stacks, users; a kind
    added later after them, by name at equal ranks)."""
    plan: KindPlanner | None = None
    """The kind's pure planner (:class:`KindInputs` → :class:`KindPlan`), run by ``cmssync.plan.planner`` in plan
    order; None: planned by another kind (a stack: the pages') or, for a kind added later, by its own module
    (``ManagedKind.plan``)."""
    warnings: tuple[tuple[str, str], ...] = ()
    """The kinds of warnings its planner gives that the ``warnings:`` setting silences: (name, the pattern its
    warnings begin with; :mod:`cmssync.plan.warnings`)."""
    keys: Callable[[SiteContent], Iterable[str]] | None = None
    """A kind added later (:func:`add`), which ``SiteContent``, ``State`` and ``Scope`` have no field for: the keys
    of its objects that the content names (read from ``content.root``); its records are ``State.records_of(name)``
    and a scope names its objects in ``Scope.kinds``. None: a built-in kind."""

    def keys_in(self, content: SiteContent) -> Iterable[str]:
        """The keys of the content's objects of the kind (a stack's are its page kind's)."""
        if self.keys is not None:
            return self.keys(content)
        if self.recorded_as is not None:
            return ()
        return content.of(self.name) if list_kind(self.name) is not None else getattr(content, self.plural)

    def records_in(self, state: State) -> Mapping[str, Any]:
        """The state's records of the kind by key (a stack's are its page kind's)."""
        return {} if self.recorded_as is not None else state.records_of(self.name)

    def kept_in(self, state: State) -> Mapping[str, Any]:
        """The state's records of the kind's objects by key, also those kept as another kind's (a stack's handle →
        its page's record)."""
        if self.recorded_as is None:
            return self.records_in(state)
        kept = ((path, page_object(path)) for path in state.pages)
        return {key: state.pages[path] for path, (kind, key) in kept if kind == self.name}

    def scoped(self, keys: frozenset[str]) -> Scope:
        """The scope that plans these objects of the kind."""
        if self.recorded_as is not None:
            return Scope(pages=frozenset(self.recorded_as(key) for key in keys))
        if self.keys is not None or self.plural not in _SCOPE_FIELDS:
            return Scope(kinds=frozenset(map(self.id_of, keys)))
        named: dict[str, Any] = {self.plural: keys}
        return Scope(**named)

    @property
    def site_objects(self) -> str:
        """What its records' ids name on the site (:attr:`binds`)."""
        return self.binds or self.name

    def id_of(self, key: str) -> str:
        return self.object_id(key) if self.object_id is not None else f"{self.name}:{key}"


def _checked_added(kind: KindFacts) -> KindFacts:
    """An added kind names its content's objects (``keys``) and keeps its own records."""
    if kind.keys is None or kind.recorded_as is not None:
        raise ValueError(
            f"kind {kind.name!r}: an added kind names its content's objects (keys) and keeps its own records (no "
            "recorded_as)"
        )
    return kind


@dataclass(frozen=True)
class KindTable:
    """The kinds one run manages, in plan order: built per run (``cmssync.sync.kinds.discover``), never changed.
    Everything that reads the kinds' facts (ids, scopes, the delete guards, bindings) reads one table."""

    kinds: tuple[KindFacts, ...]

    def __post_init__(self) -> None:
        names = [kind.name for kind in self.kinds]
        doubled = sorted({name for name in names if names.count(name) > 1})
        if doubled:
            raise ValueError(f"kind {doubled[0]!r} is managed twice")
        for kind in self.kinds:
            if kind.plan is None and kind.recorded_as is None:  # an added kind (it plans itself, for now)
                _checked_added(kind)

    def with_kinds(self, *added: KindFacts) -> KindTable:
        """This table with more kinds after its own."""
        return KindTable((*self.kinds, *added))

    @property
    def names(self) -> tuple[str, ...]:
        """The kinds' names in plan order (``cmssync.plan.actions`` ``Kind`` is one of these in a run)."""
        return tuple(kind.name for kind in self.kinds)

    def __contains__(self, name: object) -> bool:
        return any(kind.name == name for kind in self.kinds)

    def __getitem__(self, name: str) -> KindFacts:
        for kind in self.kinds:
            if kind.name == name:
                return kind
        raise KeyError(name)

    @property
    def warnings(self) -> tuple[tuple[str, str], ...]:
        """Every kind's own kinds of warnings (:attr:`KindFacts.warnings`)."""
        return tuple(warning for kind in self.kinds for warning in kind.warnings)

    @property
    def deleted(self) -> tuple[KindFacts, ...]:
        """The kinds a prune deletes, in delete order (guarded, blocked and kept in this order)."""
        return tuple(sorted((k for k in self.kinds if k.delete_rank is not None), key=lambda k: k.delete_rank or 0))

    @property
    def pulled(self) -> tuple[str, ...]:
        """The kinds pull takes in, in its order (``pull --kind``: those with a ``pull_rank``)."""
        ranked = sorted((k for k in self.kinds if k.pull_rank is not None), key=lambda k: k.pull_rank or 0)
        return tuple(kind.name for kind in ranked)

    def object_ids(self, content: SiteContent, state: State) -> set[str]:
        """``KIND:KEY`` of every object of the content or the state (what a target may name)."""
        ids: set[str] = set()
        for kind in self.kinds:
            ids.update(kind.id_of(key) for key in [*kind.keys_in(content), *kind.records_in(state)])
        for name, records in state.kinds.items():
            ids.update(f"{name}:{key}" for key in records)
        return ids

    def names_nothing(self, content: SiteContent) -> bool:
        """Whether the content names no object of any kind (planned from it, every managed object would be
        deleted)."""
        return not any(kind.keys_in(content) for kind in self.kinds)

    def path_scope(self, name: str) -> Scope | None:
        """What a changed content file asks a run to plan (the scope rules of the kinds it is of); None: no
        kind's."""
        found = [scope for kind in self.kinds if kind.scope and (scope := kind.scope(name)) is not None]
        return functools.reduce(operator.or_, found) if found else None

    def scope_of(self, object_ids: Iterable[str]) -> Scope:
        """The scope that plans these objects (``KIND:KEY``) of the managed kinds, each by its kind's rule."""
        keys: dict[str, set[str]] = {}
        for object_id in object_ids:
            kind, _, key = object_id.partition(":")
            keys.setdefault(kind, set()).add(key)
        scope = Scope()
        for kind, named in keys.items():
            if kind in self:
                scope |= self[kind].scoped(frozenset(named))
        return scope

    def in_scope(self, scope: Scope, object_id: str) -> bool:
        """Whether ``scope`` plans the object ``KIND:KEY`` of a managed kind."""
        return object_id.partition(":")[0] in self and scope.holds(self.scope_of([object_id]))

    def shared_bindings(self, state: State) -> list[str]:
        """One line per site object the state binds more than once — to two keys of a kind (a page id, a file, a
        user id), or to keys of two kinds that bind the same site objects (a kind added over groups, and the group
        kind) — each with the fix: one site object has one binding (issue 26), or an apply would rewrite it from
        two files and a prune would delete it for the one that is gone."""
        bound: dict[tuple[str, str], list[tuple[KindFacts, str]]] = {}
        for kind in self.kinds:
            for key, record in kind.records_in(state).items():
                bound.setdefault((kind.site_objects, str(record.id).lower()), []).append((kind, key))
        return [_shared(site, object_id, keys) for (site, object_id), keys in sorted(bound.items()) if len(keys) > 1]

    def bound_by_others(self, kind: str, state: State) -> dict[str, str]:
        """The site objects of ``kind``'s sort that other kinds bind: id (lowercase) → ``KIND KEY`` (pull takes a
        site object in as one kind's only)."""
        site = self[kind].site_objects
        return {
            str(record.id).lower(): f"{other.name} {key}"
            for other in self.kinds
            if other.name != kind and other.site_objects == site
            for key, record in other.records_in(state).items()
        }


def _shared(site: str, object_id: str, keys: list[tuple[KindFacts, str]]) -> str:
    kinds = {kind.name for kind, _key in keys}
    if len(kinds) == 1:
        kind = keys[0][0]
        named = " and ".join(sorted(key for _kind, key in keys))
        what = f"{kind.name} {object_id} of the site to {len(keys)} {kind.plural}, {named}"
    else:
        named = " and ".join(sorted(f"{kind.name} {key}" for kind, key in keys))
        what = f"{site} {object_id} of the site to {len(keys)} objects of {len(kinds)} kinds, {named}"
    fix = (
        "Run `cmssync pull` (it keeps the binding that matches the site and lists the others), or remove the extra "
        "record from the state file"
        if len(kinds) == 1
        else "Remove the record of the kind that must not manage it from the state file (pull takes a site object "
        "in as one kind's only)"
    )
    return f"the state binds {what}: one site object has one binding. {fix}"


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
    drift: DriftPolicies = field(default_factory=DriftPolicies)
    """What becomes of an editor's change to what the content did not change (``cmssync.plan.drift``)."""
    on_foreign_draft: ForeignDraftPolicy = "fail"
    """Someone else's pending draft: ``fail`` (apply's default), ``skip`` (the daemon's) or ``merge``."""
    ignore_rules: tuple[GlobalIgnoreRule, ...] = ()
    areas_owned: bool = False
    """The content owns its managed areas (``areas: owned``): blocks editors add are deleted, not kept."""
    silenced_warnings: frozenset[str] = frozenset()
    """Kinds of warnings left out of the plan (``warnings:`` in the settings; :mod:`cmssync.plan.warnings`)."""
    kinds: KindTable | None = None
    """The kinds this run manages (``cmssync.sync.kinds.discover``'s table); None: the built-in kinds
    (``cmssync.plan.builtin_kinds.BUILT_IN_KINDS``)."""
    content_empty: bool | None = None
    """Whether the whole content is empty, when the planner is given a part of it (a ``--target`` run plans its
    scope): the empty-content guard is about the whole content. None: judged from the content planned."""


@dataclass
class KindPlan:
    """What one kind planned: its actions (creates, updates, moves: each carrying its desired form), its delete
    candidates (the managed objects the content no longer has; guarded by the planner, with every kind's), the
    three-way conflicts and held objects of its settling, the blocks editors added to its objects, and what a later
    kind reads of it (``shared``: the files' URLs and ids, for the pages)."""

    actions: list[Action] = field(default_factory=list)
    deletes: Callable[[], list[Action]] = list
    """Its delete candidates, asked for once every kind has planned (they may need what its plan found)."""
    conflicts: list[FieldConflict] = field(default_factory=list)
    held: list[HeldObject] = field(default_factory=list)
    additions: list[SiteAdditions] = field(default_factory=list)
    site_changes: list[SiteChange] = field(default_factory=list)
    """Editors' changes its drift policy keeps on the site (``cmssync.plan.drift``)."""
    rebase: list[Rebase] = field(default_factory=list)
    """Objects whose content caught up with the site: their base is recorded by apply."""
    shared: Any = None


@dataclass(frozen=True)
class KindInputs:
    """What a kind's pure planner reads: the content, the site observed, the state, the run's options; where it
    says what it noticed (``warnings``); and what the kinds planned before it did (``planned``, by name)."""

    content: SiteContent
    observed: Snapshot
    state: State
    options: PlanOptions
    warnings: list[str]
    planned: Mapping[str, KindPlan]


KindPlanner = Callable[[KindInputs], KindPlan]
"""A kind's pure planner (``KindFacts.plan``)."""
