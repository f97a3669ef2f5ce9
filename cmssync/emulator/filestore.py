"""Files in the file manager: import (UUID, storage prefix, image size attributes), tags, folders, lookups.

Files are looked up like ``File::getByUUIDOrID``: by UUID (case-insensitive), or by a numeric id only when the file
has no UUID — and every file the emulator holds has one, so numeric ids never resolve (as on a 9.x site).
"""

from __future__ import annotations

import random
import re
import sqlite3
import uuid as uuidlib
from typing import Any

from cmssync.emulator import attributes, imagesize
from cmssync.emulator.catalog import FILE_ATTRIBUTE_KEYS
from cmssync.emulator.store import Store, dumps, loads

#: ``meta`` key of the uploads a seed pinned (``[{"filename", "uuid", "prefix"}]``).
PINNED_UPLOADS = "pinned_uploads"

_UUID = re.compile(r"^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$")


def storage_prefix(rng: random.Random) -> str:
    """The ``NNNN/NNNN/NNNN`` directory triple of Concrete's file storage."""
    digits = f"{rng.randrange(10**12):012d}"
    return f"{digits[0:4]}/{digits[4:8]}/{digits[8:12]}"


def find(store: Store, identifier: str) -> sqlite3.Row | None:
    if not _UUID.match(identifier):
        return None
    return store.one("SELECT * FROM files WHERE uuid = ?", identifier.lower())


def folder_exists(store: Store, folder_id: int) -> bool:
    return store.one("SELECT 1 FROM folders WHERE id = ?", folder_id) is not None


def root_folder(store: Store) -> int:
    row = store.one("SELECT id FROM folders WHERE parent_id IS NULL ORDER BY id LIMIT 1")
    return int(row["id"]) if row else 0


def normalize_tags(text: str) -> str:
    """Tags as stored: one per line with a leading and trailing newline, or ``""``."""
    tags = [t.strip() for t in re.split(r"[,\n]", text) if t.strip()]
    return "\n" + "\n".join(tags) + "\n" if tags else ""


def add(
    store: Store,
    *,
    filename: str,
    content: bytes,
    folder_id: int,
    ts: int,
    rng: random.Random,
    file_uuid: str | None = None,
    title: str | None = None,
    description: str = "",
    tags: str = "",
    prefix: str | None = None,
    num_id: int | None = None,
) -> sqlite3.Row:
    """Import a file (call inside a transaction); image files get width/height attributes.

    Without a pinned UUID and prefix, an upload takes the ones a seed pinned for its file name (once).
    """
    if file_uuid is None and prefix is None:
        file_uuid, prefix = _pinned(store, filename)
    identifier = (file_uuid or str(uuidlib.UUID(int=rng.getrandbits(128), version=4))).lower()
    cursor = store.db.execute(
        "INSERT INTO files (num_id, uuid, filename, title, description, tags, folder_id, date_added, prefix, size,"
        " content,"
        " tiebreak) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
        (
            num_id,
            identifier,
            filename,
            title if title is not None else filename,
            description,
            normalize_tags(tags),
            folder_id,
            ts,
            prefix or storage_prefix(rng),
            len(content),
            content,
            rng.randrange(2**31),
        ),
    )
    file_id = int(cursor.lastrowid or 0)
    size = imagesize.dimensions(content)
    if size is not None:
        set_attributes(store, file_id, {"width": size[0], "height": size[1]})
    row = store.one("SELECT * FROM files WHERE num_id = ?", file_id)
    assert row is not None
    return row


def _pinned(store: Store, filename: str) -> tuple[str | None, str | None]:
    """The UUID and prefix a seed pinned for the next upload of ``filename`` (consumed), or ``(None, None)``."""
    pinned = loads(store.get_meta(PINNED_UPLOADS, "[]"))
    for index, entry in enumerate(pinned):
        if entry.get("filename") == filename:
            del pinned[index]
            store.set_meta(PINNED_UPLOADS, dumps(pinned))
            return entry.get("uuid"), entry.get("prefix")
    return None, None


def set_attributes(store: Store, file_id: int, values: dict[str, Any]) -> None:
    """Store file attribute values; every write gets a new value id (a new file version on the server)."""
    for handle, raw in values.items():
        key = FILE_ATTRIBUTE_KEYS.get(handle)
        if key is None:
            continue
        stored = attributes.coerce(key, raw)
        if stored is None:
            continue
        store.db.execute(
            "INSERT OR REPLACE INTO file_attributes (file_id, handle, av_id, value) VALUES (?, ?, ?, ?)",
            (file_id, handle, store.next_counter("next_av_id", 300), dumps(stored)),
        )
