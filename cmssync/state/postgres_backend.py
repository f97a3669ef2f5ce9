"""The state in a PostgreSQL database (``state: postgresql://…``), with psycopg 3.

Why PostgreSQL: a team that runs CI and a daemon against one site, or an agency with dozens of sites, keeps state in
a database it already runs and backs up. Several states share one database, each under its own ``name``
(``postgresql://db/cmssync#production``): one per site and environment.

Tables (created on first use when missing; a role without CREATE needs them made once by an owner, docs/state.md):

* ``cmssync_state (name, document, updated)``: the snapshot, the JSON of ``state.json``.
* ``cmssync_state_journal (name, seq, format_version, kind, key, record)``: the journal, the same entries as the
  file backend's ``state.json.journal`` (:mod:`cmssync.state.journal`), one row per changed record, absolute values.
* ``cmssync_state_lock (name, purpose, holder, backend_pid)``: who holds a lock, for messages only.

Journal semantics, as the file backend's: a save inserts the changed records in one transaction, so when ``save``
returns they are committed and survive a SIGKILL of the run; loading reads the snapshot and replays the journal in
one snapshot-isolated transaction; the journal is folded into the snapshot (one transaction: write the document,
delete the rows) when the lock of a run is released and whenever it outgrows the state.

Locking: a *session* advisory lock (``pg_try_advisory_lock``) on the run's connection, keyed by the state's name.
PostgreSQL drops it the moment the session ends — the run exits, is killed, or its host vanishes (TCP keepalives,
set here, end a session whose client went silent) — so there is never a stale lock to break and no
``force-unlock``. The lock row only names the holder; it counts only while its backend process still holds the
advisory lock (``pg_locks``), so a row left by a killed run is ignored and replaced. The run's saves go through the
connection that holds the lock: if PostgreSQL ends that session the lock is gone and so is the connection, and the
next save fails instead of writing unlocked.

Leadership (:meth:`PostgresStateBackend.try_lead`): the same kind of lock under another key, held by a daemon for as
long as it leads (docs/daemon.md, "Replicas").

Credentials: the URL carries none (the settings refuse a password); libpq reads ``PGPASSWORD``, ``PGPASSFILE``
(``~/.pgpass``), ``PGSERVICE``, ``PGSSLMODE`` and the rest of its environment as usual.
"""

from __future__ import annotations

import contextlib
import dataclasses
import hashlib
import json
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any, Final

from cmssync.errors import StateError, StateLockedError
from cmssync.memory import give_back_freed_memory
from cmssync.secrets import url_without_credentials
from cmssync.state.journal import Entry, replay
from cmssync.state.keyring import FixedKeyRing, WarningKeyRing
from cmssync.state.records import FORMAT_VERSION, KIND_PREFIX, RECORD_MAPS, State, migrate_document, validated_state
from cmssync.state.store import LockHolder, journal_entry, record_count

if TYPE_CHECKING:
    import psycopg

    from cmssync.config import StateSettings

LOCK_NAMESPACE: Final = 0x636D7373
"""The first key of every cmssync advisory lock (``cmss``): the second is derived from the state's name."""
RUN: Final = "run"
LEADER: Final = "leader"
_CONNECT_TIMEOUT: Final = 10
_KEEPALIVES: Final = "keepalives=1 keepalives_idle=10 keepalives_interval=5 keepalives_count=3"
"""A session whose client vanished (host lost, network cut) ends within about 25 s, and its locks with it."""

_SCHEMA: Final = """
CREATE TABLE IF NOT EXISTS cmssync_state (
    name text PRIMARY KEY,
    document jsonb NOT NULL,
    updated timestamptz NOT NULL DEFAULT now()
);
CREATE TABLE IF NOT EXISTS cmssync_state_journal (
    name text NOT NULL,
    seq bigint GENERATED ALWAYS AS IDENTITY,
    format_version integer NOT NULL,
    kind text NOT NULL,
    key text NOT NULL,
    record jsonb,
    PRIMARY KEY (name, seq)
);
CREATE TABLE IF NOT EXISTS cmssync_state_lock (
    name text NOT NULL,
    purpose text NOT NULL,
    holder jsonb NOT NULL,
    backend_pid integer NOT NULL,
    PRIMARY KEY (name, purpose)
);
"""


class PostgresStateError(StateError):
    """The database failed or could not be reached (worth retrying later: the daemon retries with backoff)."""

    temporary = True


