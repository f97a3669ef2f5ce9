"""Reading one YAML file of the content (:class:`Source`), and the parse cache that spares reading it again.

The rules (size, UTF-8, syntax, duplicate keys, no anchors, aliases or tags, depth, positions) are those of the one
reader that ``cmssync.yaml`` is read with as well (:mod:`cmssync.yamlread`); this module adds the content's size
limit (:data:`MAX_YAML_BYTES`). Every file is parsed with a parser state of its own, so one bad file cannot change
how the next one is read.

**Positions only when asked.** A :class:`Source` holds a file's name and text; its located tree (and its lines, to
point into multi-line strings) is built on first use. A file served from the cache is never parsed unless a problem
found across files (a missing reference target, a pinned id used twice) needs a position in it.

**The parse cache.** What the loader derives from one file's text alone — its validated specs, their positions,
the references they hold (:mod:`~cmssync.content.specfile`) — is kept by :class:`ParseCache`, keyed by the SHA-256
of the file's kind and text, so an unchanged file costs one hash and one unpickling instead of a parse and a
validation. Only results without problems are kept: a refused file is read (and refused) again, with the same
message. The daemon keeps one ``ParseCache()`` in memory between runs; ``ParseCache(directory=..., key=...)`` also
keeps it on disk, ``parse-cache.pickle`` in the per-user cache directory of the content
(:func:`cmssync.usercache.derived_cache_dir`), rewritten by :meth:`save` with exactly the entries the load that just
ended used, so it never grows beyond the content.

The cache file also holds :func:`cache_version`: cmssync's, pydantic's and ruamel's versions and a digest of the
sources that shape a result (:mod:`cmssync.yamlread`, :mod:`cmssync.content`, :mod:`cmssync.config`,
:mod:`cmssync.memory`: how a spec is pickled), so a changed rule or model never serves a result the new code would
not give.

**Never code from a repository.** The cache is pickled, which means code. So it never lives where a repository can
put files (the content directory, the state's directory), and the file is signed with this user's cache key
(:func:`cmssync.usercache.cache_key`, HMAC-SHA256): it is unpickled only when the signature verifies, which no file
made without the key does — whoever owns it and whatever its mode. Anything else (unsigned, another key, truncated,
another version) is ignored and rebuilt.
"""

from __future__ import annotations

import functools
import hashlib
import logging
import pickle
from functools import cached_property
from pathlib import Path
from typing import Any, Final

import pydantic_core
import ruamel.yaml

import cmssync
from cmssync.errors import Problem
from cmssync.fileio import write_atomically
from cmssync.usercache import sign, verified
from cmssync.yamlread import YamlDocument, fast, parse_located, position_of, read_yaml_text

MAX_YAML_BYTES = 5 * 1024 * 1024
LIMIT_TEXT = "a content YAML file may have at most 5 MiB"
CACHE_FILE = "parse-cache.pickle"
_SHAPING_SOURCES: Final = ("yamlread", "content", "config", "errors.py", "memory.py")
"""What a cached result depends on, under the ``cmssync`` package (see the module docstring)."""

log = logging.getLogger(__name__)


def read_text(path: Path, name: str) -> str | Problem:
    """The UTF-8 text of the content file ``path`` (shown as ``name``), or why it cannot be read."""
    return read_yaml_text(path, name, max_bytes=MAX_YAML_BYTES, limit_text=LIMIT_TEXT)


class Source:
    """One YAML file of the content: its name and text; its located tree and lines are made when first asked for."""

    def __init__(self, name: str, text: str) -> None:
        self.name = name
        self.text = text.removeprefix("\ufeff")

    @cached_property
    def parsed(self) -> YamlDocument | Problem:
        return parse_located(self.text, self.name)

    @property
    def tree(self) -> Any:
        """The located tree (``None`` for an empty or refused file)."""
        return self.parsed.data if isinstance(self.parsed, YamlDocument) else None

    @cached_property
    def lines(self) -> list[str]:
        return self.text.splitlines()

    def forget_tree(self) -> None:
        """Drop the located tree and the lines until something asks for them again (they are built anew): a file
        read without a problem needs them only if a problem found across files must be placed in it, and the
        trees of every file, held to the end of a load, were most of its peak."""
        self.__dict__.pop("parsed", None)
        self.__dict__.pop("lines", None)

    def position(self, loc: tuple[str | int, ...], *, at_key: bool = False) -> tuple[int, int]:
        """1-based position of ``loc`` (see :func:`~cmssync.yamlread.position_of`)."""
        return position_of(self.tree, loc, at_key=at_key)

    def find(self, needle: str, start: tuple[int, int]) -> tuple[int, int] | None:
        """1-based position of the first ``needle`` at or after ``start`` (also inside multi-line strings)."""
        return find_in_text(self.lines, needle, start)


