"""The list kinds of the content (users, groups, …): one module per kind in this package, each declaring one
:class:`~cmssync.content.lists.kind.ListKind` named ``KIND``, found by listing the package as block types are
(``cmssync.content.blocktypes``).

The loader, the layout, the reader of a file, the cross-file checks, the JSON Schema, the writer and the digest
read this table; none of them names a list kind. A list kind's entries are ``SiteContent.lists[name]`` (key →
spec).
"""

from __future__ import annotations

from functools import cache

from cmssync.content.lists.kind import ListKind
from cmssync.declared import declared

__all__ = ["PAGE_AND_FILE_DIRS", "ListKind", "content_dirs", "list_file", "list_kind", "list_kinds"]

PAGE_AND_FILE_DIRS = ("pages", "stacks", "files")
"""The content's top-level directories that are not a list kind's."""


@cache
def list_kinds() -> tuple[ListKind, ...]:
    """Every declared list kind, by rank (found by listing this package)."""
    found: dict[str, ListKind] = {}
    for kind in declared(__name__, __path__, "KIND", ListKind):
        if kind.name in found:
            raise RuntimeError(f"list kind {kind.name!r} is declared twice")
        found[kind.name] = kind
    return tuple(sorted(found.values(), key=lambda kind: (kind.rank, kind.name)))


def list_kind(name: str) -> ListKind | None:
    """The list kind of this name (``user``), or None."""
    return next((kind for kind in list_kinds() if kind.name == name), None)


def list_file(name: str, *, directory: bool = False) -> ListKind | None:
    """The list kind whose list file (``users.yaml``) or, ``directory``, whose directory (``users``) this top-level
    name is, or None."""
    return next((kind for kind in list_kinds() if name == (kind.plural if directory else kind.file)), None)


def content_dirs() -> tuple[str, ...]:
    """The top-level directories of the content."""
    return (*PAGE_AND_FILE_DIRS, *(kind.plural for kind in list_kinds()))
