"""The file kind: ``files/`` ↔ the site's files (planned by ``cmssync.plan.files``, observed by
``cmssync.sync.observe_files``, applied by ``cmssync.sync.apply_assets.apply_file``, pulled by
``cmssync.sync.pull_assets``)."""

from __future__ import annotations

import datetime as dt
from collections.abc import Mapping
from typing import Any

from cmssync.api.client import ConcreteClient
from cmssync.plan.builtin_kinds import FILE
from cmssync.plan.preconditions import stale_file
from cmssync.sync.apply_assets import apply_file
from cmssync.sync.file_adoption import hash_adoption_candidates
from cmssync.sync.kinds import ManagedKind, ObserveRun
from cmssync.sync.observe_files import observe_files
from cmssync.sync.pull_assets import pull_files
from cmssync.sync.pulling import PullRun


async def _latest_files(client: ConcreteClient, limit: int, after: Any) -> list[tuple[str, dt.datetime | None]]:
    return [(file.id.lower(), file.date_added) for file in await client.latest_files(limit=limit, after=after)]


async def _read(run: ObserveRun) -> Mapping[str, Any]:
    """The files the state manages (by id), and the whole list when a content file the state does not know may adopt
    a site file (its same-name-and-size candidates downloaded and hashed: only the same bytes prove it is ours)."""
    content, state, scope = run.content, run.state, run.scope
    wanted = bool(content.files or state.files) and (scope is None or bool(set(content.files) - set(state.files)))
    files = await observe_files(
        run.client, state, list_all=wanted, warnings=run.warnings, unreadable=run.unreadable, ties=run.ties
    )
    return {"files": await hash_adoption_candidates(run.client, content, state, files, run.warnings)}


async def _pull(run: PullRun) -> None:
    if run.only:
        return
    await run.turn(FILE.name)
    await pull_files(run.client, run.root, run.settings, run.state, run.result, run.scope)


KIND = ManagedKind(FILE, apply_file, stale=stale_file, read=_read, pull=_pull, latest=_latest_files, latest_every=3)
