"""Atomic file writes: a reader (or a crash) sees the old file or the new one, never half of either.

Used for everything cmssync writes that must survive a kill at any instant: the state, the rotated refresh token,
plan files, pulled content, the file-hash cache. The data goes to a temporary file in the same directory (so the
rename stays on one filesystem), is flushed and fsynced, then renamed over the target with ``os.replace``; the
directory is fsynced so the rename itself is durable.

Permissions. Secrets (the token store, the state) pass ``mode=0o600``, set on the temporary file before any byte is
written. Everything else — pulled content, plan files, caches — gets what an editor would give it: an existing
target keeps its permission bits, a new one gets ``0o666`` less the process umask. The temporary file is created
with ``os.open(…, 0o666)`` so the kernel applies the umask itself (reading the umask means setting it, which is not
thread-safe); ``tempfile.mkstemp`` would make every file 0600, unreadable to a container's other users.
"""

from __future__ import annotations

import contextlib
import errno
import os
import secrets
import shutil
import stat
from collections.abc import Callable
from pathlib import Path
from typing import BinaryIO

TEMP_SUFFIX = ".saving"
"""Suffix of the temporary files, so that leftovers of a killed writer can be recognised and removed."""

NEW_FILE_MODE = 0o666
"""Requested for a new file; the umask takes its bits away (0o644 under the usual umask 022)."""


def write_atomically(path: Path, data: bytes | str, *, mode: int | None = None, durable: bool = True) -> None:
    """Replace ``path`` with ``data``.

    ``mode`` (e.g. ``0o600`` for a secret) is set before any byte is written; without it an existing ``path`` keeps
    its permission bits and a new one gets ``0o666`` less the umask, as an editor would do.
    """
    payload = data.encode("utf-8") if isinstance(data, str) else data
    _replace(path, lambda handle: handle.write(payload), mode=mode, durable=durable)


def write_streamed(path: Path, fill: Callable[[BinaryIO], object], *, durable: bool = True) -> None:
    """Replace ``path`` with what ``fill`` writes to the handle it is given (a large file without holding it in
    memory), with the permissions :func:`write_atomically` gives; nothing is replaced if ``fill`` raises."""
    _replace(path, fill, mode=None, durable=durable)


def copy_atomically(source: Path, path: Path, *, durable: bool = True) -> None:
    """Replace ``path`` with a copy of ``source`` (streamed), with the permissions :func:`write_atomically` gives."""
    with source.open("rb") as reader:
        _replace(path, lambda handle: shutil.copyfileobj(reader, handle, 1 << 20), mode=None, durable=durable)


def move_atomically(source: Path, path: Path, *, durable: bool = True) -> None:
    """Replace ``path`` with ``source`` by a rename (no byte is copied; ``source`` is gone), with the permissions
    :func:`write_atomically` gives; by a copy when they are on different file systems (``source`` then stays)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    try:
        mode = stat.S_IMODE(os.stat(path).st_mode)
    except FileNotFoundError:
        fd, temp = _create_temp(path)  # the mode the umask gives a new file, without reading the umask
        mode = stat.S_IMODE(os.fstat(fd).st_mode)
        os.close(fd)
        os.unlink(temp)
    os.chmod(source, mode)
    try:
        os.replace(source, path)
    except OSError as exc:
        if exc.errno != errno.EXDEV:
            raise
        copy_atomically(source, path, durable=durable)
        return
    if durable:
        fsync_directory(path.parent)


def _replace(path: Path, fill: Callable[[BinaryIO], object], *, mode: int | None, durable: bool) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, temp = _create_temp(path)
    try:
        if mode is not None:
            os.fchmod(fd, mode)
        else:
            with contextlib.suppress(FileNotFoundError):
                os.fchmod(fd, stat.S_IMODE(os.stat(path).st_mode))
        with os.fdopen(fd, "wb") as handle:
            fill(handle)
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


def _create_temp(path: Path) -> tuple[int, str]:
    """A new, exclusive temporary file beside ``path`` with the umask's mode (``O_EXCL``: never someone else's)."""
    flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_CLOEXEC", 0)
    for _attempt in range(100):
        temp = str(path.parent / f".{path.name}.{secrets.token_hex(4)}{TEMP_SUFFIX}")
        try:
            return os.open(temp, flags, NEW_FILE_MODE), temp
        except FileExistsError:
            continue
    raise FileExistsError(f"{path.parent}: no free temporary name for {path.name}")


def fsync_directory(directory: Path) -> None:
    """Make a rename in ``directory`` durable (POSIX)."""
    fd = os.open(directory, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)
