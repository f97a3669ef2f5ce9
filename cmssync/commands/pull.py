"""``cmssync pull``: run the pull (``cmssync.sync.pull``) and print what it did."""

from __future__ import annotations

import io
from collections.abc import Mapping
from pathlib import Path
from typing import Any, TextIO

from cmssync.commands.progress import reading_site
from cmssync.render.pull import render_pull
from cmssync.sync.pull import pull_site


async def run_pull(
    directory: Path,
    *,
    out: TextIO,
    pages: tuple[str, ...] = (),
    overrides: Mapping[str, Any] | None = None,
    lock_timeout: float | None = None,
    force: bool = False,
    dry_run: bool = False,
    take_all: bool = False,
    kinds: tuple[str, ...] = (),
    notes: TextIO | None = None,
    progress: bool = False,
) -> int:
    """Pull, print the summary (and with ``dry_run`` the diffs); 1 when a local edit was kept. ``notes`` (stderr)
    gets ``reading site: N/M pages`` while the pages are found and read (``progress``)."""
    notes = notes if notes is not None else io.StringIO()
    with reading_site(notes, terminal=notes.isatty(), enabled=progress):
        pulled = await pull_site(
            directory,
            pages=pages,
            overrides=overrides,
            lock_timeout=lock_timeout,
            force=force,
            dry_run=dry_run,
            take_all=take_all,
            kinds=kinds,
        )
    out.write(render_pull(pulled))
    return pulled.exit_code
