"""Observing the file kind: the site's files the content or the state names, keyed by id (lower case).

The file list (``limit=100``, with custom attributes) when the content has files the state does not know or no
scope limits the run; the files the state knows that the walk did not return are read by id
(``cmssync.sync.observe_known``). Which site files a content file could adopt is decided by their bytes
(``cmssync.sync.file_adoption``, after this).
"""

from __future__ import annotations

from collections import Counter
from pathlib import PurePosixPath

from cmssync.api.client import ConcreteClient
from cmssync.api.models import File
from cmssync.plan.normalize import normalize_tags
from cmssync.plan.snapshot import LiveFile
from cmssync.state.records import State
from cmssync.sync.observe_known import read_known, unreliable_list_warning


async def observe_files(
    client: ConcreteClient,
    state: State,
    *,
    list_all: bool,
    warnings: list[str],
    unreadable: dict[str, str],
    ties: Counter[str],
) -> dict[str, LiveFile]:
    files: dict[str, File] = {}
    if list_all:
        files = {f.id.lower(): f for f in [f async for f in client.iter_files(includes=("custom_attributes",))]}
        warning = unreliable_list_warning("files", [f.date_added for f in files.values()])
        if warning is not None:
            warnings.append(warning)
    unseen = {path: str(r.id) for path, r in state.files.items() if str(r.id).lower() not in files}
    if list_all:
        ties["files"] += len(unseen)
    reads = (
        (client.get_file(file_id, includes=("custom_attributes",)), f"file:{path}", f"file {path} ({file_id})")
        for path, file_id in unseen.items()
    )
    files.update({extra.id.lower(): extra for extra in await read_known(reads, unreadable)})
    return {file_id: to_live_file(f) for file_id, f in files.items()}


def to_live_file(file: File) -> LiveFile:
    url = file.url or ""
    return LiveFile(
        id=file.id.lower(),
        name=PurePosixPath(url.split("?")[0]).name,
        url=url,
        title=file.title or "",
        description=file.description or "",
        tags=tuple(normalize_tags(file.tags)),
        folder=file.folder,
        size=file.size.exact if file.size else None,
        attributes={a.handle: a.value for a in file.custom_attributes if a.handle},
    )
