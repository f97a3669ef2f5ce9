"""Pages as a tree: creation with Concrete's handles and paths, the trash can, children in sitemap order.

``POST /pages`` creates an approved first version (``date_approved`` stays null, as recorded), the handle is the
urlified name (Concrete's excluded words dropped: ``Freshen up your website`` → ``freshen-your-website``) made unique
among the siblings with ``-1``, ``-2``… — a name made only of excluded words gets the page id (``Up`` →
``/section/273``) — and the path is the parent's path plus the handle (all recorded in ``blocks.jsonl``, ``handles.*``).
Seeded pages keep the handle their path gives, words and all (``freshen-up-your-website``).
Renaming a page later does not change its path. Deleting moves the page and its descendants to the trash
(``/!trash/…``); the home page is never deleted.
"""

from __future__ import annotations

import sqlite3
import zlib
from typing import Any

from cmssync.emulator import slugs, versioning
from cmssync.emulator.store import Store

HOME_PAGE_ID = 1
TRASH_PREFIX = "/!trash"


def tiebreak(kind: str, object_id: int | str) -> int:
    """A fixed pseudo-random rank for rows whose sort keys tie (the real ORDER BY has no tiebreak column)."""
    return zlib.crc32(f"{kind}:{object_id}".encode()) & 0x7FFFFFFF


def get_page(store: Store, page_id: int) -> sqlite3.Row | None:
    return store.one("SELECT * FROM pages WHERE id = ?", page_id)


def unique_handle(store: Store, parent_id: int, handle: str) -> str:
    taken = {r["handle"] for r in store.all("SELECT handle FROM pages WHERE parent_id = ?", parent_id)}
    if handle not in taken:
        return handle
    n = 1
    while f"{handle}-{n}" in taken:
        n += 1
    return f"{handle}-{n}"


def create_page(
    store: Store,
    *,
    parent_id: int | None,
    name: str,
    handle_source: str,
    page_type: str,
    template: str,
    ts: int,
    description: str = "",
    attributes: dict[str, Any] | None = None,
    page_id: int | None = None,
    from_seed: bool = False,
    handle: str | None = None,
) -> int:
    """Insert a page with an approved version 1; returns its id.

    ``handle`` is taken verbatim (seeds: a site's existing handles may hold words generated handles drop);
    otherwise it is made from ``handle_source``, and a name without a usable word gets the page id as its handle.
    """
    parent_path = ""
    if parent_id is None:
        handle, path = "", None
    else:
        parent = get_page(store, parent_id)
        assert parent is not None
        parent_path = parent["path"] or ""
        if handle is None:
            generated = slugs.urlify(handle_source)
            handle = unique_handle(store, parent_id, generated) if generated else ""
        path = f"{parent_path}/{handle}"
    row = store.one("SELECT MAX(display_order) AS m FROM pages WHERE parent_id IS ?", parent_id)
    order = int(row["m"] if row and row["m"] is not None else -1) + 1
    cursor = store.db.execute(
        "INSERT INTO pages (id, parent_id, handle, path, type, date_added, date_modified, display_order)"
        " VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
        (page_id, parent_id, handle, path, page_type, ts, ts, order),
    )
    new_id = int(cursor.lastrowid or 0)
    store.db.execute("UPDATE pages SET tiebreak = ? WHERE id = ?", (tiebreak("page", new_id), new_id))
    if parent_id is not None and not handle:
        store.db.execute(
            "UPDATE pages SET handle = ?, path = ? WHERE id = ?", (str(new_id), f"{parent_path}/{new_id}", new_id)
        )
    store.db.execute(
        "INSERT INTO versions (page_id, id, name, description, template, is_approved, is_new, date_created)"
        " VALUES (?, 1, ?, ?, ?, 1, 0, ?)",
        (new_id, name, description, template, ts),
    )
    if attributes:
        versioning.set_attributes(store, new_id, 1, attributes, from_seed=from_seed)
    return new_id


def place_type_defaults(store: Store, page_id: int, page_type: str, template: str) -> None:
    """Place the default blocks of a page type (for this template) on a new page, as Concrete does on creation:
    the blocks of the type's defaults page (a system page without a path, seeded with that type and template),
    aliased into version 1 (an update then duplicates them, see ``versioning``) — except the composer's output
    blocks, which stand for what the composer writes and are not placed (``type-defaults.jsonl``)."""
    defaults = store.one(
        "SELECT p.id, v.id AS version_id FROM pages p JOIN versions v ON v.page_id = p.id AND v.is_approved = 1"
        " WHERE p.parent_id IS NULL AND p.id != ? AND p.type = ? AND v.template = ? ORDER BY p.id LIMIT 1",
        HOME_PAGE_ID,
        page_type,
        template,
    )
    if defaults is None:
        return
    rows = store.all(
        "SELECT p.area, p.position, p.block_id FROM placements p JOIN blocks b ON b.id = p.block_id"
        " WHERE p.page_id = ? AND p.version_id = ? AND b.type != 'core_page_type_composer_control_output'"
        " ORDER BY p.area, p.position",
        defaults["id"],
        defaults["version_id"],
    )
    for row in rows:
        store.db.execute("INSERT OR IGNORE INTO areas (page_id, handle) VALUES (?, ?)", (page_id, row["area"]))
        store.db.execute(
            "INSERT INTO placements VALUES (?, 1, ?, ?, ?)", (page_id, row["area"], row["position"], row["block_id"])
        )


def touch(store: Store, page_id: int, ts: int) -> None:
    store.db.execute("UPDATE pages SET date_modified = ? WHERE id = ?", (ts, page_id))


def move_to_trash(store: Store, page_id: int, ts: int) -> None:
    """Move a page and its descendants to the trash (their paths gain the ``/!trash`` prefix)."""
    todo = [page_id]
    while todo:
        current = todo.pop()
        page = get_page(store, current)
        if page is None or page["in_trash"]:
            continue
        store.db.execute(
            "UPDATE pages SET in_trash = 1, path = ?, date_modified = ? WHERE id = ?",
            (TRASH_PREFIX + (page["path"] or ""), ts, current),
        )
        todo.extend(r["id"] for r in store.all("SELECT id FROM pages WHERE parent_id = ?", current))


NOT_SYSTEM = (
    "(type != '' OR id IN (SELECT home_page_id FROM sites)) AND (path IS NOT NULL OR id = 1)"
    " AND (path IS NULL OR path NOT LIKE '/!%')"
)
"""SQL: not a system page. The page list and children lists leave out (stacks.jsonl ``discover.*``) single and
dashboard pages (type false), page-type defaults (no path) and whatever sits under ``/!…`` (``/!stacks``, its
stacks, ``/!trash``, ``/!drafts``); a read by id shows them all. Another site's home has no type either but is
listed (sites.jsonl ``list.second_host.*``)."""


def children(store: Store, parent_id: int) -> list[sqlite3.Row]:
    return store.all(
        f"SELECT * FROM pages WHERE parent_id = ? AND in_trash = 0 AND {NOT_SYSTEM} ORDER BY display_order, id",
        parent_id,
    )
