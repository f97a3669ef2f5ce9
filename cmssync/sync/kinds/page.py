"""The page kind: ``pages/`` ↔ the site's page tree (planned by ``cmssync.plan.pages``, observed by
``cmssync.sync.observe_pages``, applied by ``cmssync.sync.apply_pages``, pulled by ``cmssync.sync.pull_pages``)."""

from __future__ import annotations

import datetime as dt
from typing import Any

from cmssync.api.client import ConcreteClient
from cmssync.plan.builtin_kinds import PAGE
from cmssync.plan.preconditions import stale_page
from cmssync.sync.apply_pages import apply_page
from cmssync.sync.kinds import ManagedKind
from cmssync.sync.pull_pages import pull_pages


async def _latest_pages(client: ConcreteClient, limit: int, after: Any) -> list[tuple[str, dt.datetime | None]]:
    return [(str(page.id), page.date_last_updated) for page in await client.latest_pages(limit=limit, after=after)]


KIND = ManagedKind(PAGE, apply_page, stale=stale_page, pull=pull_pages, latest=_latest_pages)
