"""``cmssync probe-block-type HANDLE``: whether a block type cmssync does not model (a theme's or a package's)
round-trips through this site's API, checked on a copy and recorded in the state for this site.

1. **One block of the type** is found: the one named by ``--block ID``, else the first in the site's page trees
   (each tree from its home, breadth first, its live version; then the stacks the state knows). None: an error
   naming what was read.
2. **Its value** as the API reads it (the page's ``includes=areas``, or ``GET /blocks/{id}`` for ``--block``: the
   same value, ``theme-blocks.jsonl``). A read without a value, with a list or map in a field, or with a
   site reference (``{ccm:export:file:…}``: an id the generic form cannot write back) is asymmetric at once.
3. **On the scratch page** (the trashed page ``cmssync page type probe`` the page-type id probe reuses, the state's
   ``site.probe_page``, made the same way when there is none: :mod:`cmssync.sync.page_type_numbers`) a copy is
   added with the value read and read back; written back unchanged through the API's block update and read back;
   then written with its first text field changed and read back. Each read must equal what was written, field by
   field; a write the site refuses (its validation, or a 500) is asymmetric with the site's reason. The block on
   the site is never written.
4. **The copy is deleted** (``DELETE /blocks/{id}``: every version of the scratch page); nothing else is left
   behind.
5. **The verdict** (symmetric or not, the fields and what each read as, the reason, the block probed, when) is
   recorded in the state's site record (:class:`~cmssync.state.records.BlockTypeVerdict`); ``pull`` then writes
   the type's blocks as content or keeps them (:mod:`cmssync.sync.probed_types`). A probe that cannot run (no
   block, no scratch page, the site unreachable) records nothing.
"""

from __future__ import annotations

import asyncio
import contextlib
import datetime as dt
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass, field
from logging import INFO
from typing import Any

from cmssync.api.client import ConcreteClient
from cmssync.api.errors import NotFound, ServerError, ValidationFailed
from cmssync.api.models import Block, Page
from cmssync.content.blocktypes import block_type
from cmssync.content.paths import is_stack_path, page_named
from cmssync.errors import ApiError, ConfigError
from cmssync.logs import note
from cmssync.state.backends import holding_lock
from cmssync.state.records import BlockTypeVerdict, State
from cmssync.sync.page_type_numbers import ProbeFailed, new_scratch_page
from cmssync.sync.probed_types import field_kinds, first_difference, unwritable
from cmssync.sync.site_trees import read_trees
from cmssync.sync.workspace import Workspace

AREA = "Main"
MARK = " (cmssync probe)"
"""Appended to the copy's first text field for the last write."""


@dataclass
class Probed:
    """What one probe did: the verdict recorded and each step, for the command's output."""

    handle: str
    verdict: BlockTypeVerdict
    where: str
    """The page or stack the probed block is on."""
    steps: list[str] = field(default_factory=list)


@dataclass
class _Found:
    block_id: int
    value: Any
    page: Page | None
    pairs: list[tuple[str, str]]
    """The (page type, template) pairs of the pages read, the found block's page first: the scratch page's."""


class _Refused(Exception):
    """The round trip found the type asymmetric: why."""


async def probe_block_type(workspace: Workspace, handle: str, *, block_id: int | None = None) -> Probed:
    """Probe ``handle`` on the workspace's site and record the verdict (see the module docstring)."""
    declared = block_type(handle)
    if declared is not None:
        raise ConfigError(
            f"{handle} is a block type cmssync models (pulled as {declared.pulled}"
            f"{': ' + declared.keep_reason if declared.keep_reason else ''}); there is nothing to probe"
        )
    store = workspace.store
    async with holding_lock(store, "cmssync probe-block-type"):
        state = workspace.load_state()
        async with workspace.client() as client:
            found = await _instance(client, state, handle, block_id)
            where = page_named(found.page.url_path) if found.page is not None else "no page"
            note(f"probing {handle} block {found.block_id} ({where}) on a copy", level=INFO)
            steps: list[str] = []
            problem = unwritable(found.value)
            try:
                if problem is not None:
                    raise _Refused(problem)
                await _round_trip(client, state, handle, found, steps, lambda: store.save(state))
                verdict = _verdict(True, found.value, None, found)
            except _Refused as exc:
                verdict = _verdict(False, found.value if problem is None else {}, str(exc), found)
        probed = Probed(handle, verdict, where, steps)
        state.record_block_type(handle, probed.verdict)
        store.save(state)
    return probed


def _verdict(symmetric: bool, value: Any, reason: str | None, found: _Found) -> BlockTypeVerdict:
    return BlockTypeVerdict(
        symmetric=symmetric,
        fields=field_kinds(value) if isinstance(value, Mapping) else {},
        reason=reason,
        block_id=found.block_id,
        probed_at=dt.datetime.now(dt.UTC).replace(microsecond=0).isoformat().replace("+00:00", "Z"),
    )


