"""The page kind: ``pages/`` ↔ the site's page tree (planned by ``cmssync.plan.pages``, observed by
``cmssync.sync.observe_pages``, applied by ``cmssync.sync.apply_pages``, pulled by ``cmssync.sync.pull_pages``)."""

from __future__ import annotations

import datetime as dt
from collections.abc import Mapping
from typing import Any

from cmssync.api.client import ConcreteClient
from cmssync.plan.builtin_kinds import PAGE
from cmssync.plan.preconditions import stale_page
from cmssync.sync.apply_pages import apply_page
from cmssync.sync.kinds import ManagedKind, ObserveRun
from cmssync.sync.observe_pages import observe_pages
from cmssync.sync.pull_pages import pull_pages


async def _latest_pages(client: ConcreteClient, limit: int, after: Any) -> list[tuple[str, dt.datetime | None]]:
    return [(str(page.id), page.date_last_updated) for page in await client.latest_pages(limit=limit, after=after)]


async def _read(run: ObserveRun) -> Mapping[str, Any]:
    """The page tree a level at a time (``cmssync.sync.observe_pages``)."""
    scoped = run.scope is not None
    pages = await observe_pages(
        run.client, run.content, run.state, run.roots, run.base_url, run.pages_read, scoped=scoped
    )
    run.unreadable.update(pages.unreadable)
    return {"pages": pages.by_path, "pages_by_id": pages.by_id}


KIND = ManagedKind(PAGE, apply_page, stale=stale_page, read=_read, pull=pull_pages, latest=_latest_pages)
