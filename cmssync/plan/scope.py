"""Incremental runs: which objects a run looks at, so a one-block edit costs a handful of requests.

A ``Scope`` names the pages, files, users and groups a run observes and plans. The content is restricted to those
objects, ``observe`` reads only them (no list walks for kinds outside the scope), and the snapshot is marked
incomplete, so the planner plans no deletes: only a full run can know that something disappeared.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field, replace

from cmssync.content.paths import asset_path_of, is_hidden, page_path_of, parent_path
from cmssync.content.site import SiteContent


@dataclass(frozen=True)
class Scope:
    pages: frozenset[str] = field(default_factory=frozenset)
    files: frozenset[str] = field(default_factory=frozenset)
    users: frozenset[str] = field(default_factory=frozenset)
    groups: frozenset[str] = field(default_factory=frozenset)
    all_users: bool = False
    all_groups: bool = False

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
        return not (self.pages or self.files or self.users or self.groups or self.all_users or self.all_groups)

    def __or__(self, other: Scope) -> Scope:
        return Scope(
            self.pages | other.pages,
            self.files | other.files,
            self.users | other.users,
            self.groups | other.groups,
            self.all_users or other.all_users,
            self.all_groups or other.all_groups,
        )


def scope_for_paths(changed: Iterable[str]) -> Scope | None:
    """The scope that covers changed content files (paths relative to the content directory, POSIX).

    ``None`` means a full run is needed (``cmssync.yaml`` changed, or a path cmssync cannot map).
    """
    pages: set[str] = set()
    files: set[str] = set()
    all_users = all_groups = False
    for name in changed:
        if not name or is_hidden(name):
            continue
        top = name.split("/", 1)[0]
        if top == "pages":
            try:
                pages.add(page_path_of(name))
            except ValueError:
                return None  # not a valid page file: the full run reports it
        elif top == "files" and name != "files":
            files.add(asset_path_of(name))
        elif top in ("users", "users.yaml"):
            all_users = True
        elif top in ("groups", "groups.yaml"):
            all_groups = True
        else:
            return None
    return Scope(frozenset(pages), frozenset(files), all_users=all_users, all_groups=all_groups)


def with_parents(scope: Scope) -> frozenset[str]:
    """Scoped page paths and their parents (a new page needs its parent's id)."""
    found = set(scope.pages)
    for path in scope.pages:
        parent = parent_path(path)
        while parent is not None:
            found.add(parent)
            parent = parent_path(parent)
    return frozenset(found)