class ParseCache:
    """What each file's text gave, kept while the text is unchanged (see the module docstring)."""

    def __init__(self, directory: Path | None = None, *, key: bytes | None = None) -> None:
        """In memory only, unless both ``directory`` and the signing ``key`` are given."""
        self._path = directory / CACHE_FILE if directory is not None and key else None
        self._key = key or b""
        self._stored: dict[str, bytes] | None = None
        """Results from earlier loads, pickled, by key (the cache file is read on first use)."""
        self._used: dict[str, bytes] = {}
        """Results of this load by key: what :meth:`save` keeps."""
        self._changed = False
        self.hits = 0
        self.misses = 0

    def get(self, kind: str, text: str) -> Any:
        """The result kept for a file of ``kind`` with ``text`` (a fresh copy), or ``None``."""
        key = _key(kind, text)
        stored = self._used.get(key) or self._read().get(key)
        if stored is not None:
            try:
                result = pickle.loads(stored)  # our own entries (see the module docstring)
            except Exception:  # an entry of another version that slipped through: only a miss
                result = None
            if result is not None:
                self.hits += 1
                self._used[key] = stored
                return result
        self.misses += 1
        return None

    def put(self, kind: str, text: str, result: Any) -> None:
        """Keep ``result`` (anything picklable, copied now) for a file of ``kind`` with ``text``."""
        try:
            self._used[_key(kind, text)] = pickle.dumps(result, protocol=pickle.HIGHEST_PROTOCOL)
        except (pickle.PicklingError, TypeError, AttributeError) as exc:
            log.debug("a %s result is not kept in the parse cache: %s", kind, exc)
            return
        self._changed = True

    def save(self) -> None:
        """Keep the results of this load (only those); on disk when the cache has a directory, where a failure only
        costs speed next time."""
        stored = self._read()
        if self._changed or stored.keys() != self._used.keys():
            if self._path is not None:
                payload = pickle.dumps((cache_version(), self._used), protocol=pickle.HIGHEST_PROTOCOL)
                try:
                    write_atomically(self._path, sign(self._key, payload), mode=0o600, durable=False)
                except OSError as exc:
                    log.debug("parse cache %s not written: %s", self._path, exc)
            self._stored = self._used
        self._used, self._changed = {}, False

    def stored_keys(self) -> set[str]:
        """The keys of the results kept by the last save or found in the cache file."""
        return set(self._read())

    def _read(self) -> dict[str, bytes]:
        if self._stored is None:
            self._stored = _load_cache(self._path, self._key) if self._path is not None else {}
        return self._stored


def _key(kind: str, text: str) -> str:
    return hashlib.sha256(f"{kind}\0{text}".encode("utf-8", "surrogatepass")).hexdigest()


@functools.cache
def cache_version() -> str:
    """What a cached result depends on besides the file's text (see the module docstring)."""
    package = Path(cmssync.__file__).parent
    digest = hashlib.sha256()
    for place in _SHAPING_SOURCES:
        files = sorted((package / place).rglob("*.py")) if (package / place).is_dir() else [package / place]
        for file in files:
            try:
                digest.update(file.relative_to(package).as_posix().encode() + b"\0" + file.read_bytes())
            except OSError:
                digest.update(b"unreadable")
    return (
        f"cmssync {cmssync.__version__}; pydantic-core {pydantic_core.__version__}; "
        f"ruamel.yaml {ruamel.yaml.__version__}; C parser {fast.AVAILABLE}; sources {digest.hexdigest()[:16]}"
    )


def _load_cache(path: Path, key: bytes) -> dict[str, bytes]:
    """The stored results, or nothing when the file is missing, not signed with ``key``, or not of this version."""
    try:
        with path.open("rb") as handle:
            data = handle.read()
    except OSError:
        return {}
    payload = verified(key, data)
    if payload is None:
        if data:
            log.warning("ignoring the parse cache %s: it was not written by cmssync for this user", path)
        return {}
    try:
        version, entries = pickle.loads(payload)  # signed with this user's key: our own file (module docstring)
    except Exception:  # a file of an older format is only a cache miss
        return {}
    if version != cache_version() or not isinstance(entries, dict):
        return {}
    return {name: value for name, value in entries.items() if isinstance(name, str) and isinstance(value, bytes)}


def find_in_text(lines: list[str], needle: str, start: tuple[int, int], limit: int = 10_000) -> tuple[int, int] | None:
    """1-based position of the first ``needle`` at or after ``start`` (1-based), within ``limit`` lines."""
    line, column = start
    for index in range(line - 1, min(len(lines), line - 1 + limit)):
        found = lines[index].find(needle, column - 1 if index == line - 1 else 0)
        if found >= 0:
            return index + 1, found + 1
    return None
