"""The managed kinds' pure facts, one :class:`KindFacts` each, in plan order: the one table of them.

Each kind says here what is true of it without any I/O: the keys its content and its state records name, its
object ids (``KIND:KEY``), whether and in which order a prune deletes it, and which changed content files are its
(its scope rule, for the daemon's file-change runs). The built-in kinds' facts are listed below; each kind module
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
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from cmssync.content.paths import STACKS_PREFIX, asset_path_of, page_object, page_object_id, page_path_of
from cmssync.plan.scope_model import Scope

if TYPE_CHECKING:  # the CLI reads the kinds' names (pull --kind) without loading the content and state models
    from cmssync.content.site import SiteContent
    from cmssync.state.records import State

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
    plan_rank: int = 100
    """Where the kind is planned and shown (the built-in kinds 0-4: groups, files, pages, stacks, users; a kind
    added later after them, by name at equal ranks)."""
    keys: Callable[[SiteContent], Iterable[str]] | None = None
    """A kind added later (:func:`add`), which ``SiteContent``, ``State`` and ``Scope`` have no field for: the keys
    of its objects that the content names (read from ``content.root``); its records are ``State.records_of(name)``
    and a scope names its objects in ``Scope.kinds``. None: a built-in kind."""

    def keys_in(self, content: SiteContent) -> Iterable[str]:
        """The keys of the content's objects of the kind (a stack's are its page kind's)."""
        if self.keys is not None:
            return self.keys(content)
        return () if self.recorded_as is not None else getattr(content, self.plural)

    def records_in(self, state: State) -> Mapping[str, Any]:
        """The state's records of the kind by key (a stack's are its page kind's)."""
        if self.keys is not None:
            return state.records_of(self.name)
        return {} if self.recorded_as is not None else getattr(state, self.plural)

    def kept_in(self, state: State) -> Mapping[str, Any]:
        """The state's records of the kind's objects by key, also those kept as another kind's (a stack's handle →
        its page's record)."""
        if self.recorded_as is None:
            return self.records_in(state)
        kept = ((path, page_object(path)) for path in state.pages)
        return {key: state.pages[path] for path, (kind, key) in kept if kind == self.name}

    def scoped(self, keys: frozenset[str]) -> Scope:
        """The scope that plans these objects of the kind."""
        if self.keys is not None:
            return Scope(kinds=frozenset(map(self.id_of, keys)))
        if self.recorded_as is not None:
            return Scope(pages=frozenset(self.recorded_as(key) for key in keys))
        named: dict[str, Any] = {self.plural: keys}
        return Scope(**named)

    def id_of(self, key: str) -> str:
        return self.object_id(key) if self.object_id is not None else f"{self.name}:{key}"


def _under(*tops: str) -> Callable[[str], bool]:
    return lambda name: name.split("/", 1)[0] in tops


def _page_scope(name: str) -> Scope | None:
    return Scope(pages=frozenset({page_path_of(name)})) if _under("pages")(name) else None


def _stack_scope(name: str) -> Scope | None:
    return Scope(pages=frozenset({page_path_of(name)})) if _under("stacks")(name) else None


def _file_scope(name: str) -> Scope | None:
    return Scope(files=frozenset({asset_path_of(name)})) if _under("files")(name) and name != "files" else None


def _user_scope(name: str) -> Scope | None:
    return Scope(all_users=True) if _under("users", "users.yaml")(name) else None


def _group_scope(name: str) -> Scope | None:
    return Scope(all_groups=True) if _under("groups", "groups.yaml")(name) else None


GROUP = KindFacts("group", "groups", pull_rank=4, scope=_group_scope, plan_rank=0)
FILE = KindFacts("file", "files", delete_rank=1, pull_rank=2, scope=_file_scope, plan_rank=1)
PAGE = KindFacts("page", "pages", page_object_id, delete_rank=0, pull_rank=0, scope=_page_scope, plan_rank=2)
STACK = KindFacts(
    "stack", "stacks", pull_rank=1, scope=_stack_scope, recorded_as=lambda handle: STACKS_PREFIX + handle, plan_rank=3
)
USER = KindFacts("user", "users", delete_rank=2, pull_rank=3, scope=_user_scope, plan_rank=4)

BUILT_IN: tuple[KindFacts, ...] = (GROUP, FILE, PAGE, STACK, USER)
"""The built-in kinds in plan order (groups, files, pages, stacks, users)."""


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

    kinds: tuple[KindFacts, ...] = BUILT_IN

    def __post_init__(self) -> None:
        names = [kind.name for kind in self.kinds]
        doubled = sorted({name for name in names if names.count(name) > 1})
        if doubled:
            raise ValueError(f"kind {doubled[0]!r} is managed twice")
        for kind in self.kinds:
            if kind not in BUILT_IN:
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
        """One line per site object the state binds to more than one key (a page id, a file, a user id), each
        with the fix: one site object has one binding (issue 26), or an apply would rewrite it from two files and
        a prune would delete it for the one that is gone."""
        problems = []
        for kind in self.deleted:
            by_id: dict[str, list[str]] = {}
            for key, record in kind.records_in(state).items():
                by_id.setdefault(str(record.id).lower(), []).append(key)
            for object_id, keys in sorted(by_id.items()):
                if len(keys) > 1:
                    named = " and ".join(sorted(keys))
                    problems.append(
                        f"the state binds {kind.name} {object_id} of the site to {len(keys)} {kind.plural}, {named}: "
                        f"one site object has one binding. Run `cmssync pull` (it keeps the binding that matches the "
                        f"site and lists the others), or remove the extra record from the state file"
                    )
        return problems


BUILT_IN_KINDS = KindTable()
"""The built-in kinds alone (what a run manages when no other kind module is installed)."""


def display_order(kinds: Iterable[str], *, pulled: bool = False) -> list[str]:
    """Kinds as a plan (or, ``pulled``, a pull) shows them: the built-in kinds in plan (pull) order, then the others
    as first named."""
    named = list(dict.fromkeys(kinds))
    ranked = sorted(BUILT_IN, key=lambda kind: kind.pull_rank or 0) if pulled else BUILT_IN
    built_in = [kind.name for kind in ranked]
    return [name for name in built_in if name in named] + [name for name in named if name not in built_in]
