"""Incremental runs: which objects a run looks at, so a one-block edit costs a handful of requests.

A ``Scope`` names the pages, files, users and groups a run observes and plans. The content is restricted to those
objects, ``observe`` reads only them (no list walks for kinds outside the scope), and the snapshot is marked
incomplete, so the planner plans no deletes: only a full run can know that something disappeared.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field, replace
from pathlib import PurePosixPath

from cmssync.content.paths import parent_path
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
        parts = PurePosixPath(name).parts
        if not parts or any(part.startswith(".") for part in parts):
            continue
        top = parts[0]
        if top == "pages" and name.endswith((".yaml", ".yml")):
            pages.add(_page_path(parts[1:]))
        elif top == "files" and len(parts) > 1:
            asset = "/".join(parts[1:])
            files.add(asset.removesuffix(".yaml").removesuffix(".yml") if asset.endswith((".yaml", ".yml")) else asset)
        elif top in ("users.yaml", "users.yml", "users"):
            all_users = True
        elif top in ("groups.yaml", "groups.yml", "groups"):
            all_groups = True
        else:
            return None
    return Scope(frozenset(pages), frozenset(files), all_users=all_users, all_groups=all_groups)


def _page_path(parts: tuple[str, ...]) -> str:
    stem = [*parts[:-1], PurePosixPath(parts[-1]).stem] if parts else []
    if stem == ["index"]:
        return "/"
    return "/" + "/".join(stem)


def with_parents(scope: Scope) -> frozenset[str]:
    """Scoped page paths and their parents (a new page needs its parent's id)."""
    found = set(scope.pages)
    for path in scope.pages:
        parent = parent_path(path)
        while parent is not None:
            found.add(parent)
            parent = parent_path(parent)
    return frozenset(found)
