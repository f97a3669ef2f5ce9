"""Pages, blocks in areas, blocks by id, and page versions.

Real-server facts this code leans on (concrete-api.md §7, §13): a page update and every block add/update/delete write
to one unapproved draft version (nothing goes live until :meth:`PagesApi.approve_version`); the first update of a
block after an approval answers with a **new** block id (use the id returned); a block validation failure comes with
status 200 (raised as ``ValidationFailed``); ``POST /pages`` ignores ``description``; denying a version answers with
the version as it was, so the client reads it again; the documented dialect answers a block update with a
delete-result shape, so the client then reads the block.
"""

from __future__ import annotations

import asyncio
import datetime as dt
from collections.abc import AsyncIterator, Coroutine, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Literal, TypeVar

from cmssync.api.models import Block, DeleteResult, Page, PageVersion
from cmssync.api.pagination import Endpoints, includes_param
from cmssync.api.retry import Kind

_UNSET: Any = object()
T = TypeVar("T")


@dataclass(frozen=True)
class PageTreeNode:
    """One page found walking the tree: its parent's id (None for the root) and depth (root = 0)."""

    page: Page
    parent_id: int | None
    depth: int


class PagesApi(Endpoints):
    # -- pages ------------------------------------------------------------------------------------------------------

    def iter_pages(self, *, includes: Sequence[str] = (), limit: int = 100) -> AsyncIterator[Page]:
        """Every page ``GET /pages`` lists (live, non-system pages), each once. Unreliable on real sites when
        modification dates tie: prefer :meth:`walk_page_tree`."""
        return self._walk(
            Page,
            "/pages",
            params=includes_param(tuple(includes)),
            limit=limit,
            sort_key=lambda item: item.date_last_updated,
        )

    async def latest_pages(self, *, limit: int, after: int | None = None) -> list[Page]:
        """The most recently modified pages (``GET /pages``, newest first), one request. On a real 9.3.1 site a
        page update, even unapproved, and an approval move the page to the top; a block edit moves it only once
        approved (``feed.*`` in ``tests/conformance/concrete-9.3.1/lists.jsonl``)."""
        return await self._first_page(Page, "/pages", limit=limit, after=after)

    async def page_children(self, page_id: int, *, includes: Sequence[str] = ()) -> list[Page]:
        """The direct children of a page, in sitemap order, in ONE request: the batched read of a tree level.

        A real 9.3.1 server returns every child at once: ``limit`` is ignored and ``meta.cursor.next`` is only the
        last child's id, not a continuation (``pages.children.home.limit_ignored`` in the recording), so there is
        nothing to page through. With ``includes=("areas", "custom_attributes")`` each child carries its blocks and
        attributes — of its **live** version only: ``version=recent`` is ignored, and an unapproved block change moves
        neither ``date_last_updated`` nor ``version.id`` (``batch.*`` in ``blocks.jsonl``), so a pending draft is
        invisible here; read the page on its own (:meth:`get_page` with ``version="recent"``) where a draft matters.
        """
        route = "/pages/{page_id}/children"
        params = includes_param(tuple(includes))
        body = await self._t.call("GET", route, kind=Kind.READ, params=params or None, page_id=page_id)
        return self._models(Page, body, method="GET", route=route)

    async def walk_page_tree(
        self, root_id: int = 1, *, max_depth: int | None = None, include_root: bool = True
    ) -> AsyncIterator[PageTreeNode]:
        """The page tree below ``root_id``, breadth first, each page once; children of one level are fetched
        concurrently (bounded by the client's concurrency)."""
        seen: set[int] = set()
        if include_root:
            root = await self.get_page(root_id)
            seen.add(root.id)
            yield PageTreeNode(root, None, 0)
        level: list[tuple[int, int]] = [(root_id, 0)]
        seen.add(root_id)
        while level:
            if max_depth is not None and level[0][1] >= max_depth:
                return
            results = await _all([self.page_children(page_id) for page_id, _ in level])
            following: list[tuple[int, int]] = []
            for (parent_id, depth), children in zip(level, results, strict=True):
                for child in children:
                    if child.id in seen:
                        continue
                    seen.add(child.id)
                    yield PageTreeNode(child, parent_id, depth + 1)
                    following.append((child.id, depth + 1))
            level = following

    async def get_page(
        self,
        page_id: int,
        *,
        includes: Sequence[str] = (),
        version: Literal["live", "recent"] = "live",
    ) -> Page:
        """A page in its live version, or the most recent (possibly unapproved) one with ``version="recent"``.
        ``includes``: ``areas``, ``custom_attributes``, ``files``, ``content``, ``areas.content``."""
        params = includes_param(tuple(includes))
        if version == "recent":
            params["version"] = "recent"
        return await self._get(Page, "/pages/{page_id}", params=params, page_id=page_id)

    async def create_page(
        self,
        *,
        parent_id: int,
        name: str,
        type: str = "page",
        template: str = "full",
        description: str | None = None,
        attributes: Mapping[str, Any] | None = None,
    ) -> Page:
        """Create an approved, live page under ``parent_id``. A real server ignores ``description`` here (set it
        with :meth:`update_page`). Never retried: an ambiguous failure raises ``OutcomeUnknown``."""
        body: dict[str, Any] = {"parent": parent_id, "name": name, "type": type, "template": template}
        if description is not None:
            body["description"] = description
        if attributes:
            body["attributes"] = dict(attributes)
        return await self._one(Page, "POST", "/pages", kind=Kind.CREATE, json=body)

    async def update_page(
        self,
        page_id: int,
        *,
        name: str | None = None,
        description: str | None = None,
        type: str | None = None,
        template: str | None = None,
        attributes: Mapping[str, Any] | None = None,
    ) -> Page:
        """Change a page; the change lands in the unapproved draft version (returned), not live."""
        body: dict[str, Any] = {}
        for key, value in (("name", name), ("description", description), ("type", type), ("template", template)):
            if value is not None:
                body[key] = value
        if attributes is not None:
            body["attributes"] = dict(attributes)
        return await self._one(Page, "PUT", "/pages/{page_id}", kind=Kind.UPDATE, json=body, page_id=page_id)

    async def delete_page(self, page_id: int) -> DeleteResult:
        """Move a page to the trash. The home page is silently kept by a real server (verify with a read)."""
        route = "/pages/{page_id}"
        body = await self._t.call("DELETE", route, kind=Kind.DELETE, page_id=page_id)
        return self._deleted(body, page_id, "pages", route)

    # -- blocks in areas ------------------------------------------------------------------------------------------

    async def add_block(self, page_id: int, area: str, *, type: str, value: Mapping[str, Any]) -> Block:
        """Append a block to an area (created if missing), in the draft version. Never retried."""
        route = "/pages/{page_id}/{area}"
        body = {"type": type, "value": dict(value)}
        answer = await self._t.call("POST", route, kind=Kind.CREATE, json=body, page_id=page_id, area=area)
        return self._model(Block, answer, method="POST", route=route)

    async def update_block(self, page_id: int, area: str, block_id: int, *, value: Mapping[str, Any]) -> Block:
        """Replace a block's value in the draft version; the answer's ``id`` may be new: use it from then on."""
        route = "/pages/{page_id}/{area}/{block_id}"
        answer = await self._t.call(
            "PUT", route, kind=Kind.UPDATE, json={"value": dict(value)}, page_id=page_id, area=area, block_id=block_id
        )
        data = answer.get("data", answer) if isinstance(answer, dict) else answer
        if isinstance(data, dict) and ("deleted" in data or "object" in data) and "type" not in data:
            # The documented dialect answers with a delete-result shape: read the block for the truth.
            result = self._model(DeleteResult, data, method="PUT", route=route)
            return await self.get_block(int(result.id))
        return self._model(Block, answer, method="PUT", route=route)

    async def delete_area_block(self, page_id: int, area: str, block_id: int) -> DeleteResult:
        """Remove a block from an area in the draft version (``version`` of the result names it)."""
        route = "/pages/{page_id}/{area}/{block_id}"
        body = await self._t.call("DELETE", route, kind=Kind.DELETE, page_id=page_id, area=area, block_id=block_id)
        return self._deleted(body, block_id, "blocks", route)

    # -- blocks by id ---------------------------------------------------------------------------------------------

    async def get_block(self, block_id: int, *, includes: Sequence[str] = ()) -> Block:
        """A block by id; ``includes=("pages",)`` adds the pages holding it."""
        return await self._get(Block, "/blocks/{block_id}", params=includes_param(tuple(includes)), block_id=block_id)

    async def delete_block(self, block_id: int) -> DeleteResult:
        """Delete a block everywhere, bypassing page versions."""
        route = "/blocks/{block_id}"
        body = await self._t.call("DELETE", route, kind=Kind.DELETE, block_id=block_id)
        return self._deleted(body, block_id, "blocks", route)

    # -- page versions --------------------------------------------------------------------------------------------

    def iter_page_versions(self, page_id: int) -> AsyncIterator[PageVersion]:
        """A page's versions, newest first (``limit=100`` + ``resultsPage``)."""
        return self._walk_results_pages(PageVersion, "/page_versions/{page_id}", page_id=page_id)

    async def list_page_versions(self, page_id: int) -> list[PageVersion]:
        return [version async for version in self.iter_page_versions(page_id)]

    async def get_page_version(self, page_id: int, version_id: int) -> PageVersion:
        return await self._get(
            PageVersion, "/page_versions/{page_id}/{version_id}", page_id=page_id, version_id=version_id
        )

    async def update_page_version(
        self,
        page_id: int,
        version_id: int,
        *,
        approved: bool | None = None,
        publish_end_date: dt.datetime | dt.date | str | None = _UNSET,
    ) -> PageVersion:
        """Approve (publish) or deny a version, and/or set its publish end date. Returns the version as it is now."""
        body: dict[str, Any] = {}
        if approved is not None:
            body["is_approved"] = approved
        if publish_end_date is not _UNSET:
            body["publish_end_date"] = _format_date(publish_end_date)
        route = "/page_versions/{page_id}/{version_id}"
        answer = await self._t.call("PUT", route, kind=Kind.UPDATE, json=body, page_id=page_id, version_id=version_id)
        version = self._model(PageVersion, answer, method="PUT", route=route)
        if approved is False:
            # A real server answers a deny with the version as it was before.
            return await self.get_page_version(page_id, version_id)
        return version

    async def approve_version(self, page_id: int, version_id: int) -> PageVersion:
        return await self.update_page_version(page_id, version_id, approved=True)

    async def deny_version(self, page_id: int, version_id: int) -> PageVersion:
        return await self.update_page_version(page_id, version_id, approved=False)

    async def delete_page_version(self, page_id: int, version_id: int) -> DeleteResult:
        """Delete a non-live version (the live one is refused: ``Conflict``)."""
        route = "/page_versions/{page_id}/{version_id}"
        body = await self._t.call("DELETE", route, kind=Kind.DELETE, page_id=page_id, version_id=version_id)
        return self._deleted(body, version_id, "page_versions", route)


async def _all(coroutines: list[Coroutine[Any, Any, T]]) -> list[T]:
    """Run concurrently; on the first failure cancel the rest and raise it (no orphaned requests)."""
    tasks = [asyncio.ensure_future(c) for c in coroutines]
    try:
        return list(await asyncio.gather(*tasks))
    except BaseException:
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)
        raise


def _format_date(value: dt.datetime | dt.date | str | None) -> str | None:
    """``Y-m-d H:i:s`` (the form a real server stores and accepts), in UTC for aware datetimes."""
    if value is None or isinstance(value, str):
        return value
    if isinstance(value, dt.datetime):
        if value.tzinfo is not None:
            value = value.astimezone(dt.UTC)
        return value.strftime("%Y-%m-%d %H:%M:%S")
    return value.strftime("%Y-%m-%d 00:00:00")
