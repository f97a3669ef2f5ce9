"""The state journal: an append-only log of changed records beside ``state.json``, folded into it at the end of a run.

Why: the executor saves the state after every completed remote change (thousands per first apply). Rewriting the
whole document each time cost 5 ms with two fsyncs at 2,500 objects — 18.5 s of a 52 s first apply (bench/RESULTS.md).
A save now appends one line per changed record to ``state.json.journal``; ``state.json`` itself (the *snapshot*,
unchanged format, still the file people read and commit) is rewritten only when the journal is compacted: when the
lock of a run is released, and whenever the journal has grown past the number of records (so its size, and the
time to replay it, stay proportional to the state).

Format: UTF-8 JSON lines. The first line is a header ``{"format_version": N}`` (the snapshot's version the entries
belong to); each following line is one change, an absolute value, never a delta::

    {"kind": "pages", "key": "/about", "record": {...}}   set a record
    {"kind": "pages", "key": "/about", "record": null}    forget it
    {"kind": "site", "record": {...}}                     the site binding
    {"kind": "kinds.team", "key": "X", "record": {...}}   a record of a registered kind (State.kinds["team"])

Because entries are absolute, replaying a journal twice gives the same state: a crash between writing the new
snapshot and emptying the journal is harmless.

Crash safety: each change is one ``write`` on an ``O_APPEND`` descriptor, so a SIGKILL leaves whole lines plus at
most one torn last line (no newline yet), which loading ignores and the next append cuts off. A line that is not
the last and does not parse is corruption and a ``StateError`` naming the file and line. Durability against power
loss is grouped: the journal is ``fdatasync``-ed at most every ``SYNC_INTERVAL`` seconds (one fdatasync costs
about 3 ms on the benchmark machine, more than everything else a save does) and always when it is closed (a
compaction, the end of a run), so a power cut can lose at most the changes of the last interval or two — never the
consistency of what is left, and the executor's recovery (drafts found by the version id, creates looked up before
they are repeated) treats a lost record like a run killed before the save. A SIGKILL loses nothing that ``save``
returned from: the lines are in the kernel's page cache.

The grouped fdatasync runs in a helper thread of the writer (started with the first sync it needs, one sync at a
time): the caller — the executor's event loop, which every request in flight waits on — appends and goes on instead
of waiting for the disk. Appends go on meanwhile: a sync covers at least every line written before it started, and
lines written during it are covered by the next one. Closing stops the thread and syncs what is left, in the
caller's thread; an error of a background sync is raised by the next append or by ``close``.
"""

from __future__ import annotations

import json
import os
import threading
import time
from collections.abc import Iterable
from pathlib import Path
from typing import Any, Final

from cmssync.errors import StateError
from cmssync.state.records import KIND_PREFIX, RECORD_MAPS

SYNC_INTERVAL: Final = 0.25
"""Seconds between two fdatasync calls of the journal (the grouped commit)."""

Entry = tuple[str, str, dict[str, Any] | None]
"""(kind, key, record as JSON data or None for a removal); kind ``site`` has key ``""``."""


def journal_path(state_path: Path) -> Path:
    return state_path.with_name(state_path.name + ".journal")


def read_journal(path: Path, format_version: int) -> tuple[list[Entry], int]:
    """The entries of the journal at ``path`` and the byte length of its whole lines (a torn tail is left out).

    A missing journal is empty. Raises StateError for a journal of another format version or a corrupted line.
    """
    try:
        data = path.read_bytes()
    except FileNotFoundError:
        return [], 0
    except OSError as exc:
        raise StateError(f"{path}: cannot read the state journal: {exc.strerror or exc}") from exc
    end = data.rfind(b"\n") + 1  # whole lines only: a SIGKILL mid-write leaves a torn last line
    entries: list[Entry] = []
    for number, line in enumerate(data[:end].splitlines(), start=1):
        if not line.strip():
            continue
        try:
            raw = json.loads(line)
        except (UnicodeDecodeError, json.JSONDecodeError) as exc:
            raise StateError(f"{path}:{number}: the state journal is corrupted ({exc})") from None
        if number == 1:
            version = raw.get("format_version") if isinstance(raw, dict) else None
            if version != format_version:
                raise StateError(
                    f"{path}:1: state journal of format_version {version!r}, expected {format_version}; "
                    "finish the run with the cmssync that started it"
                )
            continue
        entries.append(_entry(path, number, raw))
    return entries, end


