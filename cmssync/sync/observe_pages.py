"""The pages of an observation: the page tree read a level at a time, and pages read on their own. Read-only.

Pages are read **a tree level at a time**: ``GET /pages/{id}/children?includes=areas,custom_attributes`` returns every
child of a page with its blocks and attributes in one request (a real server ignores ``limit`` there: no paging).
The walk starts at the home page (read on its own, while the walk runs; without areas and attributes when neither the
content nor the state manages ``/``, since it then matters only as the parent of top-level pages) and reads the
children of exactly the pages on the way to a managed, content or referenced page; a level that holds none of them
is not read. The children lists of parents whose ids the state knows are requested at once and used once the level
above confirms the id at that path, so the whole tree costs one round trip. A no-op plan of a site whose pages sit
under P parents so costs P + 1 page requests, whatever the number of pages.

What a batch cannot tell, and how it is covered:

* **Drafts.** Batched reads show the *live* version only (``version=recent`` is ignored), and an unapproved block
  change moves neither ``date_last_updated`` nor the version id (``batch.*`` in the recording). Batched pages are
  marked :attr:`LivePage.batched`; the planner decides from them that a page needs nothing, and
  ``cmssync.sync.planning.plan_site`` reads the pages it would write (and those with a draft of cmssync's on
  record) again with :func:`read_pages_alone` before planning again. A draft matters only where cmssync writes.
* **A child without a live version** (never approved) is read on its own.
* **Pages the walk does not meet**: an id the state or a pinned ``id`` names but that is not at its path (moved,
  trashed, deleted) is read on its own by id; a path whose ancestor does not exist is absent.

A page read on its own, and the conversion of any page read into a :class:`LivePage`, are in
``cmssync.sync.page_read``.

Never through ``GET /pages``: a real server's page list repeats and skips pages whose modification dates tie
(concrete-api.md §13).

Incremental runs (a ``scope``, the daemon's file changes) that know at most :data:`SCOPED_READS_ALONE` pages read
them on their own by id in their recent version (one request each, drafts included, no second phase) and no parent
and no tree level, unless a page is missing (then its known parents and their children lists, to create it; the
home page only for a missing top-level page). Larger scopes use the tree walk.

Progress: ``progress(read, expected)`` is called as pages arrive (``reading site: 120/301 pages``); ``expected`` is
an estimate settled on what was found at the end, so the last report is N/N. Without the argument, the callable in
:data:`observe_progress` is used, so a command can show progress without threading a callback through the
planning and apply layers.
"""

from __future__ import annotations

import asyncio
import dataclasses
from collections.abc import Awaitable, Callable, Iterable, Mapping
from contextvars import ContextVar
from dataclasses import dataclass, field
from typing import NamedTuple, TypeVar

from cmssync.api.client import ConcreteClient
from cmssync.api.errors import NotFound, PendingDeletion
from cmssync.api.models import Page
from cmssync.content.paths import page_object_id, parent_path
from cmssync.content.site import SiteContent
from cmssync.plan.snapshot import LivePage, Snapshot
from cmssync.state.records import State
from cmssync.sync.page_read import PAGE_INCLUDES, read_page, to_live_page
from cmssync.sync.read_failures import note_unreadable_children
from cmssync.sync.stack_displays import name_observed_stacks

SCOPED_READS_ALONE = 10
"""A scoped run that knows at most this many pages reads them on their own (recent versions, no second phase)."""
T = TypeVar("T")

ObserveProgress = Callable[[int, int], None]
"""``(pages read, pages expected)``, called as each page read finishes."""
observe_progress: ContextVar[ObserveProgress | None] = ContextVar("observe_progress", default=None)
"""The progress callback of :func:`observe` calls that are not given one (set by the command showing it)."""


@dataclass
class PageProgress:
    """Pages read against pages expected. ``expect`` grows the estimate (reported only when it grows the total
    from nothing or keeps the count honest); ``done`` counts pages a batch delivered; ``finish`` settles the
    estimate on what was found, so the last report is N/N even when some wanted paths do not exist (yet)."""

    report: ObserveProgress | None
    read: int = 0
    expected: int = 0

    def expect(self, count: int) -> None:
        first = self.expected == 0
        self.expected += count
        if self.report is not None and count and first:
            self.report(self.read, self.expected)

    def done(self, count: int) -> None:
        if count:
            self.read += count
            self.expected = max(self.expected, self.read)
            if self.report is not None:
                self.report(self.read, self.expected)

    def finish(self) -> None:
        if self.expected != self.read:
            self.expected = self.read
            if self.report is not None:
                self.report(self.read, self.expected)

    async def tick(self, awaitable: Awaitable[T]) -> T:
        try:
            return await awaitable
        finally:
            self.done(1)


