"""What ``cmssync pull`` takes in: in a directory that already manages content, only what it manages.

A directory *manages content* when the state records anything, or it holds page files, a list kind's file
(``users.yaml``, …) or assets. There pull brings the site's values into the objects the content manages (a page
file, an asset bound to a site file, an entry of a list file) and lists the others as not taken in;
``--all`` takes in everything, ``--kind KIND`` every object of that kind, ``--pages PATH`` those pages. An empty
directory takes in the whole site (the first pull). A directory for another site than the default one of a
multi-site installation (``site.handle``) takes that site's pages only: stacks, files, users and groups belong to the
whole installation and are taken by the default site's directory (``--kind`` takes them all the same).

Site files are bound by identity, never by name or list order: a file the state records under a path (by its id)
is pulled to that path; another site file gets a free path — a local asset the state does not bind is taken as
that site file only when its bytes are the site's.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from cmssync.content.lists import content_dirs, list_kinds
from cmssync.plan.builtin_kinds import BUILT_IN_KINDS
from cmssync.plan.kinds import KindTable
from cmssync.state.records import State

SITE_KINDS = frozenset({"page"})
"""The kinds whose objects belong to one site of a multi-site installation (the others are the installation's)."""


@dataclass(frozen=True)
class PullScope:
    managed: bool
    """The directory already manages content (see the module docstring)."""
    take_all: bool = False
    kinds: frozenset[str] = frozenset()
    site_only: bool = False
    """Another site than the installation's default one: only its pages are taken in unless ``kinds`` names more."""

    def takes(self, kind: str) -> bool:
        """Whether objects of ``kind`` the content does not manage are taken in."""
        if self.site_only and kind not in SITE_KINDS:
            return kind in self.kinds
        return not self.managed or self.take_all or kind in self.kinds


def pull_scope(
    root: Path,
    state: State,
    table: KindTable = BUILT_IN_KINDS,
    *,
    take_all: bool = False,
    kinds: tuple[str, ...] = (),
    site_only: bool = False,
) -> PullScope:
    managed = any(kind.records_in(state) for kind in table.kinds) or _has_content(root)
    return PullScope(managed=managed, take_all=take_all, kinds=frozenset(kinds), site_only=site_only)


def _has_content(root: Path) -> bool:
    if any((root / kind.file).is_file() for kind in list_kinds()):
        return True
    for name in content_dirs():
        folder = root / name
        if folder.is_dir() and any(path.is_file() for path in folder.rglob("*")):
            return True
    return False