def _entry(path: Path, number: int, raw: Any) -> Entry:
    kind = raw.get("kind") if isinstance(raw, dict) else None
    record = raw.get("record") if isinstance(raw, dict) else None
    key = raw.get("key", "") if isinstance(raw, dict) else None
    if (
        not isinstance(kind, str)
        or not (kind in (*RECORD_MAPS, "site") or kind.startswith(KIND_PREFIX))
        or not isinstance(key, str)
        or not (record is None or isinstance(record, dict))
    ):
        raise StateError(f"{path}:{number}: not a state journal entry")
    return kind, key, record


def replay(raw: dict[str, Any], entries: Iterable[Entry]) -> dict[str, Any]:
    """Apply journal entries to a raw (JSON) state document, in place; returns it."""
    for kind, key, record in entries:
        if kind == "site":
            raw["site"] = record
            continue
        holder = raw.setdefault("kinds", {}) if kind.startswith(KIND_PREFIX) else raw
        name = kind.removeprefix(KIND_PREFIX)
        records = holder.setdefault(name, {}) if isinstance(holder, dict) else None
        if not isinstance(records, dict):
            continue  # the snapshot's own validation reports it
        if record is None:
            records.pop(key, None)
            if holder is not raw and not records:
                del holder[name]  # as State.forget leaves it
        else:
            records[key] = record
    return raw


class JournalWriter:
    """Appends entries to the journal; created lazily by the store on the first save after a load or compaction."""

    def __init__(self, path: Path, *, valid_length: int, format_version: int) -> None:
        self.path = path
        self.lines = 0
        self._last_sync = time.monotonic()
        self._dirty = False
        self._syncer: threading.Thread | None = None
        self._wanted = threading.Condition()
        self._sync_requested = False
        self._closing = False
        self._sync_error: OSError | None = None
        path.parent.mkdir(parents=True, exist_ok=True)
        self._fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o600)
        try:
            size = os.fstat(self._fd).st_size
            if size > valid_length:
                os.ftruncate(self._fd, valid_length)  # a torn line left by a killed writer
            if valid_length == 0:
                os.write(self._fd, json.dumps({"format_version": format_version}).encode() + b"\n")
        except BaseException:
            os.close(self._fd)
            raise

    def append(self, entries: list[Entry]) -> None:
        """Write ``entries`` with one ``write`` call (one atomic append); when the interval has passed, ask the
        sync thread for an fdatasync (it starts with the first one)."""
        self._raise_sync_error()
        if not entries:
            return
        chunks = []
        for kind, key, record in entries:
            item: dict[str, Any] = {"kind": kind, "record": record} if kind == "site" else {"kind": kind, "key": key}
            item["record"] = record
            chunks.append(json.dumps(item, separators=(",", ":"), ensure_ascii=False))
        payload = ("\n".join(chunks) + "\n").encode("utf-8")
        written = os.write(self._fd, payload)
        while written < len(payload):  # a short write (full disk, signal) continues where it stopped
            written += os.write(self._fd, payload[written:])
        self.lines += len(entries)
        self._dirty = True
        if time.monotonic() - self._last_sync >= SYNC_INTERVAL:
            self._dirty = False  # lines appended from now on wait for the next sync
            self._last_sync = time.monotonic()
            with self._wanted:
                self._sync_requested = True  # a sync still running picks this up when it finishes
                self._wanted.notify()
            if self._syncer is None:
                self._syncer = threading.Thread(target=self._sync_loop, name="cmssync-journal-sync", daemon=True)
                self._syncer.start()

    def _sync_loop(self) -> None:
        while True:
            with self._wanted:
                while not self._sync_requested and not self._closing:
                    self._wanted.wait()
                if not self._sync_requested:
                    return
                self._sync_requested = False
            try:
                os.fdatasync(self._fd)
            except OSError as exc:
                self._sync_error = exc

    def _raise_sync_error(self) -> None:
        if self._sync_error is not None:
            error, self._sync_error = self._sync_error, None
            raise error

    def sync(self) -> None:
        """Wait for the background syncs asked for so far, then fdatasync what they did not cover, in this thread."""
        self._stop_syncer()
        self._raise_sync_error()
        if self._dirty:
            os.fdatasync(self._fd)
            self._dirty = False
        self._last_sync = time.monotonic()

    def _stop_syncer(self) -> None:
        if self._syncer is None:
            return
        with self._wanted:
            self._closing = True
            self._wanted.notify()
        self._syncer.join()  # it finishes a requested sync first
        self._syncer, self._closing = None, False

    def close(self) -> None:
        try:
            self.sync()
        finally:
            self._stop_syncer()  # sync() raised: never close the descriptor under the thread
            os.close(self._fd)
