"""The drift feed's watch over the pages of locale trees other than the default one (``cmssync.content.trees``).

``GET /pages`` lists the default tree only (``locales.jsonl``: never a ``/de`` page, not even one created a moment
before), so the feed's page list cannot see an editor's change in another tree. Those pages are watched through
what the API does show of them, one request a turn: the children list of one parent of managed pages of those
trees (``GET /pages/{id}/children``, no includes: each child's ``date_last_updated`` and live version, which move on
an update and on an approval as the list's do), or a managed tree home on its own (no children list holds it). The
parents and homes take turns, so every managed page of another tree is seen within (number of its parents + homes)
turns. A page's first read only sets its mark; a page a run wrote is forgotten (:meth:`TreeWatch.forget`) and its
next read sets its mark again, so cmssync's own writes are never taken for drift.

The trees are what the daemon's last run found (``Plan.trees``, read by every run's observation): until a run has
seen several trees, and on a single-locale site always, this watch takes no turn and costs nothing.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from cmssync.api.client import ConcreteClient
from cmssync.api.models import Page
from cmssync.content.paths import is_stack_path, parent_path
from cmssync.content.trees import Trees
from cmssync.state.records import State


@dataclass
class TreeWatch:
    """Marks of the managed pages of other locale trees, and whose turn it is (module docstring)."""

    trees: Trees = field(default_factory=Trees)
    marks: dict[str, Any] = field(default_factory=dict)
    """Managed page path → (``date_last_updated``, live version id) at its last read."""
    turn: int = 0

    def active(self, state: State) -> bool:
        """Whether a turn would read anything: the site has other trees and the state manages pages of them."""
        return self.trees.multiple and bool(self._sources(state))

    def learn(self, homes: Mapping[str, str]) -> None:
        """The trees a run found (``Plan.trees``: empty on a single-locale site)."""
        self.trees = Trees.of_homes(homes)

    async def poll(self, client: ConcreteClient, state: State) -> tuple[str, list[str]]:
        """One turn, one request: ``(what it is counted as in metrics: page:<locale>, managed paths that moved)``."""
        sources = self._sources(state)
        path, page_id, alone = sources[self.turn % len(sources)]
        self.turn += 1
        pages = [await client.get_page(page_id)] if alone else await client.page_children(page_id)
        tree = self.trees.tree_of(path)
        return f"page:{tree.locale if tree is not None else ''}", self._moved(pages, state)

    def forget(self, paths: Iterable[str]) -> None:
        """Pages a run wrote: their next read sets their mark (their move is the run's)."""
        for path in paths:
            self.marks.pop(path, None)

    def _sources(self, state: State) -> list[tuple[str, int, bool]]:
        """``(path, page id, read alone)`` of each read that covers managed pages of other trees: a tree home on
        its own, else each managed parent's children list."""
        assert self.trees is not None
        managed = {
            path: record.id
            for path, record in state.pages.items()
            if not is_stack_path(path) and (tree := self.trees.tree_of(path)) is not None and not tree.default
        }
        homes = {path for path in managed if self.trees.is_home(path)}
        parents = {parent for path in managed if (parent := parent_path(path)) in managed}
        return sorted([(path, managed[path], True) for path in homes] + [(p, managed[p], False) for p in parents])

    def _moved(self, pages: list[Page], state: State) -> list[str]:
        moved = []
        for page in pages:
            path = page.url_path
            record = state.pages.get(path)
            if record is None or record.id != page.id:
                continue
            mark = (page.date_last_updated, page.version.id if page.version else None)
            if path in self.marks and self.marks[path] != mark:
                moved.append(path)
            self.marks[path] = mark
        return moved
