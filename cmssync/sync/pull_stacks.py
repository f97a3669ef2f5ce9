"""Finding a site's stacks for ``cmssync pull``: global areas (header navigation, footer columns) and other stacks.

The API lists no stack (tests/conformance/concrete-9.3.1/stacks.jsonl): ``GET /pages`` and every children list
leave system pages out, ``/!stacks`` has no children, and a page's ``includes=areas`` shows no global area. A stack
is a page under ``/!stacks/`` (type ``core_stack``) that a read by id shows like any page. So pull reads, besides
the ids the state and the stack files already name, every page id the page tree did not show, from 1 to past the
highest id known: while a window of :data:`PROBE_WINDOW` ids past it holds a page, the next window is read too (a
stack made after the last page has a higher id). On the ``atomik_full`` sample site that is about 240 reads (its
dashboard and single pages, page-type defaults and six stacks) for 24 pages. Only a pull that takes new stacks in
probes (the first pull, ``--all``, ``--kind stack``, ``--pages /!stacks/…``); in a directory that manages content,
the stacks the state knows are read by id. An id the server cannot read (an error that outlasts the retries) may be
a stack: pull names it as not pulled and goes on with the others, and the pull is incomplete (exit 1), as for any
object it cannot read. A stack found whose read with what pull reads of a page
fails (its render, usually: ``cmssync.sync.pull_tree.read_degrading``) is read without the render, or, failing that,
not pulled and named.
"""

from __future__ import annotations

import asyncio
from collections.abc import Collection, Mapping

from cmssync.api.client import ConcreteClient
from cmssync.api.errors import NotFound, PermissionDenied, ServerError, UnexpectedResponse
from cmssync.api.models import Page
from cmssync.content.paths import is_stack_path, page_named, page_object_id
from cmssync.sync.pull_tree import Unread, read_degrading

PROBE_WINDOW = 20
"""How many ids past the highest known page id are read, and again while the last window found a page."""


async def find_stacks(
    client: ConcreteClient, seen: Collection[int], named: Mapping[int, str], unread: Unread, *, probe: bool
) -> list[Page]:
    """The stacks of the site, each read with what pull reads of a page. What cannot be read is noted in
    ``unread``: a stack found, a stack the state names, and a page id the search could not read (a server error
    that outlasted the retries: it may be a stack, so the pull is incomplete). ``seen``: the ids the page tree
    showed (not read again); ``named``: the stack ids the state knows, with their paths (read first; one that
    cannot be read is noted as that stack); ``probe``: also look for the others (a directory that takes new stacks
    in), else only ``named`` are read."""
    search = _Search(client)
    top = max([*seen, *named], default=0)
    await search.read([i for i in named if i not in seen])
    for page_id, why in list(search.failed):
        if page_id in named:
            search.failed.remove((page_id, why))
            path = named[page_id]
            unread.unreadable[page_object_id(path)] = (
                f"{page_named(path)} (id {page_id}): cannot be read ({why}); not pulled, its file left as it is"
            )
    if probe:
        await search.read([i for i in range(1, top + 1) if i not in seen and i not in search.found and i not in named])
        while await search.read(list(range(top + 1, top + PROBE_WINDOW + 1))):
            top += PROBE_WINDOW
    for page_id, why in search.failed:
        unread.unreadable[f"page-id:{page_id}"] = (
            f"page id {page_id}: cannot be read while looking for stacks ({why}); if it is a stack, it is not pulled"
        )
    stacks = [page for page in search.found.values() if page.path is not None and is_stack_path(page.path)]
    read = await asyncio.gather(*(_read_stack(client, stack, unread) for stack in stacks))
    return [page for page in read if page is not None]


async def _read_stack(client: ConcreteClient, stack: Page, unread: Unread) -> Page | None:
    async def read(includes: tuple[str, ...]) -> Page:
        return await client.get_page(stack.id, includes=includes)

    return await read_degrading(
        read, f"{page_named(stack.url_path)} (id {stack.id})", page_object_id(stack.url_path), unread
    )


class _Search:
    def __init__(self, client: ConcreteClient) -> None:
        self.client = client
        self.found: dict[int, Page] = {}
        self.failed: list[tuple[int, str]] = []

    async def read(self, ids: list[int]) -> bool:
        """Read ``ids`` (no includes) into ``found``; whether any of them is a page."""
        pages = await asyncio.gather(*(self._page(page_id) for page_id in ids))
        self.found.update((page.id, page) for page in pages if page is not None)
        return any(page is not None for page in pages)

    async def _page(self, page_id: int) -> Page | None:
        try:
            return await self.client.get_page(page_id)
        except (NotFound, PermissionDenied):  # no page with this id, one in the trash, one the account may not read
            return None
        except (ServerError, UnexpectedResponse) as exc:
            self.failed.append((page_id, str(exc)[:200]))
            return None
