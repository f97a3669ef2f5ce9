"""The state on disk: load, save incrementally, and lock it while an apply runs (design.md §5, "State").

The file layout, the password key beside it and the lock are described in :mod:`cmssync.state.records`. A save
appends the changed records to the journal beside ``state.json`` (:mod:`cmssync.state.journal`); the snapshot
``state.json`` is rewritten atomically only when the journal is compacted: at the end of a locked run, when the
journal outgrows the state, or when the State saved is not the one this store loaded (then nothing is known about
what changed). Loading reads the snapshot and replays the journal, so a run killed at any instant leaves a state
that loads with every change whose save returned. A ``state.json`` written before the journal existed is read as
it is (a snapshot with an empty journal): there is nothing to migrate.
"""

from __future__ import annotations

import contextlib
import dataclasses
import getpass
import json
import logging
import os
import socket
import threading
import uuid
from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from cmssync.errors import StateError, StateLockedError
from cmssync.fileio import TEMP_SUFFIX, write_atomically
from cmssync.memory import give_back_freed_memory
from cmssync.state.journal import Entry, JournalWriter, journal_path, read_journal, replay
from cmssync.state.keyring import KeyRing
from cmssync.state.records import FORMAT_VERSION, State, dumped, kind_of_changes, migrate_document, validated_state

log = logging.getLogger(__name__)


@dataclasses.dataclass(frozen=True)
class LockHolder:
    """Who holds (or last held) the state lock."""

    pid: int
    host: str
    command: str
    since: str
    """UTC start time, ``YYYY-MM-DDTHH:MM:SSZ``."""
    id: str = ""
    """The lock's id (``cmssync force-unlock ID``); empty in records written before ids existed."""
    user: str = ""
    """The user the holder runs as; empty when unknown."""

    @classmethod
    def of_this_process(cls, command: str) -> LockHolder:
        """This process as the holder of a lock taken now for ``command``, under a new lock id."""
        return cls(
            pid=os.getpid(),
            host=socket.gethostname(),
            command=command if command.startswith("cmssync") else f"cmssync {command}",
            since=datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%SZ"),
            id=str(uuid.uuid4()),
            user=current_user(),
        )

    def describe(self) -> str:
        extra = (f", user {self.user}" if self.user else "") + (f", lock id {self.id}" if self.id else "")
        return f"pid {self.pid} on host {self.host} ({self.command}, since {self.since}{extra})"

    def is_alive(self) -> bool | None:
        """Whether the holder process still runs; None when it runs on another host (cannot tell)."""
        if self.host != socket.gethostname():
            return None
        try:
            os.kill(self.pid, 0)
        except ProcessLookupError:
            return False
        except PermissionError:
            pass  # it exists, under another user
        return True


def current_user() -> str:
    """The login name of this process's user, or "" when the system cannot tell (a container without passwd)."""
    try:
        return getpass.getuser()
    except (OSError, KeyError):
        return ""


def read_lock_holder(state_path: Path) -> LockHolder | None:
    """The holder recorded in the lock file beside ``state_path``, or None when no run holds or left it.

    Reads only; it never takes the lock (so ``status`` cannot get in the way of an apply). A record left by a killed
    process stays until the next run takes the lock; ``LockHolder.is_alive()`` tells the two apart on one host.
    """
    return _parse_holder(_lock_path(state_path))


def _parse_holder(lock_path: Path) -> LockHolder | None:
    try:
        raw = json.loads(lock_path.read_text(encoding="utf-8") or "null")
        return LockHolder(
            pid=int(raw["pid"]),
            host=str(raw["host"]),
            command=str(raw["command"]),
            since=raw["since"],
            id=str(raw.get("id", "")),
            user=str(raw.get("user", "")),
        )
    except (OSError, ValueError, TypeError, KeyError):
        return None


def _lock_path(state_path: Path) -> Path:
    return state_path.with_name(state_path.name + ".lock")


