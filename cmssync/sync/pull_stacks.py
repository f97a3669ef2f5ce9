"""Finding a site's stacks for ``cmssync pull``: global areas (header navigation, footer columns) and other stacks.

The API lists no stack (tests/conformance/concrete-9.3.1/stacks.jsonl): ``GET /pages`` and every children list
leave system pages out, ``/!stacks`` has no children, and a page's ``includes=areas`` shows no global area. A stack
is a page under ``/!stacks/`` (type ``core_stack``) that a read by id shows like any page. So pull reads, besides
the ids the state and the stack files already name, every page id the page tree did not show, from 1 to past the
highest id known: while a window of :data:`PROBE_WINDOW` ids past it holds a page, the next window is read too (a
stack made after the last page has a higher id). On the ``atomik_full`` sample site that is about 240 reads (its
dashboard and single pages, page-type defaults and six stacks) for 24 pages. Only a pull that takes new stacks in
probes (the first pull, ``--all``, ``--kind stack``, ``--pages /!stacks/…``); in a directory that manages content,
the stacks the state knows are read by id.
"""

from __future__ import annotations

import asyncio
from collections.abc import Collection

from cmssync.api.client import ConcreteClient
from cmssync.api.errors import NotFound, PermissionDenied
from cmssync.api.models import Page
from cmssync.content.paths import is_stack_path
from cmssync.sync.pull_tree import PULL_INCLUDES

PROBE_WINDOW = 20
"""How many ids past the highest known page id are read, and again while the last window found a page."""


async def find_stacks(
    client: ConcreteClient, seen: Collection[int], named: Collection[int], *, probe: bool
) -> list[Page]:
    """The stacks of the site, each read with what pull reads of a page. ``seen``: the ids the page tree showed
    (not read again); ``named``: the stack ids the state knows (read first); ``probe``: also look for the others
    (a directory that takes new stacks in), else only ``named`` are read."""
    found: dict[int, Page] = {}
    top = max([*seen, *named], default=0)
    await _read(client, [i for i in named if i not in seen], found)
    if probe:
        await _probe(client, top, seen, found)
    stacks = [page for page in found.values() if page.path is not None and is_stack_path(page.path)]
    return list(await asyncio.gather(*(client.get_page(p.id, includes=PULL_INCLUDES) for p in stacks)))


async def _probe(client: ConcreteClient, top: int, seen: Collection[int], found: dict[int, Page]) -> None:
    await _read(client, [i for i in range(1, top + 1) if i not in seen and i not in found], found)
    while True:
        window = range(top + 1, top + PROBE_WINDOW + 1)
        if not await _read(client, list(window), found):
            break
        top = window[-1]


async def _read(client: ConcreteClient, ids: list[int], found: dict[int, Page]) -> bool:
    """Read ``ids`` (no includes) into ``found``; whether any of them is a page."""
    pages = await asyncio.gather(*(_page(client, page_id) for page_id in ids))
    found.update((page.id, page) for page in pages if page is not None)
    return any(page is not None for page in pages)


async def _page(client: ConcreteClient, page_id: int) -> Page | None:
    try:
        return await client.get_page(page_id)
    except (NotFound, PermissionDenied):  # no page with this id, one in the trash, or one the account may not read
        return None
