"""Reading one YAML file of the content: the content's limits on :mod:`cmssync.yamlread`, and a parse cache.

The rules (size, UTF-8, syntax, duplicate keys, no anchors, aliases or tags, depth, positions) are those of the one
reader that ``cmssync.yaml`` is read with as well (:mod:`cmssync.yamlread`); this module adds the content's size
limit (:data:`MAX_YAML_BYTES`) and :class:`ParseCache`. Every file is parsed with a parser state of its own, so one
bad file cannot change how the next one is read.

**The persistent parse cache.** ruamel's round-trip parser is pure Python: about 3 ms for a page file, 83% of
loading a 1,000-page site (bench/RESULTS.md). Each command parses the same unchanged files again, so a
``ParseCache(directory=...)`` keeps the parsed trees (with their positions: ``file:line:col`` in every later message
stays exact) in one file, ``parse-cache.pickle`` in the state directory beside the file-hash cache, keyed by the
SHA-256 of each file's text. The whole cache is one file read once (about 0.1 ms per tree to unpickle, against 3 ms
to parse); :meth:`ParseCache.save` rewrites it with exactly the trees used by the load that just ended, so it never
grows beyond the content. Only documents that parsed cleanly are kept: a refused file is parsed (and refused) again.

The key also holds :data:`CACHE_VERSION`: cmssync's version, ruamel's, and a digest of the reader's own source
(:mod:`cmssync.yamlread`), so a changed rule never serves a tree the new rules would refuse. The cache is pickled,
which means code: it is read only when the file belongs to the current user and no one else can write it (the same
trust as the state and token files beside it, or Python's own ``__pycache__``); anything else — another owner, a
truncated or foreign file — is ignored and rebuilt.
"""

from __future__ import annotations

import contextlib
import hashlib
import logging
import os
import pickle
from pathlib import Path
from typing import Any, Final

import ruamel.yaml

import cmssync
from cmssync import yamlread
from cmssync.errors import Problem
from cmssync.fileio import write_atomically
from cmssync.yamlread import (
    MAX_DEPTH,
    YamlDocument,
    key_position,
    parse_yaml,
    position_of,
    read_yaml_text,
    start_of,
    value_position,
)

__all__ = [
    "MAX_DEPTH",
    "MAX_YAML_BYTES",
    "ParseCache",
    "YamlDocument",
    "find_in_text",
    "key_position",
    "parse_yaml",
    "position_of",
    "read_yaml",
    "start_of",
    "value_position",
]

MAX_YAML_BYTES = 5 * 1024 * 1024
LIMIT_TEXT = "a content YAML file may have at most 5 MiB"
CACHE_FILE = "parse-cache.pickle"


def _cache_version() -> str:
    reader = hashlib.sha256()
    for module in (yamlread.__file__, __file__):
        with contextlib.suppress(OSError, TypeError):
            reader.update(Path(module).read_bytes())
    return f"cmssync {cmssync.__version__}; ruamel.yaml {ruamel.yaml.__version__}; reader {reader.hexdigest()[:16]}"


CACHE_VERSION: Final = _cache_version()

log = logging.getLogger(__name__)


class ParseCache:
    """Parsed documents reused while a file's text is unchanged: in memory by name (the daemon keeps one between
    runs), and on disk by content hash when made with a ``directory`` (see the module docstring)."""

    def __init__(self, directory: Path | None = None) -> None:
        self._documents: dict[str, YamlDocument] = {}
        self._path = directory / CACHE_FILE if directory is not None else None
        self._stored: dict[str, Any] | None = None
        """Trees read from the cache file, by key (loaded on first use)."""
        self._used: dict[str, Any] = {}
        """Trees of this load by key: what :meth:`save` writes."""
        self._changed = False
        self.hits = 0
        self.misses = 0

    def parse(self, text: str, name: str) -> YamlDocument | Problem:
        text = text.removeprefix("\ufeff")
        cached = self._documents.get(name)
        if cached is not None and cached.text == text:
            if self._path is not None:
                self._used[_key(text)] = cached.data
            return cached
        if self._path is not None:
            key = _key(text)
            stored = self._read().get(key, _MISSING)
            if stored is not _MISSING:
                self.hits += 1
                self._used[key] = stored
                document = YamlDocument(name, stored, text)
                self._documents[name] = document
                return document
        self.misses += 1
        result = parse_yaml(text, name)
        if isinstance(result, YamlDocument):
            self._documents[name] = result
            if self._path is not None:
                self._used[_key(text)] = result.data
                self._changed = True
        else:
            self._documents.pop(name, None)
        return result

    def save(self) -> None:
        """Write the trees of this load (only those) when anything changed; a failure only costs speed next time."""
        if self._path is None:
            return
        stored = self._read()
        if not self._changed and stored.keys() == self._used.keys():
            self._used = {}
            return
        payload = pickle.dumps((CACHE_VERSION, self._used), protocol=pickle.HIGHEST_PROTOCOL)
        try:
            write_atomically(self._path, payload, mode=0o600, durable=False)
        except OSError as exc:
            log.debug("parse cache %s not written: %s", self._path, exc)
        self._stored, self._used, self._changed = self._used, {}, False

    def _read(self) -> dict[str, Any]:
        if self._stored is None:
            self._stored = _load_cache(self._path) if self._path is not None else {}
        return self._stored


_MISSING: Any = object()


def _key(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()


def _load_cache(path: Path) -> dict[str, Any]:
    """The stored trees, or nothing when the file is missing, not ours, writable by others, or not a cache of this
    version."""
    try:
        with path.open("rb") as handle:
            status = os.fstat(handle.fileno())
            if status.st_uid != os.getuid() or status.st_mode & 0o022:
                log.warning("ignoring the parse cache %s: it is not private to this user", path)
                return {}
            data = handle.read()
    except OSError:
        return {}
    try:
        version, trees = pickle.loads(data)  # our own file, checked above (see the module docstring)
    except Exception:  # a truncated or foreign file is only a cache miss
        return {}
    if version != CACHE_VERSION or not isinstance(trees, dict):
        return {}
    return trees


def read_yaml(path: Path, name: str, *, cache: ParseCache | None = None) -> YamlDocument | Problem:
    """Parse the content file ``path`` (shown as ``name``); a ``Problem`` instead of a document when it cannot be
    used."""
    text = read_yaml_text(path, name, max_bytes=MAX_YAML_BYTES, limit_text=LIMIT_TEXT)
    if isinstance(text, Problem):
        return text
    return cache.parse(text, name) if cache is not None else parse_yaml(text, name)


def find_in_text(lines: list[str], needle: str, start: tuple[int, int], limit: int = 10_000) -> tuple[int, int] | None:
    """1-based position of the first ``needle`` at or after ``start`` (1-based), within ``limit`` lines."""
    line, column = start
    for index in range(line - 1, min(len(lines), line - 1 + limit)):
        found = lines[index].find(needle, column - 1 if index == line - 1 else 0)
        if found >= 0:
            return index + 1, found + 1
    return None