@dataclass
class PageIndex:
    by_path: dict[str, LivePage] = field(default_factory=dict)
    by_id: dict[int, LivePage] = field(default_factory=dict)
    children: dict[int, list[Page]] = field(default_factory=dict)
    unreadable: dict[str, str] = field(default_factory=dict)
    """``page:<path>`` → why it could not be read (``Snapshot.unreadable``, ``cmssync.sync.read_failures``)."""

    def add(self, page: LivePage) -> None:
        self.by_path[page.path] = page
        self.by_id[page.id] = page


async def observe_pages(
    client: ConcreteClient,
    content: SiteContent,
    state: State,
    roots: Mapping[str, int],
    base_url: str,
    progress: PageProgress,
    *,
    scoped: bool,
) -> PageIndex:
    """Pages by batch where that saves requests, one by one where the batch cannot tell (module docstring).
    ``roots``: the home page of each locale tree by path (``/``, ``/de``: ``cmssync.content.trees``); a tree other
    than the default one is walked from its home only when the content or the state names a page of it."""
    reads = _Reads(client, base_url, roots, progress)
    known = _known_ids(content, state, roots)
    primary = set(content.pages) | set(content.settings.existing_pages) | set(state.pages)
    wanted = primary | {parent for path in content.pages if (parent := parent_path(path)) is not None}
    progress.expect(len(wanted | {"/"}))
    if scoped and len(known) <= SCOPED_READS_ALONE:
        unseen = await _read_scoped(reads, content, known)
    else:
        unseen = await _read_tree(reads, content, state, known, wanted)
    # Known ids the walk did not meet: moved, trashed or deleted pages, or below a parent not read.
    await reads.alone(unseen)
    progress.finish()
    return reads.index


async def _read_tree(
    reads: _Reads, content: SiteContent, state: State, known: Mapping[int, str], looked_for: set[str]
) -> dict[int, str]:
    """The tree walk, with each tree's home page (not a child of anything) read on its own meanwhile; returns the
    known pages it did not meet."""
    named = {record.id for record in state.pages.values()} | {s.id for s in content.pages.values() if s.id}
    managed = set(content.pages) | set(content.settings.existing_pages) | set(state.pages)
    homes = [
        reads.alone({home_id: home}) if home in managed or home_id in named else reads.parent_only(home_id)
        for home, home_id in reads.roots.items()
        if home == "/" or any(path == home or path.startswith(home + "/") for path in looked_for)
    ]
    await all_settled([*homes, reads.levels(looked_for, known)])
    return {i: p for i, p in known.items() if i not in reads.index.by_id and p in looked_for}


def _known_ids(content: SiteContent, state: State, roots: Mapping[str, int]) -> dict[int, str]:
    """Page ids the run already knows (the trees' homes, the state's records, pinned ids), with their expected
    paths."""
    known: dict[int, str] = {home_id: home for home, home_id in roots.items()}
    for path, record in state.pages.items():
        known.setdefault(record.id, path)
    for path, spec in content.pages.items():
        if spec.id is not None:
            known.setdefault(spec.id, path)
    return known


async def _read_scoped(reads: _Reads, content: SiteContent, known: Mapping[int, str]) -> dict[int, str]:
    """An incremental run: its few pages on their own (recent versions: no second phase); parents only for a page
    that is not where the content wants it (a parent's id is needed to create it). The scoped state also names the
    parents, for their ids: they are not read unless needed. Returns the known pages it looked for but did not meet.
    """
    direct = set(content.pages) | set(content.settings.existing_pages)
    await reads.alone({i: p for i, p in known.items() if p in direct})
    missing = {path for path in content.pages if path not in reads.index.by_path}
    if not missing:
        return {}
    wanted = missing | {a for path in missing for a in _ancestors(path)}
    # a tree's home itself only as the parent of a missing page at its top (its id is the site's)
    for home, home_id in reads.roots.items():
        if home not in missing and not any(parent_path(path) == home for path in missing):
            known = {i: p for i, p in known.items() if i != home_id}
    await reads.alone({i: p for i, p in known.items() if p in wanted and i not in reads.index.by_id})
    await reads.levels(wanted, known)
    looked_for = wanted | set(content.pages)  # not the parents of pages that were found
    return {i: p for i, p in known.items() if i not in reads.index.by_id and p in looked_for}


