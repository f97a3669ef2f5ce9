"""``cmssync probe-block-type HANDLE``: whether a block type cmssync does not model (a theme's or a package's)
round-trips through this site's API, checked on a copy and recorded in the state for this site.

1. **One block of the type** is found: the one named by ``--block ID``, else the first in the site's page trees
   (each tree from its home, breadth first, its live version; then the stacks the state knows). None: an error
   naming what was read.
2. **Its value is read** (``GET /blocks/{id}``). A read without a value, with a list or map in a field, or with a
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
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from logging import INFO
from typing import Any

from cmssync.api.client import ConcreteClient
from cmssync.api.errors import NotFound, ServerError, ValidationFailed
from cmssync.api.models import Page
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
            probed = Probed(handle, _verdict(True, {}, None, found), where)
            problem = unwritable(found.value)
            try:
                if problem is not None:
                    raise _Refused(problem)
                await _round_trip(client, state, handle, found, probed.steps, lambda: store.save(state))
                probed.verdict = _verdict(True, found.value, None, found)
            except _Refused as exc:
                probed.verdict = _verdict(False, found.value if problem is None else {}, str(exc), found)
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
    page_id = await _scratch(client, state, found, save)
    written: list[int] = []
    try:
        try:
            added = await client.add_block(page_id, AREA, type=handle, value=value)
        except NotFound:  # the recorded scratch page is gone (the trash was emptied): make a new one
            page_id = await _new_scratch(client, state, found, save)
            added = await _write("add a copy", client.add_block(page_id, AREA, type=handle, value=value))
        except (ValidationFailed, ServerError) as exc:
            raise _Refused(f"the site refused to add a copy with the value read: {exc}") from None
        written.append(added.id)
        _same("a copy added with the value read", value, (await client.get_block(added.id)).value)
        steps.append(f"added a copy (block {added.id}) with the value read: it reads back the same")
        updated = await _write(
            "write the copy back unchanged", client.update_block(page_id, AREA, added.id, value=value)
        )
        written.append(updated.id)
        _same("the copy written back unchanged", value, (await client.get_block(updated.id)).value)
        steps.append("wrote it back unchanged through the block update: it reads back the same")
        text = next((name for name, kind in field_kinds(value).items() if kind == "text"), None)
        if text is None:
            steps.append("no text field to change")
            return
        edited = {**value, text: f"{value[text]}{MARK}"}
        changed = await _write(
            f"write the copy with {text} changed", client.update_block(page_id, AREA, updated.id, value=edited)
        )
        written.append(changed.id)
        _same(f"the copy written with {text} changed", edited, (await client.get_block(changed.id)).value)
        steps.append(f"wrote it with {text} changed: it reads back with the change, every other field the same")
    finally:
        for number in dict.fromkeys(written):
            with contextlib.suppress(ApiError):
                await client.delete_block(number)


async def _write(what: str, call: Any) -> Any:
    try:
        return await call
    except (ValidationFailed, ServerError) as exc:
        raise _Refused(f"the site refused to {what}: {exc}") from None


def _same(what: str, sent: Mapping[str, Any], read: object) -> None:
    difference = first_difference(sent, read) if isinstance(read, Mapping) else "it reads back without a value"
    if difference is not None:
        raise _Refused(f"{what} reads back differently: {difference}")


async def _scratch(client: ConcreteClient, state: State, found: _Found, save: Callable[[], None]) -> int:
    recorded = state.site.probe_page if state.site is not None else None
    return recorded if recorded is not None else await _new_scratch(client, state, found, save)


async def _new_scratch(client: ConcreteClient, state: State, found: _Found, save: Callable[[], None]) -> int:
    parent = found.page.id if found.page is not None and not is_stack_path(found.page.url_path) else 1
    try:
        return await new_scratch_page(client, state, parent, found.pairs, save)
    except ProbeFailed as exc:
        raise ConfigError(f"no scratch page to probe on: {exc}") from None
