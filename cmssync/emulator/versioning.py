"""Page versions and the blocks placed in them, with the copy-on-write rules a real 9.3 site shows.

* ``version_to_modify`` is ``Collection::getVersionToModify``: the most recent version is reused while it is an
  unapproved "new" version; otherwise it is cloned into a new unapproved, "new" version. So a page PUT and any
  number of block adds, updates and deletes made without approval in between share one draft (recorded:
  ``areas.consecutive.*``). A page's block add that needs a new version copies the live one. A stack's draft is
  never reused: each write to a stack makes a version of its own (stack-feed.jsonl: two page PUTs in a row,
  versions 4 and 5), copied from the stack's *recent* version, block adds included, so the last version holds every
  write (stack-writes.jsonl: an update and three adds make versions 2-5, and approving 5 publishes all four).
* A clone places the *same* block ids in the new version (aliases). Updating a block that is also placed in another
  version duplicates it first: the update answers a **new** id and the old id is no longer in the draft
  (``areas.update.content_value`` → ``areas.update.old_block_id``). A block placed only in the draft is updated in
  place.
* Approving makes a version live and every other version of the page unapproved; it clears the publish end date.
* ``DELETE /blocks/{id}`` removes a block from every version, bypassing all of this.
"""

from __future__ import annotations

import sqlite3
from typing import Any

from cmssync.emulator import attributes
from cmssync.emulator.catalog import PAGE_ATTRIBUTE_KEYS
from cmssync.emulator.store import Store, dumps, loads


def recent_version(store: Store, page_id: int) -> sqlite3.Row | None:
    return store.one("SELECT * FROM versions WHERE page_id = ? ORDER BY id DESC LIMIT 1", page_id)


def live_version(store: Store, page_id: int) -> sqlite3.Row | None:
    return store.one("SELECT * FROM versions WHERE page_id = ? AND is_approved = 1 ORDER BY id DESC LIMIT 1", page_id)


def get_version(store: Store, page_id: int, version_id: int) -> sqlite3.Row | None:
    return store.one("SELECT * FROM versions WHERE page_id = ? AND id = ?", page_id, version_id)


def clone_version(store: Store, page_id: int, source: sqlite3.Row, ts: int) -> sqlite3.Row:
    """A new unapproved "new" version with the source's fields, attributes and block placements."""
    row = store.one("SELECT MAX(id) AS m FROM versions WHERE page_id = ?", page_id)
    new_id = int(row["m"] if row and row["m"] is not None else 0) + 1
    db = store.db
    db.execute(
        "INSERT INTO versions (page_id, id, name, description, template, is_approved, is_new, date_created)"
        " VALUES (?, ?, ?, ?, ?, 0, 1, ?)",
        (page_id, new_id, source["name"], source["description"], source["template"], ts),
    )
    db.execute(
        "INSERT INTO version_attributes (page_id, version_id, handle, av_id, value)"
        " SELECT page_id, ?, handle, av_id, value FROM version_attributes WHERE page_id = ? AND version_id = ?",
        (new_id, page_id, source["id"]),
    )
    db.execute(
        "INSERT INTO placements (page_id, version_id, area, position, block_id)"
        " SELECT page_id, ?, area, position, block_id FROM placements WHERE page_id = ? AND version_id = ?",
        (new_id, page_id, source["id"]),
    )
    created = get_version(store, page_id, new_id)
    assert created is not None
    return created


def version_to_modify(store: Store, page_id: int, ts: int, *, from_live: bool = False) -> sqlite3.Row:
    """The draft that a change goes into (see the module docstring)."""
    recent = recent_version(store, page_id)
    assert recent is not None, "every page has a version"
    stack = _is_stack(store, page_id)
    if not recent["is_approved"] and recent["is_new"] and not stack:
        return recent
    source = (live_version(store, page_id) or recent) if from_live and not stack else recent
    return clone_version(store, page_id, source, ts)


def _is_stack(store: Store, page_id: int) -> bool:
    return store.one("SELECT 1 FROM pages WHERE id = ? AND type = 'core_stack'", page_id) is not None


def approve(store: Store, page_id: int, version_id: int, ts: int) -> None:
    store.db.execute("UPDATE versions SET is_approved = 0 WHERE page_id = ?", (page_id,))
    store.db.execute(
        "UPDATE versions SET is_approved = 1, is_new = 0, date_approved = ?, publish_end_date = NULL"
        " WHERE page_id = ? AND id = ?",
        (ts, page_id, version_id),
    )


