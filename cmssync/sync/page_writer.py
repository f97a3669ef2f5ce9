"""The writes to one page in one run (:class:`PageWriter`), following the server's versioning rules (design.md §5,
concrete-api.md §8 and §13).

Every write to a page (its fields, a block add, update or delete) lands in one unapproved draft version; with
``publish: approve`` that draft is approved after the page's last change, so each touched page gets exactly one new
version. The first write's draft is recorded in the state at once, so a run killed half way is recognised by the
next one, which finishes the same draft instead of starting another.

Blocks are written in Concrete's stored form (``{CCM:CID_<id>}``, ``{CCM:FID_DL_<n>}``, numeric file columns), not
in the export form the API reads back; numeric file ids are learned from the site when needed
(``cmssync.sync.file_numbers``, a probe block in the same draft). What is written comes from the plan
(:mod:`cmssync.plan.page_form`), never from the content.

Block ids: the first update of a block after an approval answers with a *new* id (the block was copied into the
draft); the id the server returns is used from then on.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any

from cmssync.api.client import ConcreteClient
from cmssync.api.models import Block, PageVersion
from cmssync.content.blocktypes import block_type as block_type_of
from cmssync.content.paths import is_stack_path
from cmssync.plan.actions import Action, BlockChange
from cmssync.plan.conflicts import applied_base
from cmssync.plan.page_form import DesiredPage, PageForm, holds_written, write_fields, write_value
from cmssync.state.records import PageRecord
from cmssync.sync.engine import ApplyContext, create_verified
from cmssync.sync.file_numbers import PROBE_AREA
from cmssync.sync.page_read import live_block
from cmssync.sync.write_resolver import write_resolver


class PageWriter:
    """The writes to one page in one run: tracks its draft version, records it, approves it at the end.

    ``recent_version_id`` / ``recent_is_draft`` describe the page's newest version before this run's first write,
    and ``area_sizes`` how many blocks each area holds in it.
    """

    def __init__(
        self,
        context: ApplyContext,
        path: str,
        page_id: int,
        desired: DesiredPage,
        *,
        recent_version_id: int | None,
        recent_is_draft: bool,
        area_sizes: dict[str, int],
    ) -> None:
        self.context = context
        self.desired = desired
        """The page as the content wants it (rendered once by the caller): its digest is recorded with the draft, so
        the next run knows what was being written, and the page's record is made of it at the end."""
        self.path = path
        self.page_id = page_id
        record = context.state.pages.get(path)
        self.draft_id: int | None = record.draft_version_id if record is not None else None
        self.recent_version_id = recent_version_id
        self.recent_is_draft = recent_is_draft
        self.area_sizes = dict(area_sizes)
        self.writes = 0
        self.stack = is_stack_path(path)
        self.newest = recent_version_id or 0
        """The page's newest version as far as this run knows (a stack's next write lands in the one after)."""

    @property
    def client(self) -> ConcreteClient:
        return self.context.client

    def _before_write(self) -> None:
        """Record the draft this write will land in before sending it (design.md §5: a draft of an interrupted run
        is recognised). Concrete numbers a page's versions 1, 2, 3 …, so the draft is the pending one, or the
        version after the newest. If the answer is then lost, the next run still knows the draft is cmssync's. A
        stack never reuses its draft: each write lands in a version after the newest, journaled before each."""
        if self.recent_version_id is None:
            return
        if self.stack:  # every write to a stack makes a version of its own (stack-writes.jsonl): journal each
            self._record_draft(self.newest + 1)
            return
        if self.writes:
            return
        expected = self.recent_version_id if self.recent_is_draft else self.recent_version_id + 1
        self._record_draft(expected)

    def _record_draft(self, version_id: int) -> None:
        """Journal the draft, the page it goes toward and, for a draft this run starts, the blocks it starts from
        (``PageRecord.draft_from``: a block of the draft not among them is cmssync's own, answered or not)."""
        if version_id == self.draft_id:
            return
        resumed = self.draft_id is not None
        self.draft_id = version_id
        record = self.context.state.pages.get(self.path) or PageRecord(id=self.page_id)
        start = record.draft_from if resumed else self._blocks_before()
        self.context.state.record_page(
            self.path,
            record.evolve(
                id=self.page_id, draft_version_id=version_id, draft_target=self.desired.digest, draft_from=start
            ),
        )
        self.context.save()

    def _blocks_before(self) -> tuple[int, ...] | None:
        """The ids of the page's blocks as observed before this run wrote (its recent version), None if unread."""
        page = self.context.snapshot.pages.get(self.path)
        if page is None:
            return None
        return tuple(sorted({block.id for blocks in page.areas.values() for block in blocks}))

    def _saw(self, version: PageVersion | None) -> None:
        self.writes += 1
        if version is not None and version.id is not None and not version.is_approved:
            self.newest = max(self.newest, version.id)
            self._record_draft(version.id)

    async def update_fields(self, form: PageForm, wanted: set[str]) -> None:
        fields = write_fields(form, replace(self.context.resolver(), mode="write"))
        attributes = {
            name.removeprefix("attributes."): value
            for name, value in fields.items()
            if name.startswith("attributes.") and name in wanted
        }
        plain = {name: fields[name] for name in ("name", "description", "type", "template") if name in wanted}
        self._before_write()
        page = await self.client.update_page(self.page_id, attributes=attributes or None, **plain)
        self._saw(page.version)

    async def block(self, change: BlockChange) -> None:
        self._before_write()
        if change.op == "delete":
            assert change.block_id is not None
            result = await self.client.delete_area_block(self.page_id, change.area, change.block_id)
            self.area_sizes[change.area] = self.area_sizes.get(change.area, 1) - 1
            self._saw(result.version)
            return
        block = change.write
        assert block is not None  # the planner gives every add and update its write form
        value = write_value(block, await write_resolver(self.context, self.path, self.page_id, block, self._probe))
        if change.op == "update":
            assert change.block_id is not None
            value = {**self._unmanaged_fields(change.area, change.block_id, block.type), **value}
            updated = await self.client.update_block(self.page_id, change.area, change.block_id, value=value)
            self._saw(updated.page.version if updated.page else None)
            return
        expected_size = self.area_sizes.get(change.area, 0) + 1
        added = await create_verified(
            lambda: self.client.add_block(self.page_id, change.area, type=block.type, value=value),
            lambda: self._landed_block(change, expected_size),
        )
        self.area_sizes[change.area] = expected_size
        self._saw(added.page.version if added.page else None)

    def _unmanaged_fields(self, area: str, block_id: int, block_type: str) -> dict[str, str]:
        """The live block's fields that the content does not name, to send along with an update.

        A block update replaces the whole record (concrete-api.md §7), so a field left out is reset: a page title's
        ``filterDateFormat`` or ``tagTextFormat`` would be lost when only its text is managed. Fields whose read
        value is an export form (``{ccm:export:…}``) are left out — written back verbatim they would store a
        broken link — and so are fields that must not be sent as read (``cropImage: "0"`` of an image).
        """
        page = self.context.snapshot.pages.get(self.path)
        live = next((b for b in page.blocks(area) if b.id == block_id), None) if page is not None else None
        if live is None:
            return {}
        declared = block_type_of(block_type)
        dropped = declared.dropped_when_zero if declared is not None else frozenset()
        return {
            key: value
            for key, value in live.value.items()
            if "{ccm:export:" not in value.lower() and not (key in dropped and value == "0")
        }

    async def _probe(self, html: str) -> str:
        """Add a probe block to the draft, return its content as read back, delete it again (same draft)."""
        self._before_write()
        added = await self.client.add_block(self.page_id, PROBE_AREA, type="content", value={"content": html})
        self._saw(added.page.version if added.page else None)
        try:
            return str(added.value.get("content", ""))
        finally:
            result = await self.client.delete_area_block(self.page_id, PROBE_AREA, added.id)
            self._saw(result.version)

    async def _landed_block(self, change: BlockChange, size: int) -> Block | None:
        """After an ambiguous add: the block, if the area of the recent version now ends with it at ``size``.

        What it must hold is the content's value in the form the API reads back, computed here only: an add that
        was answered (nearly all of them) never needs it."""
        page = await self.client.get_page(self.page_id, includes=("areas",), version="recent")
        area = page.area(change.area)
        if area is None or len(area.blocks) != size:
            return None
        last = area.blocks[-1]
        base_url = self.context.base_url
        assert change.write is not None  # an add always has its write form
        landed = live_block(last, base_url)
        if not holds_written(change.write, landed, self.context.resolver(strict=False), base_url=base_url):
            return None
        return last.model_copy(update={"page": page})

    async def finish(self, form: PageForm, action: Action | None = None) -> str:
        """Approve the draft (``publish: approve``) or leave it for review, and record what the page now is (and,
        per field, the base of the next run's three-way conflicts: ``cmssync.plan.conflicts.applied_base``)."""
        draft = self.draft_id
        if draft is None and self.writes:
            draft = await self._newest_unapproved()
        end_date = form.end_date
        live_id: int | None = None
        message = "no change needed"
        if draft is not None:
            if self.context.publish == "approve":
                kwargs: dict[str, Any] = {"approved": True}
                if end_date is not None:
                    kwargs["publish_end_date"] = end_date
                await self.client.update_page_version(self.page_id, draft, **kwargs)
                live_id, message = draft, f"version {draft} approved"
            else:
                if end_date is not None:
                    await self.client.update_page_version(self.page_id, draft, publish_end_date=end_date)
                message = f"draft version {draft} left for review"
        desired = self.desired
        old = self.context.state.pages.get(self.path) or PageRecord(id=self.page_id)
        live = self.context.snapshot.pages.get(self.path)
        base = applied_base(old.base, desired.fields, desired.areas, desired.end_date, action, live)
        self.context.state.record_page(
            self.path,
            old.evolve(
                id=self.page_id,
                digest=desired.digest,
                base=base,
                protected=form.protect,
                live_version_id=live_id if live_id is not None else old.live_version_id,
                draft_version_id=None if live_id is not None else draft,
                draft_target=None if live_id is not None else desired.digest,
                draft_from=None if live_id is not None else old.draft_from,
            ),
        )
        self.context.save()
        if live_id is not None:
            await self._prune_versions(live_id)
        return message

    async def _newest_unapproved(self) -> int | None:
        async for version in self.client.iter_page_versions(self.page_id):
            return version.id if not version.is_approved else None
        return None

    async def _prune_versions(self, live_id: int) -> None:
        keep = self.context.versions_keep
        # Version ids count up from 1 per page, so a page whose newest version id is within ``keep`` cannot have
        # more versions than that: no request needed.
        if keep is None or live_id <= keep:
            return
        versions = await self.client.list_page_versions(self.page_id)
        for version in versions[keep:]:  # newest first
            if version.id is not None and version.id != live_id and not version.is_approved:
                await self.client.delete_page_version(self.page_id, version.id)