@dataclass
class _Reads:
    """The reads of one observation: the page index they fill and the progress they report."""

    client: ConcreteClient
    base_url: str
    roots: Mapping[str, int]
    """Home path → page id of each locale tree."""
    progress: PageProgress
    index: PageIndex = field(default_factory=PageIndex)

    async def alone(self, pages: dict[int, str]) -> None:
        """Pages read on their own by id, in their recent version."""
        progress, index = self.progress, self.index
        progress.expected = max(progress.expected, progress.read + len(pages))
        reads = (
            progress.tick(read_page(self.client, i, self.base_url, path=p, unreadable=index.unreadable))
            for i, p in pages.items()
        )
        for page in await all_settled(reads):
            if page is not None:
                index.add(page)
                index.unreadable.pop(
                    page_object_id(page.path), None
                )  # found by id after all (below an unreadable list)

    async def parent_only(self, page_id: int) -> None:
        """A page that only matters as a parent (the home page when the content and the state do not manage ``/``):
        its live version without areas and attributes, which are the expensive part of a read on a real site (its
        blocks are rendered and exported). Marked :attr:`LivePage.batched` like a page of a children list, so no
        write is ever planned against this partial view: ``plan_site`` would read it in full first."""
        try:
            page = await self.progress.tick(self.client.get_page(page_id))
        except (PendingDeletion, NotFound):
            return
        live_version_id = page.version.id if page.version and page.version.is_approved else None
        self.index.add(to_live_page(page, live_version_id, self.base_url, batched=True))

    async def levels(self, wanted: set[str], known: Mapping[int, str]) -> None:
        """Find the ``wanted`` paths not read yet, one level of the tree at a time, reading each parent's children
        with areas and attributes in one request: only parents on the way to a wanted path are read.

        A child that is wanted (or whose id the state knows) becomes a batched :class:`LivePage`, in its live
        version; a child without a live version is read on its own. A wanted path whose ancestor is not found does
        not exist.

        The levels are not waited for one after the other when the state already knows the parents' ids: the
        children of every known parent are requested at once, and a level uses a list only once the level above
        confirmed that the parent still has that id at that path (a list of a moved parent is dropped and the right
        one read). A no-op plan so costs one round trip for the whole tree, not one per level.
        """
        index = self.index
        ids: dict[str, int] = {**self.roots, **{path: page.id for path, page in index.by_path.items()}}
        roots = self.roots
        pending = sorted(
            path for path in wanted if path.startswith("/") and path not in roots and path not in index.by_path
        )
        lists = _ChildLists(self.client, self.base_url, lambda page_id, path: path in wanted or page_id in known)
        parents_wanted = {ancestor for path in pending for ancestor in _ancestors(path)}
        try:
            for page_id, path in known.items():
                if path in parents_wanted:
                    lists.prefetch(page_id)
            depth = 1
            while pending:
                children = await _children_of(
                    lists, _level_parents(pending, depth, ids), ids, pending, index.unreadable
                )
                await self._take(children, ids, wanted, known)
                pending = [path for path in pending if _below(path, depth, ids, index)]
                depth += 1
        finally:
            await lists.close()

    async def _take(
        self, children: list[_Child], ids: dict[str, int], wanted: set[str], known: Mapping[int, str]
    ) -> None:
        """Note the ids of a level's children and add those the walk takes (wanted or known); those without a live
        version (never approved) are read on their own."""
        index = self.index
        alone: dict[int, str] = {}
        found = 0
        for child in children:
            ids.setdefault(child.path, child.id)
            if child.path in index.by_path or (child.path not in wanted and child.id not in known):
                continue
            if child.live is None:
                alone[child.id] = child.path
                continue
            index.add(child.live)
            found += 1
        self.progress.done(found)
        await self.alone(alone)


class _Child(NamedTuple):
    """A child of a children list, as the walk needs it: its id and path, and the page made of it when it is one
    the walk takes (wanted or known) and has a live version (``None`` otherwise)."""

    id: int
    path: str
    live: LivePage | None


class _ChildLists:
    """Children lists (with areas and attributes) by parent id, each requested once; :meth:`prefetch` starts
    requests before the walk has confirmed the parent's id, :meth:`close` waits for those it never used.

    Each list is converted as it arrives (``take`` says which children the walk takes): the API's answer, blocks
    and all, is dropped at once, so only the planner's view of the taken pages is held while other lists are read,
    not every list of the level in full."""

    def __init__(self, client: ConcreteClient, base_url: str, take: Callable[[int, str], bool]) -> None:
        self.client = client
        self.base_url = base_url
        self.take = take
        self.tasks: dict[int, asyncio.Task[list[_Child]]] = {}

    def prefetch(self, page_id: int) -> asyncio.Future[list[_Child]]:
        if page_id not in self.tasks:
            self.tasks[page_id] = asyncio.ensure_future(self._read(page_id))
        return self.tasks[page_id]

    async def _read(self, page_id: int) -> list[_Child]:
        children = await self.client.page_children(page_id, includes=PAGE_INCLUDES)
        return [self._child(page) for page in children]

    def _child(self, page: Page) -> _Child:
        version = page.version
        if version is None or not version.is_approved or not self.take(page.id, page.url_path):
            return _Child(page.id, page.url_path, None)
        return _Child(page.id, page.url_path, to_live_page(page, version.id, self.base_url, batched=True))

    def release(self, page_id: int) -> None:
        """Forget a list the walk has used: only what the walk made of it is held to the end of the walk."""
        self.tasks.pop(page_id, None)

    async def close(self) -> None:
        """Let the requests the walk did not use finish (their answers are dropped): cancelled mid-connect, they
        would leave the connection pool's work half-done."""
        await asyncio.gather(*self.tasks.values(), return_exceptions=True)


