"""Stack displays named in the pages read: each display's value as the stack its page's rendering shows
(``cmssync.plan.stack_displays``), for pull and for planning alike. Read-only.

A page read holds its displays as ``value: []``; :func:`with_stacks_named` gives each one ``{<field>:
{ccm:export:page:/!stacks/<handle>}}`` (the block type's ``shows_stack`` field), or, when the rendering cannot tell,
the reason under ``why`` (``STACK_UNNAMED``: pull then keeps the block as a placeholder, and a plan writes the
content's stack over it). The stacks' renderings are their ``Main`` area's ``includes=areas.content``.

Pull reads every page and stack with its rendering anyway, so naming costs it nothing; it names a page's displays
once the stacks are read (:func:`cmssync.sync.pull_pages.pull_pages`). Planning reads pages without their rendering,
so :func:`name_observed_stacks` reads again, only when the observation holds a display, each page holding one (in
the version observed) and each stack observed, with its rendering: one request each. A page whose displays cannot be
told because such a read failed (its own, or a stack's) is held with the server's reason, as an object that cannot
be read: its displays would otherwise look changed on the site.
"""

from __future__ import annotations

import asyncio
import dataclasses
from collections.abc import Collection, Iterable, Mapping

from cmssync.api.client import ConcreteClient
from cmssync.api.models import Area, Page
from cmssync.content.blocktypes import block_type
from cmssync.content.blocktypes.descriptor import STACK_UNNAMED
from cmssync.content.paths import is_stack_path, page_named, page_object_id
from cmssync.errors import ApiError
from cmssync.plan.references import page_export
from cmssync.plan.snapshot import LivePage, Snapshot
from cmssync.plan.stack_displays import name_stacks
from cmssync.sync.page_read import PAGE_INCLUDES, to_live_page

RENDERED = (*PAGE_INCLUDES, "areas.content")
STACK_AREA = "Main"
"""The area of a stack that a display shows."""


def _shows_stack(block_kind: str | None) -> str | None:
    declared = block_type(block_kind or "")
    return declared.shows_stack if declared is not None else None


def holds_displays(areas: Iterable[tuple[str, Iterable[str | None]]]) -> bool:
    """Whether any of ``areas`` (name, block types) holds a block that shows a stack."""
    return any(_shows_stack(kind) is not None for _name, kinds in areas for kind in kinds)


def page_holds_displays(page: Page) -> bool:
    return holds_displays((area.name, (b.type for b in area.blocks)) for area in page.areas or [])


def stack_renders(stacks: Iterable[Page]) -> dict[str, str]:
    """Each stack read with its rendering: path → its ``Main`` area's rendering (a stack read without it, or whose
    ``Main`` is empty, renders nothing)."""
    renders = {}
    for stack in stacks:
        main = next((a for a in stack.areas or [] if a.name == STACK_AREA), None)
        if main is not None and main.content is not None:
            renders[stack.url_path] = main.content.raw or ""
    return renders


def with_stacks_named(page: Page, renders: Mapping[str, str]) -> Page:
    """``page`` with each stack display's value naming its stack, or saying why it cannot (module docstring)."""
    if not page_holds_displays(page):
        return page
    return page.model_copy(update={"areas": [_named_area(area, renders) for area in page.areas or []]})


def _named_area(area: Area, renders: Mapping[str, str]) -> Area:
    displays = [block for block in area.blocks if _shows_stack(block.type) is not None]
    if not displays:
        return area
    rendered = area.content.raw if area.content is not None else None
    named = name_stacks(rendered, len(displays), renders)
    values = {}
    for index, block in enumerate(displays):
        field = _shows_stack(block.type)
        assert field is not None
        values[block.id] = {STACK_UNNAMED: named} if isinstance(named, str) else {field: page_export(named[index])}
    blocks = [b.model_copy(update={"value": values[b.id]}) if b.id in values else b for b in area.blocks]
    return area.model_copy(update={"blocks": blocks})