class StateStore:
    """Load, save and lock the state at ``path`` (the snapshot; its journal and key sit beside it)."""

    def __init__(self, path: Path) -> None:
        self.path = Path(path)
        self.key_path = self.path.with_name(self.path.name + ".key")
        self.lock_path = _lock_path(self.path)
        self.journal_path = journal_path(self.path)
        self._write_lock = threading.Lock()
        self._tracked: State | None = None
        """The State whose changes since the last write are known (loaded or saved by this store)."""
        self._journal_length = 0
        """Byte length of the whole lines of the journal on disk (what a new writer keeps)."""
        self._journal: JournalWriter | None = None
        self._journal_lines = 0
        self._snapshot_written = False
        """state.json exists (loaded or written by this store): a save may append to the journal instead of
        writing it, without a stat per save."""

    def load(self) -> State:
        """The stored state (snapshot plus journal), or an empty one when neither exists yet. Writes nothing."""
        with self._write_lock:
            self._close_journal()
            try:
                data = self.path.read_bytes()
            except FileNotFoundError:
                data = None
            except OSError as exc:
                raise StateError(f"{self.path}: cannot read the state: {exc.strerror or exc}") from exc
            entries, self._journal_length = read_journal(self.journal_path, FORMAT_VERSION)
            self._journal_lines = len(entries)
            self._snapshot_written = data is not None
            state = State() if data is None and not entries else self._parse(data, entries)
            give_back_freed_memory()  # what parsing the document took (cmssync.memory)
            state._keyring = KeyRing(self.key_path)
            state._changes.clear()
            self._tracked = state
            return state

    def _parse(self, data: bytes | None, entries: list[Entry]) -> State:
        raw: Any = {"format_version": FORMAT_VERSION}
        if data is not None:
            try:
                raw = json.loads(data)
            except (UnicodeDecodeError, json.JSONDecodeError) as exc:
                raise StateError(f"{self.path}: the state is not valid JSON ({exc})") from exc
        version = raw.get("format_version") if isinstance(raw, dict) else None
        if not isinstance(version, int) or isinstance(version, bool):
            raise StateError(f"{self.path}: not a cmssync state file (no integer format_version)")
        return validated_state(replay(migrate_document(raw, str(self.path)), entries), str(self.path))

    def save(self, state: State) -> None:
        """Persist ``state``: append its changed records to the journal, or compact when that is cheaper or needed.

        When this returns, the changes survive a SIGKILL (they are in the journal or the snapshot); against a power
        cut the journal is synced in groups (see :mod:`cmssync.state.journal`).
        """
        with self._write_lock:
            try:
                if (
                    state is not self._tracked
                    or self._journal_lines > max(1024, 2 * record_count(state))
                    or not self._snapshot_written  # the first save writes the snapshot: state.json always exists
                ):
                    self._compact(state)
                    return
                changes = sorted(state._changes)
                if not changes:
                    return
                if self._journal is None:
                    self._journal = JournalWriter(
                        self.journal_path, valid_length=self._journal_length, format_version=FORMAT_VERSION
                    )
                self._journal.append([journal_entry(state, kind, key) for kind, key in changes])
                self._journal_lines += len(changes)
                state._changes.clear()
            except OSError as exc:
                raise StateError(f"{self.path}: cannot write the state: {exc.strerror or exc}") from exc

    def compact(self, state: State | None = None) -> None:
        """Fold the journal into the snapshot (``state``, or the one this store tracks); nothing to do without one."""
        with self._write_lock:
            target = state if state is not None else self._tracked
            if target is None or (target is self._tracked and not self._journal_lines and not target._changes):
                return
            try:
                self._compact(target)
            except OSError as exc:
                raise StateError(f"{self.path}: cannot write the state: {exc.strerror or exc}") from exc

    def _compact(self, state: State) -> None:
        """Write the whole state atomically as the snapshot, then empty the journal (a crash between the two is
        harmless: replaying entries the snapshot already holds changes nothing)."""
        text = state.sorted_copy().model_dump_json(indent=1)
        self.path.parent.mkdir(parents=True, exist_ok=True)
        write_atomically(self.path, text.encode("utf-8") + b"\n", mode=0o600)
        self._close_journal()
        with contextlib.suppress(FileNotFoundError):
            os.truncate(self.journal_path, 0)
        self._journal_length = 0
        self._journal_lines = 0
        self._snapshot_written = True
        state._changes.clear()
        self._tracked = state

    def _close_journal(self) -> None:
        if self._journal is not None:
            journal, self._journal = self._journal, None
            journal.close()

    @contextlib.contextmanager
    def lock(self, command: str) -> Iterator[LockHolder]:
        """Hold the exclusive state lock for ``command`` (e.g. ``"cmssync apply"``), or raise StateLockedError."""
        import fcntl  # POSIX only; imported here so that the rest of the store works anywhere

        try:
            self.lock_path.parent.mkdir(parents=True, exist_ok=True)
            fd = os.open(self.lock_path, os.O_RDWR | os.O_CREAT, 0o644)
        except OSError as exc:
            raise StateError(f"{self.lock_path}: cannot open the state lock: {exc.strerror or exc}") from exc
        try:
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except OSError as exc:
                if not isinstance(exc, BlockingIOError):
                    raise StateError(f"{self.lock_path}: cannot lock the state: {exc.strerror or exc}") from exc
                raise StateLockedError(_locked_message(self.lock_path)) from None
            previous = _parse_holder(self.lock_path)
            if previous is not None:
                log.warning(
                    "taking over the state lock %s left by %s, which did not finish cleanly; "
                    "its last changes are in the state, check the site with `cmssync plan`",
                    self.lock_path,
                    previous.describe(),
                )
            holder = LockHolder.of_this_process(command)
            _rewrite(fd, json.dumps(dataclasses.asdict(holder)).encode("utf-8"))
            self._remove_leftover_temp_files()
            try:
                yield holder
            finally:
                try:
                    self.compact()  # the end of a run: fold its journal into state.json
                finally:
                    _rewrite(fd, b"")  # released cleanly: no holder to report
        finally:
            os.close(fd)  # closing drops the flock

    def _remove_leftover_temp_files(self) -> None:
        """Temp files of a save that was killed before ``os.replace``; only safe while holding the lock."""
        for leftover in self.path.parent.glob(f".{self.path.name}.*{TEMP_SUFFIX}"):
            with contextlib.suppress(OSError):
                leftover.unlink()


