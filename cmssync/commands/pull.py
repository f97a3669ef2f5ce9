"""``cmssync pull``: run the pull (``cmssync.sync.pull``) and print what it did."""

from __future__ import annotations

import io
from collections.abc import Mapping
from pathlib import Path
from typing import Any, TextIO, TypedDict, Unpack

from cmssync.commands.progress import reading_site
from cmssync.render.pull import render_pull
from cmssync.sync.pull import pull_site


class PullOptions(TypedDict, total=False):
    """What to pull and how: the keyword arguments of :func:`cmssync.sync.pull.pull_site`."""

    pages: tuple[str, ...]
    overrides: Mapping[str, Any] | None
    lock_timeout: float | None
    force: bool
    dry_run: bool
    take_all: bool
    kinds: tuple[str, ...]


async def run_pull(
    directory: Path,
    *,
    out: TextIO,
    notes: TextIO | None = None,
    progress: bool = False,
    **options: Unpack[PullOptions],
) -> int:
    """Pull, print the summary (and with ``dry_run`` the diffs); 1 when a local edit was kept. ``notes`` (stderr)
    gets ``reading site: N/M pages`` while the pages are found and read (``progress``)."""
    notes = notes if notes is not None else io.StringIO()
    with reading_site(notes, terminal=notes.isatty(), enabled=progress):
        pulled = await pull_site(directory, **options)
    out.write(render_pull(pulled))
    return pulled.exit_code
