"""The managed kinds' pure facts, one :class:`KindFacts` each, in plan order: the one table of them.

Each kind says here what is true of it without any I/O: the keys its content and its state records name, its
object ids (``KIND:KEY``), whether and in which order a prune deletes it, and which changed content files are its
(its scope rule, for the daemon's file-change runs). The built-in kinds are listed below; a kind added later
declares its facts the same way and is added to the table (:func:`add`) when ``cmssync.sync.kinds.register``
registers it with its I/O, so object ids, targets, scope rules and ``in_scope`` read it like a built-in kind.
:data:`KIND_ORDER` is the table's names.
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
    """Where pull lists the kind (``--kind``'s choices, what it did not take in); None: pull does not take it."""
    scope: PathScope | None = None
    recorded_as: Callable[[str], str] | None = None
    """A key → the key of the other kind's object it is kept as (a stack's handle → its page path); None: the kind
    keeps its own objects."""
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


GROUP = KindFacts("group", "groups", pull_rank=4, scope=_group_scope)
FILE = KindFacts("file", "files", delete_rank=1, pull_rank=2, scope=_file_scope)
PAGE = KindFacts("page", "pages", page_object_id, delete_rank=0, pull_rank=0, scope=_page_scope)
STACK = KindFacts("stack", "stacks", pull_rank=1, scope=_stack_scope, recorded_as=lambda handle: STACKS_PREFIX + handle)
USER = KindFacts("user", "users", delete_rank=2, pull_rank=3, scope=_user_scope)

BUILT_IN: tuple[KindFacts, ...] = (GROUP, FILE, PAGE, STACK, USER)
"""The built-in kinds in plan order (groups, files, pages, stacks, users)."""
KIND_FACTS: list[KindFacts] = list(BUILT_IN)
"""Every managed kind in plan order: the built-in ones, then those added (:func:`add`)."""
FACTS: dict[str, KindFacts] = {kind.name: kind for kind in KIND_FACTS}
KIND_ORDER: list[str] = [kind.name for kind in KIND_FACTS]
"""The managed kinds' names in plan order (``cmssync.plan.actions.Kind`` accepts only these)."""
DELETED: list[KindFacts] = sorted(
    (kind for kind in BUILT_IN if kind.delete_rank is not None), key=lambda kind: kind.delete_rank or 0
)
"""The kinds a prune deletes, built-in and added, in delete order (guarded, blocked and kept in this order)."""
PULLED: tuple[str, ...] = tuple(
    kind.name
    for kind in sorted(BUILT_IN, key=lambda kind: -1 if kind.pull_rank is None else kind.pull_rank)
    if kind.pull_rank is not None
)
"""The kinds pull takes in, in its order (``pull --kind``)."""


def add(kind: KindFacts) -> None:
    """Add a kind's facts to the table, after the built-in kinds (``cmssync.sync.kinds.register``). It names its
    content's objects (``keys``) and keeps its own records; with a ``delete_rank`` its planner's deletes are
    guarded with the built-in kinds' (in that order: ``cmssync.plan.planner``), without one it deletes nothing.
    It is not pulled."""
    if kind.name in FACTS and FACTS[kind.name] != kind:
        raise ValueError(f"kind {kind.name!r} is already managed")
    if kind.keys is None or kind.recorded_as is not None or kind.pull_rank is not None:
        raise ValueError(
            f"kind {kind.name!r}: an added kind names its content's objects (keys) and keeps its own records; pull "
            "does not take it in (no recorded_as or pull_rank)"
        )
    if kind.name not in FACTS:
        KIND_FACTS.append(kind)
        FACTS[kind.name] = kind
        KIND_ORDER.append(kind.name)
        if kind.delete_rank is not None:
            DELETED.append(kind)
            DELETED.sort(key=lambda facts: facts.delete_rank or 0)


def remove(name: str) -> None:
    """Forget an added kind's facts (the built-in kinds stay)."""
    if name in FACTS and FACTS[name] not in BUILT_IN:
        kind = FACTS.pop(name)
        KIND_FACTS.remove(kind)
        KIND_ORDER.remove(name)
        if kind in DELETED:
            DELETED.remove(kind)


def object_ids(content: SiteContent, state: State) -> set[str]:
    """``KIND:KEY`` of every object of the content or the state (what a target may name)."""
    ids: set[str] = set()
    for kind in KIND_FACTS:
        ids.update(kind.id_of(key) for key in [*kind.keys_in(content), *kind.records_in(state)])
    for name, records in state.kinds.items():
        ids.update(f"{name}:{key}" for key in records)
    return ids


def names_nothing(content: SiteContent) -> bool:
    """Whether the content names no object of any kind (planned from it, every managed object would be deleted)."""
    return not any(kind.keys_in(content) for kind in KIND_FACTS)


def path_scope(name: str) -> Scope | None:
    """What a changed content file asks a run to plan (the scope rules of the kinds it is of); None: no kind's."""
    found = [scope for kind in KIND_FACTS if kind.scope and (scope := kind.scope(name)) is not None]
    return functools.reduce(operator.or_, found) if found else None


def scope_of(object_ids: Iterable[str]) -> Scope:
    """The scope that plans these objects (``KIND:KEY``) of the managed kinds, each by its kind's rule."""
    keys: dict[str, set[str]] = {}
    for object_id in object_ids:
        kind, _, key = object_id.partition(":")
        keys.setdefault(kind, set()).add(key)
    scope = Scope()
    for kind, named in keys.items():
        if kind in FACTS:
            scope |= FACTS[kind].scoped(frozenset(named))
    return scope


def in_scope(scope: Scope, object_id: str) -> bool:
    """Whether ``scope`` plans the object ``KIND:KEY`` of a managed kind."""
    return object_id.partition(":")[0] in FACTS and scope.holds(scope_of([object_id]))


def shared_bindings(state: State) -> list[str]:
    """One line per site object the state binds to more than one key (a page id, a file, a user id), each with
    the fix: one site object has one binding (issue 26), or an apply would rewrite it from two files and a prune
    would delete it for the one that is gone."""
    problems = []
    for kind in DELETED:
        by_id: dict[str, list[str]] = {}
        for key, record in kind.records_in(state).items():
            by_id.setdefault(str(record.id).lower(), []).append(key)
        for object_id, keys in sorted(by_id.items()):
            if len(keys) > 1:
                named = " and ".join(sorted(keys))
                problems.append(
                    f"the state binds {kind.name} {object_id} of the site to {len(keys)} {kind.plural}, {named}: one "
                    f"site object has one binding. Run `cmssync pull` (it keeps the binding that matches the site "
                    f"and lists the others), or remove the extra record from the state file"
                )
    return problems