def deny(store: Store, page_id: int, version_id: int) -> None:
    store.db.execute("UPDATE versions SET is_approved = 0 WHERE page_id = ? AND id = ?", (page_id, version_id))


def delete_version(store: Store, page_id: int, version_id: int) -> None:
    db = store.db
    blocks = [
        r["block_id"]
        for r in store.all("SELECT block_id FROM placements WHERE page_id = ? AND version_id = ?", page_id, version_id)
    ]
    db.execute("DELETE FROM versions WHERE page_id = ? AND id = ?", (page_id, version_id))
    db.execute("DELETE FROM version_attributes WHERE page_id = ? AND version_id = ?", (page_id, version_id))
    db.execute("DELETE FROM placements WHERE page_id = ? AND version_id = ?", (page_id, version_id))
    for block_id in blocks:
        if store.one("SELECT 1 FROM placements WHERE block_id = ? LIMIT 1", block_id) is None:
            db.execute("DELETE FROM blocks WHERE id = ?", (block_id,))


# --- attributes of a version -------------------------------------------------------------------------------------


def set_attributes(
    store: Store, page_id: int, version_id: int, values: dict[str, Any], *, from_seed: bool = False
) -> None:
    for handle, raw in values.items():
        key = PAGE_ATTRIBUTE_KEYS.get(handle)
        if key is None:
            continue  # unknown handles are ignored silently
        stored = attributes.coerce(key, raw, from_seed=from_seed)
        existing = store.one(
            "SELECT av_id FROM version_attributes WHERE page_id = ? AND version_id = ? AND handle = ?",
            page_id,
            version_id,
            handle,
        )
        av_id = int(existing["av_id"]) if existing else store.next_counter("next_av_id", 300)
        store.db.execute(
            "INSERT OR REPLACE INTO version_attributes (page_id, version_id, handle, av_id, value)"
            " VALUES (?, ?, ?, ?, ?)",
            (page_id, version_id, handle, av_id, dumps(stored)),
        )


def listed_attributes(store: Store, page_id: int, version_id: int) -> list[tuple[int, str, str, Any]]:
    """``(av_id, type, handle, value)`` of the listed attribute values, in attribute-key order."""
    found = []
    for row in store.all(
        "SELECT handle, av_id, value FROM version_attributes WHERE page_id = ? AND version_id = ?",
        page_id,
        version_id,
    ):
        key = PAGE_ATTRIBUTE_KEYS[row["handle"]]
        value = loads(row["value"])
        if attributes.listed(key, value):
            found.append((key.order, int(row["av_id"]), key.type, key.handle, value))
    return [(av_id, kind, handle, value) for _, av_id, kind, handle, value in sorted(found)]


# --- blocks ------------------------------------------------------------------------------------------------------


def placed_blocks(store: Store, page_id: int, version_id: int) -> list[sqlite3.Row]:
    """Every block of a version with its area, in area (byte order) then position order."""
    return store.all(
        "SELECT p.area, p.position, b.id, b.type, b.record FROM placements p JOIN blocks b ON b.id = p.block_id"
        " WHERE p.page_id = ? AND p.version_id = ? ORDER BY p.area, p.position",
        page_id,
        version_id,
    )


def ensure_area(store: Store, page_id: int, area: str) -> None:
    store.db.execute("INSERT OR IGNORE INTO areas (page_id, handle) VALUES (?, ?)", (page_id, area))


def area_exists(store: Store, page_id: int, area: str) -> bool:
    return store.one("SELECT 1 FROM areas WHERE page_id = ? AND handle = ?", page_id, area) is not None


def add_block(
    store: Store, page_id: int, area: str, block_type: str, record: dict[str, str] | None, ts: int
) -> tuple[int, sqlite3.Row]:
    """Append a block to ``area`` in the page's draft; returns the new block id and the draft."""
    version = version_to_modify(store, page_id, ts, from_live=True)
    ensure_area(store, page_id, area)
    row = store.one(
        "SELECT MAX(position) AS m FROM placements WHERE page_id = ? AND version_id = ? AND area = ?",
        page_id,
        version["id"],
        area,
    )
    position = int(row["m"] if row and row["m"] is not None else 0) + 1
    cursor = store.db.execute(
        "INSERT INTO blocks (type, record) VALUES (?, ?)", (block_type, None if record is None else dumps(record))
    )
    block_id = int(cursor.lastrowid or 0)
    store.db.execute(
        "INSERT INTO placements (page_id, version_id, area, position, block_id) VALUES (?, ?, ?, ?, ?)",
        (page_id, version["id"], area, position, block_id),
    )
    return block_id, version


