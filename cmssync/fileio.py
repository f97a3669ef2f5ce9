"""Atomic file writes: a reader (or a crash) sees the old file or the new one, never half of either.

Used for everything cmssync writes that must survive a kill at any instant: the state, the rotated refresh token,
plan files, pulled content, the file-hash cache. The data goes to a temporary file in the same directory (so the
rename stays on one filesystem), is flushed and fsynced, then renamed over the target with ``os.replace``; the
directory is fsynced so the rename itself is durable.
"""

from __future__ import annotations

import contextlib
import os
import tempfile
from pathlib import Path

TEMP_SUFFIX = ".saving"
"""Suffix of the temporary files, so that leftovers of a killed writer can be recognised and removed."""


def write_atomically(path: Path, data: bytes | str, *, mode: int | None = None, durable: bool = True) -> None:
    """Replace ``path`` with ``data``; ``mode`` (e.g. ``0o600``) is set before any byte is written."""
    path.parent.mkdir(parents=True, exist_ok=True)
    payload = data.encode("utf-8") if isinstance(data, str) else data
    fd, temp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=TEMP_SUFFIX)
    try:
        if mode is not None:
            os.fchmod(fd, mode)
        with os.fdopen(fd, "wb") as handle:
            handle.write(payload)
            handle.flush()
            if durable:
                os.fsync(handle.fileno())
        os.replace(temp, path)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(temp)
        raise
    if durable:
        fsync_directory(path.parent)


def fsync_directory(directory: Path) -> None:
    """Make a rename in ``directory`` durable (POSIX)."""
    fd = os.open(directory, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)
