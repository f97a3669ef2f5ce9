"""``cmssync pull``: run the pull (``cmssync.sync.pull``) and print what it did."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any, TextIO

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
) -> int:
    """Pull, print the summary (and with ``dry_run`` the diffs); 1 when a local edit was kept."""
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
