"""The pages ``cmssync pull`` reads: the whole tree, with blocks, rendered areas and attributes, a parent at a time.

Each parent's children come with everything pull needs in one request (``GET /pages/{id}/children?includes=areas,
areas.content,custom_attributes``: a real server returns every child at once, in its live version), so the tree
costs one request per *parent*, not two per page. The API says nothing about whether a page has children but its
children list, so the flat page list (``GET /pages``, 100 pages a request, nothing included) is read first as a map:
a page it lists under whose path no listed page lies is taken as a leaf, and its (empty) children list is not asked
for. A 10,000-page site in sections of 100 so costs about 100 list pages + 101 children lists.

The map can be wrong, and where it could be, the tree is asked instead:

* **Pages the list does not show** (a page without a live version, an alias, an inactive page, one the list's cursor
  skipped): each one the tree finds has its own children list read, since its children may be missing from the list
  too. Counted as ``children of pages the page list does not show``.
* **Tied dates**: the list's cursor skips pages whose modification dates tie across a page boundary (concrete-api.md
  §13, ``lists.jsonl``). When the list has a group of 50 or more pages with one date (a bulk import; an install's
  sample pages), it cannot be trusted to show every parent, and every page's children are read (one request per
  page, as before the map).
* Children the list cannot show at all — pages that never had a live version (the list omits them) below a page the
  list shows as a leaf — are not found. Such a page has no content to pull (pull reads live versions).

Read on their own (one request each, counted by reason in :attr:`TreeRead.alone`): the home page (no children list
holds it), and a child without a live version (the children list shows live versions only).

:func:`read_tree` hands each children list to ``on_pages`` as it arrives and keeps only ids, so what pull holds per
page is what it makes of it, not the API's answer.

**A read that fails one object fails only that object** (``cmssync.sync.read_failures``), as in ``plan``. The usual
cause is the render: a block whose theme template breaks outside a page (shown in a stack, or in a stack a page
displays) makes every read with ``areas.content`` answer 500, while the same read without the render answers. So a
read that fails so is made again without ``areas.content`` (:func:`read_degrading`): the pages are pulled without
their render (a block whose download links or pictures only the render shows is kept as a placeholder, as for any
lossy read), and said (:attr:`Unread.unrendered`). What cannot be read even so is not pulled: named with the
server's reason (:attr:`Unread.unreadable`), and the pull exits 1, incomplete; every other page is pulled and
written. A children list that cannot be read leaves the pages below that parent out.
"""

from __future__ import annotations

import asyncio
from collections import Counter
from collections.abc import Awaitable, Callable, Collection, Iterable, Mapping
from dataclasses import dataclass, field
from typing import TypeVar

from cmssync.api.client import ConcreteClient
from cmssync.api.models import Page
from cmssync.content.paths import page_named, page_object_id, parent_path
from cmssync.errors import ApiError
from cmssync.sync.observe_known import unreliable_list_warning
from cmssync.sync.read_failures import fails_the_object

PULL_INCLUDES = ("areas", "areas.content", "custom_attributes")
"""What pull reads of each page: blocks, the rendered areas (download links, ``cmssync.sync.pull``), attributes."""
HOME = "the home page (no children list holds it)"
NOT_LISTED = "children of pages the page list does not show"
ALL_CHILDREN = "children of every page (the page list has tied dates)"
NO_LIVE_VERSION = "pages without a live version"
OTHER_TREE = "children of pages of other locale trees (the page list shows the default tree only)"
UNRENDERED = tuple(include for include in PULL_INCLUDES if include != "areas.content")
"""What pull reads of a page whose render fails: its blocks and attributes."""

T = TypeVar("T")


@dataclass
class Unread:
    """What pull could not read in full: pages read without their render, and objects not read at all."""

    unrendered: list[str] = field(default_factory=list)
    """One note per read made again without the render (what, and the server's reason)."""
    unreadable: dict[str, str] = field(default_factory=dict)
    """Object id (``page:/path``, ``stack:handle``; ``page:/path/*`` for the pages below a parent) → what and why."""


async def read_degrading(
    read: Callable[[tuple[str, ...]], Awaitable[T]], what: str, object_id: str, unread: Unread
) -> T | None:
    """``read(PULL_INCLUDES)``; if that fails the object, ``read(UNRENDERED)`` (noted in ``unread.unrendered``);
    if that fails it too, None (noted in ``unread.unreadable``). A failure of the run (``SITE_WIDE``) is raised."""
    try:
        return await read(PULL_INCLUDES)
    except ApiError as exc:
        if not fails_the_object(exc):
            raise
        rendering = exc
    try:
        found = await read(UNRENDERED)
    except ApiError as exc:
        if not fails_the_object(exc):
            raise
        unread.unreadable[object_id] = f"{what}: cannot be read ({exc}); not pulled, its file left as it is"
        return None
    unread.unrendered.append(
        f"{what}: the rendered areas cannot be read ({rendering}); pulled without them (a block whose download "
        "links or pictures only the render shows is kept as a placeholder)"
    )
    return found


@dataclass
class TreeRead:
    """What the walk found: every page's id by path, the requests made for single pages, by reason, and what could
    not be read in full."""

    ids: dict[str, int] = field(default_factory=dict)
    alone: Counter[str] = field(default_factory=Counter)
    unread: Unread = field(default_factory=Unread)


@dataclass(frozen=True)
class PageMap:
    """What the flat page list says: paths with children, ids it shows, and whether to believe it."""

    parents: set[str]
    listed: set[int]
    trusted: bool