def add_orphan(store: Store, page_id: int, block_type: str, ts: int) -> int:
    """What a failed add leaves behind: the page's draft (created if needed) and a consumed block id whose block
    has no record and is placed nowhere."""
    version_to_modify(store, page_id, ts, from_live=True)
    cursor = store.db.execute("INSERT INTO blocks (type, record) VALUES (?, NULL)", (block_type,))
    block_id = int(cursor.lastrowid or 0)
    store.db.execute("INSERT INTO orphan_blocks (block_id) VALUES (?)", (block_id,))
    return block_id


def is_orphan(store: Store, block_id: int) -> bool:
    return store.one("SELECT 1 FROM orphan_blocks WHERE block_id = ?", block_id) is not None


def block_in_version(store: Store, page_id: int, version_id: int, area: str, block_id: int) -> sqlite3.Row | None:
    return store.one(
        "SELECT b.id, b.type, b.record FROM placements p JOIN blocks b ON b.id = p.block_id"
        " WHERE p.page_id = ? AND p.version_id = ? AND p.area = ? AND p.block_id = ?",
        page_id,
        version_id,
        area,
        block_id,
    )


def update_block(
    store: Store, page_id: int, area: str, block_id: int, record: dict[str, str] | None, ts: int
) -> tuple[int, sqlite3.Row]:
    """Replace a block's record in the draft; returns the (possibly new) block id and the draft."""
    version = version_to_modify(store, page_id, ts)
    shared = store.one(
        "SELECT 1 FROM placements WHERE block_id = ? AND NOT (page_id = ? AND version_id = ?) LIMIT 1",
        block_id,
        page_id,
        version["id"],
    )
    encoded = None if record is None else dumps(record)
    if shared is None:
        store.db.execute("UPDATE blocks SET record = ? WHERE id = ?", (encoded, block_id))
        return block_id, version
    block = store.one("SELECT type FROM blocks WHERE id = ?", block_id)
    assert block is not None
    cursor = store.db.execute("INSERT INTO blocks (type, record) VALUES (?, ?)", (block["type"], encoded))
    new_id = int(cursor.lastrowid or 0)
    store.db.execute(
        "UPDATE placements SET block_id = ? WHERE page_id = ? AND version_id = ? AND area = ? AND block_id = ?",
        (new_id, page_id, version["id"], area, block_id),
    )
    return new_id, version


def remove_block(store: Store, page_id: int, area: str, block_id: int, ts: int) -> sqlite3.Row:
    """Take a block out of the draft (other versions keep it); returns the draft."""
    version = version_to_modify(store, page_id, ts)
    if store.one(
        "SELECT 1 FROM placements WHERE block_id = ? AND NOT (page_id = ? AND version_id = ?) LIMIT 1",
        block_id,
        page_id,
        version["id"],
    ):
        # The server copies a block the draft shares with other versions before deleting the copy: a block id is
        # used up (blocks.jsonl: 164 → 166 around batch.op.delete_block_unapproved).
        store.db.execute("DELETE FROM blocks WHERE id = ?", (_new_block(store, "deleted copy", None),))
    store.db.execute(
        "DELETE FROM placements WHERE page_id = ? AND version_id = ? AND area = ? AND block_id = ?",
        (page_id, version["id"], area, block_id),
    )
    if store.one("SELECT 1 FROM placements WHERE block_id = ? LIMIT 1", block_id) is None:
        store.db.execute("DELETE FROM blocks WHERE id = ?", (block_id,))
    return version


def _new_block(store: Store, block_type: str, encoded: str | None) -> int:
    cursor = store.db.execute("INSERT INTO blocks (type, record) VALUES (?, ?)", (block_type, encoded))
    return int(cursor.lastrowid or 0)


def delete_block_everywhere(store: Store, block_id: int) -> None:
    store.db.execute("DELETE FROM placements WHERE block_id = ?", (block_id,))
    store.db.execute("DELETE FROM orphan_blocks WHERE block_id = ?", (block_id,))
    store.db.execute("DELETE FROM blocks WHERE id = ?", (block_id,))
