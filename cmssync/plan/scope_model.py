"""A scoped run's objects (:class:`Scope`): the pages, files, users and groups it observes and plans (see
``cmssync.plan.scope`` for how a scope is computed)."""

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
    groups: frozenset[str] = field(default_factory=frozenset)
    all_users: bool = False
    all_groups: bool = False
    lookups: frozenset[str] = field(default_factory=frozenset)
    """Pages read although the content does not have them (``--target``): managed pages the content dropped (a
    targeted page may have moved from one; read by their state id) and pages a targeted page refers to."""
    deletes: bool = False
    """The scope holds every object a targeted delete depends on (``--target`` of a file or user to delete, pruning
    on): the observation may plan deletes. Never set for incremental runs."""
    kinds: frozenset[str] = field(default_factory=frozenset)
    """``KIND:KEY`` patterns of registered kinds' objects a run plans (their scope rules' answers, or
    ``KindFacts.scoped``); :meth:`holds` matches an object's id against them."""

    def restrict(self, content: SiteContent) -> SiteContent:
        """The content with only the objects in scope (every user when ``all_users``, and so on)."""
        return replace(
            content,
            pages={p: s for p, s in content.pages.items() if p in self.pages},
            files={p: s for p, s in content.files.items() if p in self.files},
            users={u: s for u, s in content.users.items() if self.all_users or u in self.users},
            groups={g: s for g, s in content.groups.items() if self.all_groups or g in self.groups},
        )

    @property
    def empty(self) -> bool:
        return not (
            self.pages or self.files or self.users or self.groups or self.all_users or self.all_groups or self.kinds
        )

    def holds(self, other: Scope) -> bool:
        """Whether this scope plans every object ``other`` names."""
        return (
            other.pages <= self.pages
            and other.files <= self.files
            and (self.all_users or other.users <= self.users)
            and (self.all_groups or other.groups <= self.groups)
            and all(any(fnmatch.fnmatchcase(named, pattern) for pattern in self.kinds) for named in other.kinds)
        )

    def __or__(self, other: Scope) -> Scope:
        return Scope(
            self.pages | other.pages,
            self.files | other.files,
            self.users | other.users,
            self.groups | other.groups,
            self.all_users or other.all_users,
            self.all_groups or other.all_groups,
            self.lookups | other.lookups,
            self.deletes or other.deletes,
            self.kinds | other.kinds,
        )
