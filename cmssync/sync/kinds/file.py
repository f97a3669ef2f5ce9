"""The file kind: ``files/`` ↔ the site's files (planned by ``cmssync.plan.files``, observed by
``cmssync.sync.observe_files``, applied by ``cmssync.sync.apply_assets.apply_file``, pulled by
``cmssync.sync.pull_assets``)."""

from __future__ import annotations

import datetime as dt
from typing import Any

from cmssync.api.client import ConcreteClient
from cmssync.plan.builtin_kinds import FILE
from cmssync.plan.preconditions import stale_file
from cmssync.sync.apply_assets import apply_file
from cmssync.sync.kinds import ManagedKind
from cmssync.sync.pull_assets import pull_files
from cmssync.sync.pulling import PullRun


async def _latest_files(client: ConcreteClient, limit: int, after: Any) -> list[tuple[str, dt.datetime | None]]:
    return [(file.id.lower(), file.date_added) for file in await client.latest_files(limit=limit, after=after)]


async def _pull(run: PullRun) -> None:
    if run.only:
        return
    await run.turn(FILE.name)
    await pull_files(run.client, run.root, run.settings, run.state, run.result, run.scope)


KIND = ManagedKind(FILE, apply_file, stale=stale_file, pull=_pull, latest=_latest_files, latest_every=3)