async def read_tree(
    client: ConcreteClient,
    roots: Mapping[str, int],
    on_pages: Callable[[list[Page]], None],
    *,
    wanted: Collection[str] = (),
    page_map: Awaitable[PageMap] | None = None,
) -> TreeRead:
    """Walk each locale tree from its home page (``roots``: home path → id; module docstring), calling
    ``on_pages`` with each batch of pages read. ``wanted`` (paths; empty: every page): only the trees and children
    lists on the way to them are read. ``page_map``: the flat list's map (:func:`read_page_map`) when the caller
    started reading it earlier. The flat list shows the default tree only (``locales.jsonl``), so every page of
    another tree has its children list read (counted as :data:`OTHER_TREE`)."""
    read = TreeRead()
    roots = {path: page_id for path, page_id in roots.items() if path == "/" or _wanted_below(path, wanted)}
    home_tasks = [asyncio.ensure_future(_read_page(client, i, path, read.unread)) for path, i in roots.items()]
    try:
        if wanted:
            known = PageMap(_ancestors(wanted), set(), trusted=True)
        else:
            known = await (page_map if page_map is not None else read_page_map(client))
    finally:
        found = list(await asyncio.gather(*home_tasks))
    level = []
    for (path, page_id), home in zip(roots.items(), found, strict=True):
        read.alone[HOME] += 1
        if home is None:  # not pulled, but its children may be
            home = Page(id=page_id, path=None if path == "/" else path)
        else:
            on_pages([home])
        read.ids[home.url_path] = home.id
        level.append(home)
    others = {path for path in roots if path != "/"}
    while level:
        asked = [page for page in level if _has_children(page, known, read, targeted=bool(wanted), others=others)]
        level = await _read_level(client, asked, read, on_pages)
    return read


async def _read_level(
    client: ConcreteClient, asked: list[Page], read: TreeRead, on_pages: Callable[[list[Page]], None]
) -> list[Page]:
    """Read the children lists of ``asked`` (one level of the walk), calling ``on_pages`` with each list's new
    pages (drafts read alone, for their live version); return the next level, as shells."""
    following: list[Page] = []
    # each list is converted as it arrives: a level of 10,000 pages with their blocks is never held at once
    pending = {asyncio.ensure_future(_read_children(client, p, read.unread)) for p in asked}
    arrivals = asyncio.as_completed(pending)
    for task in pending:
        task.add_done_callback(pending.discard)  # a list read is not held here once it is done
    try:
        for arriving in arrivals:
            live: list[Page] = []
            drafts: list[Page] = []
            for child in await arriving:
                if child.url_path in read.ids:
                    continue
                read.ids[child.url_path] = child.id
                following.append(_shell(child))
                (live if child.version is not None and child.version.is_approved else drafts).append(child)
            on_pages(live + await _read_alone(client, drafts, read))
    finally:  # after a failure, let the other requests finish rather than cut them off mid-connect
        await asyncio.gather(*pending, return_exceptions=True)
    return following


def _shell(page: Page) -> Page:
    """What the walk keeps of a page until the next level: its id, path and version, not its blocks."""
    return page.model_copy(update={"areas": None, "custom_attributes": []})


def _has_children(page: Page, known: PageMap, read: TreeRead, *, targeted: bool, others: Collection[str]) -> bool:
    """Whether to ask for ``page``'s children list (and count why, when the list alone would not have)."""
    path = page.url_path or "/"
    if path in known.parents or path == "/" or path in others:
        return True
    if targeted:
        return False
    if any(path.startswith(home + "/") for home in others):
        read.alone[OTHER_TREE] += 1
        return True
    if not known.trusted:
        read.alone[ALL_CHILDREN] += 1
        return True
    if page.id not in known.listed:
        read.alone[NOT_LISTED] += 1
        return True
    return False


async def read_page_map(client: ConcreteClient) -> PageMap:
    """The flat list's view of the tree (see the module docstring for when it is trusted)."""
    listed: dict[str, int] = {}
    dates: list[object] = []
    async for page in client.iter_pages():
        listed[page.url_path] = page.id
        dates.append(page.date_last_updated)
    return PageMap(_ancestors(listed), set(listed.values()), trusted=unreliable_list_warning("pages", dates) is None)


def _wanted_below(home: str, wanted: Collection[str]) -> bool:
    return not wanted or any(path == home or path.startswith(home + "/") for path in wanted)


def _ancestors(paths: Iterable[str]) -> set[str]:
    found: set[str] = set()
    for path in paths:
        parent = parent_path(path)
        while parent is not None and parent not in found:
            found.add(parent)
            parent = parent_path(parent)
    return found


async def _read_alone(client: ConcreteClient, pages: list[Page], read: TreeRead) -> list[Page]:
    """Pages without a live version, read on their own (what pull always did: the live view, empty if none)."""
    if not pages:
        return []
    read.alone[NO_LIVE_VERSION] += len(pages)
    found = await asyncio.gather(*(_read_page(client, p.id, p.url_path, read.unread) for p in pages))
    return [page for page in found if page is not None]


async def _read_page(client: ConcreteClient, page_id: int, path: str, unread: Unread) -> Page | None:
    """One page with what pull reads of it (see :func:`read_degrading`)."""

    async def read(includes: tuple[str, ...]) -> Page:
        return await client.get_page(page_id, includes=includes)

    return await read_degrading(read, f"{page_named(path)} (id {page_id})", page_object_id(path), unread)


async def _read_children(client: ConcreteClient, parent: Page, unread: Unread) -> list[Page]:
    """One parent's children list with what pull reads of each (see :func:`read_degrading`); none when it cannot be
    read."""

    async def read(includes: tuple[str, ...]) -> list[Page]:
        return await client.page_children(parent.id, includes=includes)

    path = parent.url_path
    below = page_object_id(path.rstrip("/") + "/*")
    what = f"the pages below {page_named(path)} (children of id {parent.id})"
    return await read_degrading(read, what, below, unread) or []