async def read_pages_alone(
    client: ConcreteClient, snapshot: Snapshot, paths: Iterable[str], *, progress: ObserveProgress | None = None
) -> Snapshot:
    """``snapshot`` with those of ``paths`` that were read in a batch read again on their own, in their recent
    version, so their pending drafts (cmssync's or someone else's) are seen. The second phase of planning
    (``cmssync.sync.planning.plan_site``): only pages about to be written, or with a draft of cmssync's on record.
    """
    targets = snapshot.batched_pages(paths)
    if not targets:
        return snapshot
    # counted from the first page read: a second "0/N" would read as the observation starting over
    counter = PageProgress(progress or observe_progress.get(), expected=len(targets))
    unreadable = dict(snapshot.unreadable)
    pages = await all_settled(
        counter.tick(
            read_page(client, snapshot.pages[path].id, snapshot.site_url, path=path, listed=True, unreadable=unreadable)
        )
        for path in targets
    )
    by_path = dict(snapshot.pages)
    by_id = dict(snapshot.pages_by_id)
    for path, page in zip(targets, pages, strict=True):
        if page_object_id(path) in unreadable:
            continue  # listed but not readable on its own: the batched view stays, and the plan holds the page
        old = by_path.pop(path)
        by_id.pop(old.id, None)
        if page is not None:
            by_path[page.path] = page
            by_id[page.id] = page
    read = dataclasses.replace(snapshot, pages=by_path, pages_by_id=by_id, unreadable=unreadable)
    return await name_observed_stacks(client, read, targets)


async def _children_of(
    lists: _ChildLists, parents: set[int], ids: Mapping[str, int], pending: list[str], unreadable: dict[str, str]
) -> list[_Child]:
    """The children of ``parents``; a parent whose list cannot be read makes the pending paths below it unreadable
    (not absent: creating them could duplicate them)."""
    pids = sorted(parents)
    results = await asyncio.gather(*(lists.prefetch(pid) for pid in pids), return_exceptions=True)
    for pid in pids:
        lists.release(pid)
    at = {page_id: path for path, page_id in ids.items()}
    for pid, result in zip(pids, results, strict=True):
        if isinstance(result, BaseException):
            note_unreadable_children(result, at[pid], pid, pending, unreadable)
    return [child for result in results if not isinstance(result, BaseException) for child in result]


def _level_parents(pending: list[str], depth: int, ids: Mapping[str, int]) -> set[int]:
    """The ids of the parents whose children lists hold the next level of the pending paths."""
    level = {_prefix(path, depth) for path in pending}
    return {ids[up] for path in level if path not in ids and (up := parent_path(path) or "/") in ids}


def _below(path: str, depth: int, ids: Mapping[str, int], index: PageIndex) -> bool:
    """A pending path still looked for after the level at ``depth``: not found yet, deeper, not below an unreadable
    list, and below a page found at that level."""
    return (
        path not in index.by_path
        and path.count("/") > depth
        and page_object_id(path) not in index.unreadable
        and _prefix(path, depth) in ids
    )


def _ancestors(path: str) -> list[str]:
    found = []
    parent = parent_path(path)
    while parent is not None:
        found.append(parent)
        parent = parent_path(parent)
    return found


def _prefix(path: str, depth: int) -> str:
    return "/" + "/".join(path.strip("/").split("/")[:depth])


async def all_settled(awaitables: Iterable[Awaitable[T]]) -> list[T]:
    """Every result, in order; if any failed, the first failure is raised — once all of them have finished.

    Plain ``gather`` raises at the first failure and leaves the other requests running: the client closes under them
    mid-connect and their work is abandoned half-done. Reads are cheap to let finish.
    """
    results = await asyncio.gather(*awaitables, return_exceptions=True)
    for result in results:
        if isinstance(result, BaseException):
            raise result
    return list(results)  # type: ignore[arg-type]