class PageDisplays:
    """Names the stack displays of pages read one at a time without their rendering (``refresh``, ``import``): a
    page holding one is read again, in its live version, with its rendering, and the stacks ``stack_ids`` with
    theirs the first time a page needs them (one request each; a stack the site no longer has renders nothing)."""

    def __init__(self, client: ConcreteClient, stack_ids: Iterable[int]) -> None:
        self.client = client
        self.stack_ids = sorted(stack_ids)
        self.renders: dict[str, str] | None = None

    async def named(self, page: Page) -> Page:
        """``page`` with its displays named (:func:`with_stacks_named`); ``page`` itself when it holds none."""
        if not page_holds_displays(page):
            return page
        if self.renders is None:
            read = await asyncio.gather(*(self._stack(number) for number in self.stack_ids))
            self.renders = stack_renders(stack for stack in read if stack is not None)
        again = await self.client.get_page(page.id, includes=RENDERED)
        return with_stacks_named(again, self.renders)

    async def _stack(self, number: int) -> Page | None:
        try:
            return await self.client.get_page(number, includes=RENDERED)
        except ApiError as exc:
            if exc.status == 404:
                return None
            raise


async def name_observed_stacks(
    client: ConcreteClient, snapshot: Snapshot, paths: Collection[str] | None = None
) -> Snapshot:
    """The snapshot with the stack displays of its pages (of those at ``paths``) named (module docstring);
    unchanged, with nothing read, when they hold none. A page whose displays cannot be told because a rendering
    could not be read is unreadable (:func:`_unread_why`): held, with the server's reason."""
    holding = [
        page
        for page in snapshot.pages.values()
        if (paths is None or page.path in paths)
        and holds_displays((name, (b.type for b in blocks)) for name, blocks in page.areas.items())
    ]
    if not holding:
        return snapshot
    stacks = [page for page in snapshot.pages.values() if is_stack_path(page.path)]
    read = await asyncio.gather(
        *(_read(client, stack.id, recent=False) for stack in stacks),
        *(_read(client, page.id, recent=not page.batched) for page in holding),
    )
    unread = {
        live.path: answer for live, answer in zip([*stacks, *holding], read, strict=True) if isinstance(answer, str)
    }
    renders = stack_renders(page for page in read[: len(stacks)] if isinstance(page, Page))
    named: dict[str, LivePage] = {}
    held = dict(snapshot.unreadable)
    for live, page in zip(holding, read[len(stacks) :], strict=True):
        shown = with_stacks_named(page if isinstance(page, Page) else _unrendered(live), renders)
        named[live.path] = _renamed(live, shown, client.base_url)
        why = _unread_why(live.path, named[live.path], unread)
        if why is not None:
            held[page_object_id(live.path)] = why
    pages = {path: named.get(path, page) for path, page in snapshot.pages.items()}
    by_id = {page.id: page for page in pages.values()}
    return dataclasses.replace(snapshot, pages=pages, pages_by_id={**snapshot.pages_by_id, **by_id}, unreadable=held)


def _unread_why(path: str, page: LivePage, unread: Mapping[str, str]) -> str | None:
    """Why a page's stack displays cannot be told because a rendering could not be read (its own, or a stack's
    while one of its displays is unnamed), or None. Such a page is held (``Snapshot.unreadable``): its displays
    would otherwise look changed on the site."""
    if path in unread:
        return f"its rendering, which alone names its stack displays, could not be read ({unread[path]})"
    unnamed = any(STACK_UNNAMED in block.value for blocks in page.areas.values() for block in blocks)
    stacks = sorted(p for p in unread if is_stack_path(p))
    if unnamed and stacks:
        return (
            f"a stack display's stack cannot be told: the rendering of {page_named(stacks[0])} could not be read "
            f"({unread[stacks[0]]})"
        )
    return None


async def _read(client: ConcreteClient, page_id: int, *, recent: bool) -> Page | str:
    """The page with its rendering, or the server's reason it could not be read."""
    try:
        return await client.get_page(page_id, includes=RENDERED, version="recent" if recent else "live")
    except ApiError as exc:
        return str(exc)[:200]


def _unrendered(live: LivePage) -> Page:
    """A page read again without success, as the blocks it was observed with and no rendering."""
    areas = [
        Area(name=name, blocks=[{"id": b.id, "type": b.type, "value": dict(b.value)} for b in blocks])
        for name, blocks in live.areas.items()
    ]
    return Page(id=live.id, path=live.path, areas=areas)


def _renamed(live: LivePage, page: Page, base_url: str) -> LivePage:
    """``live`` with its areas' blocks as ``page`` (read again, displays named) has them."""
    again = to_live_page(page, live.live_version_id, base_url, batched=live.batched)
    return dataclasses.replace(live, areas=again.areas)
