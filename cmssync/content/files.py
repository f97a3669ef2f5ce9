"""Assets under ``files/``: size, SHA-256 and sidecar metadata, with a cache so unchanged files are not re-hashed.

The cache follows black's: an entry per file keyed by its absolute path, valid while ``(size, mtime_ns)`` are
unchanged, written atomically (temp file + ``os.replace``) and only when something changed. Its location is the
caller's choice (the content directory may be mounted read-only); without one, every file is hashed. A cache that
cannot be read is ignored, and one that cannot be written costs only speed, never correctness.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
from dataclasses import dataclass
from pathlib import Path

from cmssync.content.models import FileSidecar, Location
from cmssync.fileio import write_atomically

CACHE_VERSION = 1


@dataclass(frozen=True)
class FileSpec:
    """A managed file: ``files/<path>``, its content hash and metadata (folder already resolved to an id)."""

    path: str
    """Path relative to ``files/``, POSIX separators; the file's identity (``${file:PATH}``)."""
    size: int
    sha256: str
    meta: FileSidecar
    folder_id: int | None
    """The file-manager folder id (``folder:`` of the sidecar, names resolved through ``folders:``)."""
    source: Location
    """The asset itself (``files/<path>``)."""
    sidecar: Location | None = None

    def canonical(self) -> dict[str, object]:
        return {
            "size": self.size,
            "sha256": self.sha256,
            "meta": self.meta.model_dump(mode="json"),
            "folder_id": self.folder_id,
        }


class HashCache:
    """``absolute path → (size, mtime_ns, sha256)``; see the module docstring."""

    def __init__(self, location: Path | None) -> None:
        self.location = location
        self.entries: dict[str, tuple[int, int, str]] = {}
        self.changed = False
        if location is not None:
            self.entries = _read_cache(location)

    def sha256(self, path: Path) -> tuple[int, str]:
        """``(size, hex digest)`` of ``path``, from the cache when size and mtime are unchanged."""
        stat = path.stat()
        key = str(path)
        cached = self.entries.get(key)
        if cached is not None and cached[0] == stat.st_size and cached[1] == stat.st_mtime_ns:
            return stat.st_size, cached[2]
        with path.open("rb") as stream:
            digest = hashlib.file_digest(stream, "sha256").hexdigest()
        self.entries[key] = (stat.st_size, stat.st_mtime_ns, digest)
        self.changed = True
        return stat.st_size, digest

    def save(self) -> None:
        if self.location is None or not self.changed:
            return
        payload = {"version": CACHE_VERSION, "files": {k: list(v) for k, v in sorted(self.entries.items())}}
        with contextlib.suppress(OSError):  # a cache that cannot be written costs speed, never correctness
            write_atomically(self.location, json.dumps(payload), durable=False)
        self.changed = False


def _read_cache(location: Path) -> dict[str, tuple[int, int, str]]:
    try:
        payload = json.loads(location.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    if not isinstance(payload, dict) or payload.get("version") != CACHE_VERSION:
        return {}
    entries: dict[str, tuple[int, int, str]] = {}
    files = payload.get("files")
    if not isinstance(files, dict):
        return {}
    for key, value in files.items():
        if (
            isinstance(value, list)
            and len(value) == 3
            and isinstance(value[0], int)
            and isinstance(value[1], int)
            and isinstance(value[2], str)
        ):
            entries[key] = (value[0], value[1], value[2])
    return entries
