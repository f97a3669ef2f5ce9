"""The emulator's SQLite database: schema, connection and transactions.

One connection is owned by the app and used only from the event-loop thread (every handler is ``async`` and does its
database work without awaiting in between), so requests are serialised without extra locking. The connection runs in
autocommit mode (``isolation_level=None``) and writes happen inside explicit ``BEGIN IMMEDIATE … COMMIT`` blocks:
a change is either committed or not there at all, which is what makes the ``commit-then-500`` fault honest.

Times are stored as integer Unix seconds (UTC); rendering turns them into the formats the server uses.
"""

from __future__ import annotations

import json
import sqlite3
import time
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

SCHEMA = """
CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS clients (
    client_id TEXT PRIMARY KEY, secret TEXT NOT NULL, identifier TEXT NOT NULL, name TEXT NOT NULL,
    scopes TEXT  -- JSON list of allowed scopes, NULL = every scope
);
CREATE TABLE IF NOT EXISTS tokens (
    jti TEXT PRIMARY KEY, kind TEXT NOT NULL, client_id TEXT NOT NULL, user_id INTEGER,
    scopes TEXT NOT NULL, expires INTEGER NOT NULL, revoked INTEGER NOT NULL DEFAULT 0,
    access_jti TEXT  -- for a refresh token: the access token issued with it
);
CREATE TABLE IF NOT EXISTS users (
    id INTEGER PRIMARY KEY AUTOINCREMENT, username TEXT NOT NULL, email TEXT NOT NULL, password TEXT NOT NULL,
    date_added INTEGER NOT NULL, status TEXT NOT NULL DEFAULT 'active', total_logins INTEGER NOT NULL DEFAULT 0,
    date_password_last_changed INTEGER, date_last_updated INTEGER, last_login INTEGER NOT NULL DEFAULT 0,
    previous_login INTEGER NOT NULL DEFAULT 0, timezone TEXT, language TEXT
);
CREATE INDEX IF NOT EXISTS users_by_date ON users (date_added);
CREATE TABLE IF NOT EXISTS user_attributes (
    user_id INTEGER NOT NULL, handle TEXT NOT NULL, av_id INTEGER NOT NULL, value TEXT NOT NULL,
    PRIMARY KEY (user_id, handle)
);
CREATE TABLE IF NOT EXISTS groups (id INTEGER PRIMARY KEY AUTOINCREMENT, name TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS user_groups (
    user_id INTEGER NOT NULL, group_id INTEGER NOT NULL, PRIMARY KEY (user_id, group_id)
);
CREATE TABLE IF NOT EXISTS pages (
    id INTEGER PRIMARY KEY AUTOINCREMENT, parent_id INTEGER, handle TEXT NOT NULL, path TEXT,
    type TEXT NOT NULL, date_added INTEGER NOT NULL, date_modified INTEGER NOT NULL,
    display_order INTEGER NOT NULL DEFAULT 0, in_trash INTEGER NOT NULL DEFAULT 0,
    tiebreak INTEGER NOT NULL DEFAULT 0  -- the unstable order of rows whose sort keys tie
);
CREATE INDEX IF NOT EXISTS pages_by_parent ON pages (parent_id, display_order);
CREATE INDEX IF NOT EXISTS pages_by_modified ON pages (date_modified, tiebreak);
CREATE TABLE IF NOT EXISTS versions (
    page_id INTEGER NOT NULL, id INTEGER NOT NULL, name TEXT NOT NULL, description TEXT NOT NULL,
    template TEXT NOT NULL, is_approved INTEGER NOT NULL, is_new INTEGER NOT NULL,
    date_created INTEGER NOT NULL, date_approved INTEGER, publish_end_date INTEGER,
    PRIMARY KEY (page_id, id)
);
CREATE TABLE IF NOT EXISTS version_attributes (
    page_id INTEGER NOT NULL, version_id INTEGER NOT NULL, handle TEXT NOT NULL, av_id INTEGER NOT NULL,
    value TEXT NOT NULL, PRIMARY KEY (page_id, version_id, handle)
);
CREATE TABLE IF NOT EXISTS areas (page_id INTEGER NOT NULL, handle TEXT NOT NULL, PRIMARY KEY (page_id, handle));
CREATE TABLE IF NOT EXISTS blocks (
    id INTEGER PRIMARY KEY AUTOINCREMENT, type TEXT NOT NULL,
    record TEXT  -- JSON object of column -> string, NULL for block types without a table
);
CREATE TABLE IF NOT EXISTS placements (
    page_id INTEGER NOT NULL, version_id INTEGER NOT NULL, area TEXT NOT NULL, position INTEGER NOT NULL,
    block_id INTEGER NOT NULL, PRIMARY KEY (page_id, version_id, block_id)
);
CREATE INDEX IF NOT EXISTS placements_by_block ON placements (block_id);
CREATE TABLE IF NOT EXISTS sub_area_owners (
    block_id INTEGER NOT NULL, instance INTEGER NOT NULL,  -- a layout/container block and a sub-area number it renders
    PRIMARY KEY (block_id, instance)
);
CREATE TABLE IF NOT EXISTS orphan_blocks (
    block_id INTEGER PRIMARY KEY  -- a block id a failed add consumed: the block has no record and no placement
);
CREATE TABLE IF NOT EXISTS folders (id INTEGER PRIMARY KEY, name TEXT NOT NULL, parent_id INTEGER);
CREATE TABLE IF NOT EXISTS files (
    num_id INTEGER PRIMARY KEY AUTOINCREMENT, uuid TEXT NOT NULL UNIQUE, filename TEXT NOT NULL,
    title TEXT NOT NULL, description TEXT NOT NULL DEFAULT '', tags TEXT NOT NULL DEFAULT '',
    folder_id INTEGER NOT NULL, date_added INTEGER NOT NULL, prefix TEXT NOT NULL, size INTEGER NOT NULL,
    content BLOB NOT NULL, tiebreak INTEGER NOT NULL DEFAULT 0
);
CREATE INDEX IF NOT EXISTS files_by_date ON files (date_added, tiebreak);
CREATE TABLE IF NOT EXISTS locales (  -- the site's locale trees besides the default one (en_US, home page 1)
    id INTEGER PRIMARY KEY, language TEXT NOT NULL, country TEXT NOT NULL, home_page_id INTEGER NOT NULL
);
CREATE TABLE IF NOT EXISTS sites (  -- the installation's sites besides the default one (id 1, home page 1)
    id INTEGER PRIMARY KEY, handle TEXT NOT NULL UNIQUE, name TEXT NOT NULL, home_page_id INTEGER NOT NULL,
    host TEXT NOT NULL,  -- the host of the site's canonical URL: requests naming it are that site's
    locale_id INTEGER NOT NULL, language TEXT NOT NULL, country TEXT NOT NULL
);
CREATE TABLE IF NOT EXISTS localized_stacks (  -- a stack's version for a locale: a child page of the neutral stack
    page_id INTEGER PRIMARY KEY, locale TEXT NOT NULL
);
CREATE TABLE IF NOT EXISTS file_attributes (
    file_id INTEGER NOT NULL, handle TEXT NOT NULL, av_id INTEGER NOT NULL, value TEXT NOT NULL,
    PRIMARY KEY (file_id, handle)
);
"""

