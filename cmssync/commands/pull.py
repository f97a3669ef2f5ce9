"""``cmssync pull``: run the pull (``cmssync.sync.pull``) and print what it did."""

from __future__ import annotations

import io
from collections.abc import Mapping
from pathlib import Path
from typing import Any, TextIO, TypedDict, Unpack

from cmssync.commands.progress import reading_site
from cmssync.render.pull import render_pull, render_pull_commit
from cmssync.sync.pull import pull_site
from cmssync.sync.pull_commit import pull_commit
from cmssync.sync.pull_writes import Pulled


class PullOptions(TypedDict, total=False):
    """What to pull and how: the keyword arguments of :func:`cmssync.sync.pull.pull_site`."""

    pages: tuple[str, ...]
    overrides: Mapping[str, Any] | None
    lock_timeout: float | None
    force: bool
    dry_run: bool
    take_all: bool
    kinds: tuple[str, ...]


class CommitOptions(TypedDict, total=False):
    """Where ``pull --commit`` commits: the keyword arguments of :func:`cmssync.sync.pull_commit.pull_commit`."""

    branch: str
    push: str | None
    message: str | None


async def run_pull(
    directory: Path,
    *,
    out: TextIO,
    notes: TextIO | None = None,
    progress: bool = False,
    progress_color: bool = True,
    commit: CommitOptions | None = None,
    **options: Unpack[PullOptions],
) -> int:
    """Pull, print the summary (and with ``dry_run`` the diffs); 1 when a local edit was kept. With ``commit``
    (``pull --commit``): pull into a commit on a branch and print the commit too; 1 also when the push was refused.
    ``notes`` (stderr) gets ``reading site: N/M pages`` while the pages are found and read (``progress``)."""
    notes = notes if notes is not None else io.StringIO()
    with reading_site(notes, terminal=notes.isatty(), enabled=progress, color=progress_color):
        pulling = pull_site(directory, **options) if commit is None else pull_commit(directory, **commit, **options)
        result = await pulling
    out.write(render_pull(result) if isinstance(result, Pulled) else render_pull_commit(result))
    return result.exit_code