def lock_key(name: str, purpose: str) -> int:
    """The second key of the advisory lock of ``purpose`` on the state ``name``: a signed 32-bit digest."""
    digest = hashlib.sha256(f"{purpose}\0{name}".encode()).digest()
    return int.from_bytes(digest[:4], "big", signed=True)


class PostgresStateBackend:
    """The state ``settings.name`` in the database ``settings.address``; see the module docstring."""

    def __init__(
        self, settings: StateSettings, *, key_path: Path, key: bytes | None = None, lock_timeout: float = 0.0
    ) -> None:
        assert settings.address is not None
        self.address = settings.address.strip()
        self.name = settings.name
        self.location = f"{url_without_credentials(self.address)}#{self.name}"
        self.lock_timeout = lock_timeout
        self._key = key
        self._key_path = key_path
        self._guard = threading.RLock()
        self._session: psycopg.Connection[Any] | None = None
        """The connection holding the run's lock (its saves go through it); None outside a locked run."""
        self._leader: psycopg.Connection[Any] | None = None
        """The connection holding the leader's lock (:meth:`try_lead`)."""
        self._tracked: State | None = None
        self._journal_rows = 0
        self._snapshot_written = False

    # -- connections ---------------------------------------------------------------------------------------------

    def connect(self) -> psycopg.Connection[Any]:
        """A new autocommit connection with keepalives, the schema made sure of; errors name the database."""
        import psycopg

        try:
            conninfo = psycopg.conninfo.make_conninfo(
                self.address, connect_timeout=_CONNECT_TIMEOUT, application_name=f"cmssync {self.name}"[:63]
            )
            conn = psycopg.connect(f"{conninfo} {_KEEPALIVES}", autocommit=True)
        except psycopg.Error as exc:
            raise PostgresStateError(f"the state at {self.location}: cannot connect: {_reason(exc)}") from None
        try:
            self._ensure_schema(conn)
        except BaseException:
            conn.close()
            raise
        return conn

    def _ensure_schema(self, conn: psycopg.Connection[Any]) -> None:
        import psycopg

        with self._failing("prepare the tables"):
            exists = conn.execute(
                "SELECT to_regclass('cmssync_state') IS NOT NULL AND to_regclass('cmssync_state_journal') IS NOT NULL "
                "AND to_regclass('cmssync_state_lock') IS NOT NULL"
            ).fetchone()
            if exists is not None and exists[0]:
                return
            try:
                with conn.transaction():
                    conn.execute("SELECT pg_advisory_xact_lock(%s, 0)", (LOCK_NAMESPACE,))  # one creator at a time
                    conn.execute(_SCHEMA)
            except psycopg.errors.InsufficientPrivilege as exc:
                raise StateError(
                    f"the state at {self.location}: the tables are missing and this role may not create them "
                    f"({_reason(exc)}); have the database owner run cmssync once, or create them (docs/state.md)"
                ) from None

    @contextlib.contextmanager
    def _connection(self) -> Iterator[psycopg.Connection[Any]]:
        """The locked run's connection, else a short-lived one (a plan's load, ``status``)."""
        with self._guard:
            if self._session is not None:
                yield self._session
                return
            conn = self.connect()
            try:
                yield conn
            finally:
                conn.close()

    @contextlib.contextmanager
    def _failing(self, what: str) -> Iterator[None]:
        """Database errors as StateError naming the state and what failed (no credentials: the URL has none)."""
        import psycopg

        try:
            yield
        except psycopg.OperationalError as exc:
            lost = " (the connection holding the lock is gone, and the lock with it)" if self._session else ""
            raise PostgresStateError(f"the state at {self.location}: cannot {what}{lost}: {_reason(exc)}") from None
        except psycopg.Error as exc:
            raise StateError(f"the state at {self.location}: cannot {what}: {_reason(exc)}") from None

    # -- state ---------------------------------------------------------------------------------------------------

    def load(self) -> State:
        """The snapshot with the journal replayed, read in one consistent transaction; nothing is written."""
        with self._connection() as conn, self._failing("read the state"):
            conn.execute("BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY")
            try:
                row = conn.execute("SELECT document FROM cmssync_state WHERE name = %s", (self.name,)).fetchone()
                rows = conn.execute(
                    "SELECT format_version, kind, key, record FROM cmssync_state_journal WHERE name = %s ORDER BY seq",
                    (self.name,),
                ).fetchall()
            finally:
                conn.execute("COMMIT")
        entries = self._entries(rows)
        self._snapshot_written = row is not None
        if row is None and not entries:
            state = State()
        else:
            raw: Any = row[0] if row is not None else {"format_version": FORMAT_VERSION}
            version = raw.get("format_version") if isinstance(raw, dict) else None
            if not isinstance(version, int) or isinstance(version, bool):
                raise StateError(f"the state at {self.location} is not a cmssync state (no integer format_version)")
            state = validated_state(replay(migrate_document(raw, self.location), entries), self.location)
        give_back_freed_memory()
        state._keyring = (
            FixedKeyRing(self._key) if self._key is not None else WarningKeyRing(self._key_path, self.location)
        )
        state._changes.clear()
        self._tracked = state
        self._journal_rows = len(entries)
        return state

    def _entries(self, rows: list[tuple[Any, ...]]) -> list[Entry]:
        entries: list[Entry] = []
        for version, kind, key, record in rows:
            if version != FORMAT_VERSION:
                raise StateError(
                    f"the state at {self.location}: journal of format_version {version}, expected {FORMAT_VERSION}; "
                    "finish the run with the cmssync that started it"
                )
            if not (kind in (*RECORD_MAPS, "site") or kind.startswith(KIND_PREFIX)):
                raise StateError(f"the state at {self.location}: not a state journal entry: {kind!r}")
            entries.append((kind, key, record))
        return entries

    def save(self, state: State) -> None:
        """Commit the changed records as journal rows (one transaction), or the whole document when that is needed
        (a State this backend did not load, the first save, a journal grown past the state)."""
        with self._guard:
            if (
                state is not self._tracked
                or not self._snapshot_written
                or self._journal_rows > max(1024, 2 * record_count(state))
            ):
                self._compact(state)
                return
            changes = sorted(state._changes)
            if not changes:
                return
            rows = [
                (self.name, FORMAT_VERSION, kind, key, None if record is None else json.dumps(record))
                for kind, key, record in (journal_entry(state, kind, key) for kind, key in changes)
            ]
            with (
                self._connection() as conn,
                self._failing("save the state"),
                conn.transaction(),
                conn.cursor() as cursor,
            ):
                cursor.executemany(
                    "INSERT INTO cmssync_state_journal (name, format_version, kind, key, record) "
                    "VALUES (%s, %s, %s, %s, %s::jsonb)",
                    rows,
                )
            self._journal_rows += len(rows)
            state._changes.clear()

    def compact(self, state: State | None = None) -> None:
        with self._guard:
            target = state if state is not None else self._tracked
            if target is None or (target is self._tracked and not self._journal_rows and not target._changes):
                return
            self._compact(target)

    def _compact(self, state: State) -> None:
        document = state.sorted_copy().model_dump_json()
        with self._connection() as conn, self._failing("save the state"), conn.transaction():
            conn.execute(
                "INSERT INTO cmssync_state (name, document, updated) VALUES (%s, %s::jsonb, now()) "
                "ON CONFLICT (name) DO UPDATE SET document = EXCLUDED.document, updated = now()",
                (self.name, document),
            )
            conn.execute("DELETE FROM cmssync_state_journal WHERE name = %s", (self.name,))
        self._journal_rows = 0
        self._snapshot_written = True
        state._changes.clear()
        self._tracked = state

    # -- locks ---------------------------------------------------------------------------------------------------

    @contextlib.contextmanager
    def try_lock(self, command: str) -> Iterator[LockHolder]:
        """Hold the run's lock on a connection of its own; the run's loads and saves use it until released."""
        with self._holding(RUN, command) as (conn, holder):
            with self._guard:
                self._session = conn
            try:
                yield holder
                self.compact()  # the end of a run: fold its journal into the snapshot
            finally:
                with self._guard:
                    self._session = None

    @contextlib.contextmanager
    def try_lead(self, command: str) -> Iterator[LockHolder]:
        """Hold the leader's lock of this state (a daemon replica leads while it holds it), or raise
        StateLockedError naming the leader. Its connection is its own and held until released; losing it loses
        the leadership, which :meth:`still_leading` tells."""
        with self._holding(LEADER, command) as (conn, holder):
            self._leader = conn
            try:
                yield holder
            finally:
                self._leader = None

    def still_leading(self) -> bool:
        """Whether the leader's connection taken by :meth:`try_lead` is still alive (its lock with it)."""
        import psycopg

        conn = self._leader
        if conn is None or conn.closed:
            return False
        try:
            row = conn.execute("SELECT 1").fetchone()
        except psycopg.Error:
            return False
        return row is not None

    def leader(self) -> LockHolder | None:
        """The replica leading now, or None."""
        return self._holder(LEADER)

    @contextlib.contextmanager
    def _holding(self, purpose: str, command: str) -> Iterator[tuple[psycopg.Connection[Any], LockHolder]]:
        conn = self.connect()
        try:
            key = lock_key(self.name, purpose)
            with self._failing("lock the state"):
                row = conn.execute("SELECT pg_try_advisory_lock(%s, %s)", (LOCK_NAMESPACE, key)).fetchone()
            if row is None or not row[0]:
                raise StateLockedError(self._locked_message(purpose, self._holder(purpose, conn)))
            holder = LockHolder.of_this_process(command)
            with self._failing("lock the state"):
                conn.execute(
                    "INSERT INTO cmssync_state_lock (name, purpose, holder, backend_pid) "
                    "VALUES (%s, %s, %s::jsonb, pg_backend_pid()) ON CONFLICT (name, purpose) DO UPDATE "
                    "SET holder = EXCLUDED.holder, backend_pid = EXCLUDED.backend_pid",
                    (self.name, purpose, json.dumps(dataclasses.asdict(holder))),
                )
            yield conn, holder
            with contextlib.suppress(Exception):  # the row is only a name; closing releases the lock anyway
                conn.execute(
                    "DELETE FROM cmssync_state_lock WHERE name = %s AND purpose = %s "
                    "AND backend_pid = pg_backend_pid()",
                    (self.name, purpose),
                )
        finally:
            conn.close()  # ends the session: PostgreSQL releases its advisory lock

    def _holder(self, purpose: str, conn: psycopg.Connection[Any] | None = None) -> LockHolder | None:
        """Who holds the lock of ``purpose`` now: the named holder whose session holds the advisory lock."""
        query = (
            "SELECT l.holder FROM cmssync_state_lock l JOIN pg_locks p ON p.pid = l.backend_pid "
            "AND p.locktype = 'advisory' AND p.granted AND p.classid = %s::bigint::oid "
            "AND p.objid = %s::bigint::oid AND p.objsubid = 2 WHERE l.name = %s AND l.purpose = %s"
        )
        params = (LOCK_NAMESPACE, lock_key(self.name, purpose) & 0xFFFFFFFF, self.name, purpose)
        with contextlib.ExitStack() as stack:
            if conn is None:
                conn = stack.enter_context(self._connection())
            with self._failing("read the lock"):
                row = conn.execute(query, params).fetchone()
        if row is None:
            return None
        raw = row[0]
        return LockHolder(
            pid=int(raw.get("pid", 0)),
            host=str(raw.get("host", "an unknown host")),
            command=str(raw.get("command", "an unknown command")),
            since=str(raw.get("since", "an unknown time")),
            id=str(raw.get("id", "")),
            user=str(raw.get("user", "")),
        )

    def _locked_message(self, purpose: str, holder: LockHolder | None) -> str:
        what = "led" if purpose == LEADER else "locked"
        if holder is None:
            return f"the state at {self.location} is {what} by a run that has not named itself yet; try again"
        return (
            f"the state at {self.location} is {what} by {holder.describe()}; wait for it to finish (--lock-timeout). "
            "The lock is a PostgreSQL session lock: it goes the moment its holder exits or is killed"
        )

    def lock_holder(self) -> LockHolder | None:
        return self._holder(RUN)

    def inspect_lock(self) -> LockHolder | None:
        return self._holder(RUN)

    def force_unlock(self, lock_id: str) -> None:
        holder = self._holder(RUN)
        if holder is None:
            return  # released meanwhile
        raise StateError(
            f"the state at {self.location} is locked by {holder.describe()} through a PostgreSQL session lock: it "
            "cannot be taken from a live session and goes the moment that session ends (the run exits or is "
            "killed, or its host is gone for about 25 s); stop the run, or have a database superuser end its "
            "session with pg_terminate_backend"
        )


def _reason(exc: BaseException) -> str:
    """psycopg's message on one line (its messages may span lines with DETAIL/HINT)."""
    return " ".join(str(exc).split()) or type(exc).__name__