TABLES = (
    "meta",
    "clients",
    "tokens",
    "users",
    "user_attributes",
    "groups",
    "user_groups",
    "pages",
    "versions",
    "version_attributes",
    "areas",
    "blocks",
    "placements",
    "sub_area_owners",
    "orphan_blocks",
    "folders",
    "files",
    "file_attributes",
    "locales",
    "sites",
    "localized_stacks",
)


def now() -> int:
    """The current time in whole Unix seconds (the server's dates have second precision)."""
    return int(time.time())


class Store:
    """The database connection plus the few generic helpers every route module needs."""

    def __init__(self, path: str) -> None:
        self.path = path
        self.db = sqlite3.connect(path, isolation_level=None, check_same_thread=False)
        self.db.row_factory = sqlite3.Row
        self.db.execute("PRAGMA journal_mode=WAL")
        self.db.execute("PRAGMA synchronous=NORMAL")
        self.db.executescript(SCHEMA)

    def close(self) -> None:
        self.db.close()

    @contextmanager
    def transaction(self) -> Iterator[sqlite3.Connection]:
        """``BEGIN IMMEDIATE`` … ``COMMIT``; any exception rolls the whole change back."""
        self.db.execute("BEGIN IMMEDIATE")
        try:
            yield self.db
        except BaseException:
            self.db.execute("ROLLBACK")
            raise
        self.db.execute("COMMIT")

    def wipe(self) -> None:
        """Delete every row (a reset reseeds into the same file, so ``--db`` paths stay valid)."""
        with self.transaction() as db:
            for table in TABLES:
                db.execute(f"DELETE FROM {table}")
            db.execute("DELETE FROM sqlite_sequence")

    def one(self, sql: str, *params: Any) -> sqlite3.Row | None:
        row: sqlite3.Row | None = self.db.execute(sql, params).fetchone()
        return row

    def all(self, sql: str, *params: Any) -> list[sqlite3.Row]:
        return list(self.db.execute(sql, params).fetchall())

    def get_meta(self, key: str, default: str = "") -> str:
        row = self.one("SELECT value FROM meta WHERE key = ?", key)
        return str(row["value"]) if row else default

    def set_meta(self, key: str, value: str) -> None:
        self.db.execute("INSERT OR REPLACE INTO meta (key, value) VALUES (?, ?)", (key, value))

    def next_counter(self, key: str, start: int = 1) -> int:
        """A monotonically increasing number kept in ``meta`` (attribute value ids and the like)."""
        value = int(self.get_meta(key, str(start)))
        self.set_meta(key, str(value + 1))
        return value

    def is_empty(self) -> bool:
        return self.one("SELECT 1 FROM pages LIMIT 1") is None


def dumps(value: Any) -> str:
    """JSON for storage: stable key order so stored values compare equal."""
    return json.dumps(value, sort_keys=True, separators=(",", ":"))


def loads(text: str | None) -> Any:
    return None if text is None else json.loads(text)
