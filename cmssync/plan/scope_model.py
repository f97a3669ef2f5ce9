"""A scoped run's objects (:class:`Scope`): the pages, files and users it observes and plans, and every other
kind's objects by ``KIND:KEY`` pattern (see ``cmssync.plan.scope`` for how a scope is computed)."""

from __future__ import annotations

import fnmatch
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING

if TYPE_CHECKING:  # cmssync.plan.kinds, which the CLI imports, needs the scope without the content models
    from cmssync.content.site import SiteContent


@dataclass(frozen=True)
class Scope:
    pages: frozenset[str] = field(default_factory=frozenset)
    files: frozenset[str] = field(default_factory=frozenset)
    users: frozenset[str] = field(default_factory=frozenset)
    all_users: bool = False
    lookups: frozenset[str] = field(default_factory=frozenset)
    """Pages read although the content does not have them (``--target``): managed pages the content dropped (a
    targeted page may have moved from one; read by their state id) and pages a targeted page refers to."""
    deletes: bool = False
    """The scope holds every object a targeted delete depends on (``--target`` of a file or user to delete, pruning
    on): the observation may plan deletes. Never set for incremental runs."""
    kinds: frozenset[str] = field(default_factory=frozenset)
    """``KIND:KEY`` patterns of the objects a run plans of the kinds a scope has no field for (their scope rules'
    answers, or ``KindFacts.scoped``: ``group:*``, ``team:Team A``); :meth:`names` matches an object's id against
    them."""

    def restrict(self, content: SiteContent) -> SiteContent:
        """The content with only the objects in scope (every user when ``all_users``; a list kind's by
        :attr:`kinds`)."""
        return replace(
            content,
            pages={p: s for p, s in content.pages.items() if p in self.pages},
            files={p: s for p, s in content.files.items() if p in self.files},
            lists={
                kind: {key: spec for key, spec in entries.items() if self._lists(kind, key)}
                for kind, entries in content.lists.items()
            },
        )

    def _lists(self, kind: str, key: str) -> bool:
        if kind == "user":
            return self.all_users or key in self.users
        return self.names(f"{kind}:{key}")

    def names(self, object_id: str) -> bool:
        """Whether a pattern of :attr:`kinds` matches the object ``KIND:KEY``."""
        return any(fnmatch.fnmatchcase(object_id, pattern) for pattern in self.kinds)

    def of_kind(self, kind: str) -> tuple[str, ...]:
        """The patterns of :attr:`kinds` that name objects of ``kind``."""
        return tuple(pattern for pattern in self.kinds if pattern.partition(":")[0] == kind)

    @property
    def empty(self) -> bool:
        return not (self.pages or self.files or self.users or self.all_users or self.kinds)

    def holds(self, other: Scope) -> bool:
        """Whether this scope plans every object ``other`` names."""
        return (
            other.pages <= self.pages
            and other.files <= self.files
            and (self.all_users or other.users <= self.users)
            and all(map(self.names, other.kinds))
        )

    def __or__(self, other: Scope) -> Scope:
        return Scope(
            self.pages | other.pages,
            self.files | other.files,
            self.users | other.users,
            self.all_users or other.all_users,
            self.lookups | other.lookups,
            self.deletes or other.deletes,
            self.kinds | other.kinds,
        )