def record_count(state: State) -> int:
    """The records kept in ``state`` (what a journal longer than twice this is compacted against)."""
    built_in = len(state.pages) + len(state.files) + len(state.users)
    return built_in + sum(map(len, state.kinds.values()))


def journal_entry(state: State, kind: str, key: str) -> Entry:
    """The journal entry of the record ``key`` of ``kind`` as ``state`` holds it now (None: forgotten)."""
    if kind == "site":
        return "site", "", None if state.site is None else state.site.model_dump(mode="json")
    kept = kind_of_changes(kind)
    records = state.records_of(kept) if kept is not None else getattr(state, kind)
    record = records.get(key)
    return kind, key, None if record is None else dumped(kind, record)


def _locked_message(lock_path: Path) -> str:
    """Who holds the lock and how to end the wait. Never "delete the lock file": the kernel's ``flock`` is what
    locks, it is released the moment its holder exits, and deleting the file while a run holds it lets a second run
    lock a new file beside it — two writers on one state."""
    holder = _parse_holder(lock_path)
    # A dead recorded holder means the live one has not written its record yet.
    if holder is None or holder.is_alive() is False:
        return (
            f"state is locked by another process that has not said who it is yet; find it with "
            f"`fuser -v {lock_path}` and wait for it or stop it (the lock goes when it exits; do not delete the file)"
        )
    how = f"stop it with `kill {holder.pid}`" if holder.host == socket.gethostname() else f"stop it on {holder.host}"
    return (
        f"state is locked by {holder.describe()}; wait for it to finish, or {how} (SIGTERM lets it save its "
        "state and exit; the lock goes when it exits, so never delete the lock file)"
    )


def _rewrite(fd: int, data: bytes) -> None:
    os.ftruncate(fd, 0)
    os.pwrite(fd, data, 0)