async def _instance(client: ConcreteClient, state: State, handle: str, block_id: int | None) -> _Found:
    """The block to probe: ``block_id``'s, or the first of the type the site's pages show."""
    if block_id is not None:
        try:
            block = await client.get_block(block_id, includes=("pages",))
        except NotFound:
            raise ConfigError(f"the site has no block {block_id}") from None
        if block.type != handle:
            raise ConfigError(f"block {block_id} is a {block.type} block, not {handle}")
        pages = block.pages or []
        return _Found(block.id, block.value, pages[0] if pages else None, _pairs(pages))
    read: list[Page] = []
    _, trees = await read_trees(client)
    note(f"looking for a {handle} block in the site's pages (each tree from its home)", level=INFO)
    for tree in trees.trees:
        level = [await client.get_page(tree.home_id, includes=("areas",))]
        while level:
            read += level
            hit = _first_of(handle, level, read)
            if hit is not None:
                return hit
            children = await asyncio.gather(*(client.page_children(page.id, includes=("areas",)) for page in level))
            level = [child for batch in children for child in batch]
    stacks = [record.id for path, record in sorted(state.pages.items()) if is_stack_path(path)]
    for stack_id in stacks:
        with contextlib.suppress(NotFound):
            read.append(await client.get_page(stack_id, includes=("areas",)))
            hit = _first_of(handle, read[-1:], read)
            if hit is not None:
                return hit
    raise ConfigError(
        f"no {handle} block on the site: {len(read)} pages and stacks read (every page of "
        f"{len(trees.trees)} tree(s), the {len(stacks)} stacks the state knows); add one in the page editor, or "
        "name one with --block ID"
    )


def _first_of(handle: str, pages: list[Page], read: list[Page]) -> _Found | None:
    for page in pages:
        for area in page.areas or []:
            block = next((b for b in area.blocks if b.type == handle), None)
            if block is not None:
                return _Found(block.id, block.value, page, _pairs([page, *read]))
    return None


def _pairs(pages: list[Page]) -> list[tuple[str, str]]:
    return list(dict.fromkeys((str(p.type), str(p.template)) for p in pages if p.type and p.template))


async def _round_trip(
    client: ConcreteClient, state: State, handle: str, found: _Found, steps: list[str], save: Callable[[], None]
) -> None:
    """Add, read, update, read, edit, read on the scratch page; :class:`_Refused` at the first difference."""
    value: dict[str, Any] = dict(found.value)
    trip = _Copy(client, handle, await _scratch(client, state, found, save))
    try:
        try:
            copy = await trip.add(value)
        except NotFound:  # the recorded scratch page is gone (the trash was emptied): make a new one
            trip.page_id = await _new_scratch(client, state, found, save)
            copy = await trip.add(value)
        steps.append(f"added a copy (block {copy}) with the value read: it reads back the same")
        copy = await trip.update(copy, value, "write the copy back unchanged")
        steps.append("wrote it back unchanged through the block update: it reads back the same")
        text = next((name for name, kind in field_kinds(value).items() if kind == "text"), None)
        if text is None:
            steps.append("no text field to change")
            return
        await trip.update(copy, {**value, text: f"{value[text]}{MARK}"}, f"write the copy with {text} changed")
        steps.append(f"wrote it with {text} changed: it reads back with the change, every other field the same")
    finally:
        await trip.delete()


@dataclass
class _Copy:
    """The copy on the scratch page: each write read back and compared with what was sent."""

    client: ConcreteClient
    handle: str
    page_id: int
    written: list[int] = field(default_factory=list)
    """Every id the copy had (an update may answer a new one): all deleted at the end."""

    async def add(self, value: dict[str, Any]) -> int:
        call = self.client.add_block(self.page_id, AREA, type=self.handle, value=value)
        return await self._checked("add a copy with the value read", value, call)

    async def update(self, block_id: int, value: dict[str, Any], what: str) -> int:
        return await self._checked(what, value, self.client.update_block(self.page_id, AREA, block_id, value=value))

    async def _checked(self, what: str, sent: dict[str, Any], call: Awaitable[Block]) -> int:
        try:
            block = await call
        except (ValidationFailed, ServerError) as exc:
            raise _Refused(f"the site refused to {what}: {exc}") from None
        self.written.append(block.id)
        _same(what, sent, (await self.client.get_block(block.id)).value)
        return block.id

    async def delete(self) -> None:
        for number in dict.fromkeys(self.written):
            with contextlib.suppress(ApiError):
                await self.client.delete_block(number)


def _same(what: str, sent: Mapping[str, Any], read: object) -> None:
    difference = first_difference(sent, read) if isinstance(read, Mapping) else "it reads back without a value"
    if difference is not None:
        raise _Refused(f"the copy reads back differently after the request to {what}: {difference}")


async def _scratch(client: ConcreteClient, state: State, found: _Found, save: Callable[[], None]) -> int:
    recorded = state.site.probe_page if state.site is not None else None
    return recorded if recorded is not None else await _new_scratch(client, state, found, save)


async def _new_scratch(client: ConcreteClient, state: State, found: _Found, save: Callable[[], None]) -> int:
    """A new scratch page under the found block's page (home for a stack's), of a type and template a page read
    shows (home's when no page was read: ``--block`` of a block on no page)."""
    parent = found.page.id if found.page is not None and not is_stack_path(found.page.url_path) else 1
    pairs = found.pairs or _pairs([await client.get_page(1)])
    try:
        return await new_scratch_page(client, state, parent, pairs, save, failing="no scratch page to probe on")
    except ProbeFailed as exc:
        raise ConfigError(str(exc)) from None
