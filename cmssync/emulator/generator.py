"""``--generate pages=N,blocks=N,files=N,users=N[,rate=N]``: bulk rows for benchmarks and large-site tests.

N pages in sections of up to 100 children under home (``/section-1/page-1`` …), each with ``blocks`` content blocks in
``Main``; N small text files in the root folder; N users. Everything goes in with ``executemany`` inside the caller's
transaction, so 10,000 pages with 5 blocks each take about a second.

Dates: without ``rate`` every row has the same date (a bulk import within one second, where the lists' cursors skip
rows: concrete-api.md §13). ``rate=N`` dates the rows of each kind as if made N a second, the last one now — what a
site built through the API gets (a real one takes about 14 requests a second).
"""

from __future__ import annotations

import random
import uuid as uuidlib
from typing import Any

from cmssync.emulator import filestore, sitetree, userstore
from cmssync.emulator.store import Store, dumps


def parse_generate(spec: str) -> dict[str, int]:
    """``pages=1000,blocks=5`` → ``{"pages": 1000, "blocks": 5, "files": 0, "users": 0}``."""
    counts = {"pages": 0, "blocks": 0, "files": 0, "users": 0, "rate": 0}
    for part in filter(None, (p.strip() for p in spec.split(","))):
        key, sep, value = part.partition("=")
        if not sep or key.strip() not in counts or not value.strip().isdigit():
            raise ValueError(f"bad --generate part {part!r} (expected pages=N,blocks=N,files=N,users=N,rate=N)")
        counts[key.strip()] = int(value)
    return counts


GENERATED_TEXT = b"generated file\n"


def _max(store: Store, sql: str) -> int:
    row = store.db.execute(sql).fetchone()
    return int(row[0]) if row is not None and row[0] is not None else 0


def _dated(ts: int, total: int, rate: int) -> list[int]:
    """The dates of ``total`` rows made ``rate`` a second, the last at ``ts`` (all ``ts`` without a rate)."""
    return [ts - (total - 1 - n) // rate if rate else ts for n in range(total)]


def generate_site(store: Store, counts: dict[str, int], ts: int, rng: random.Random) -> None:
    """Bulk rows for benchmarks: sections of 100 pages under home, blocks per page, files, users."""
    db = store.db
    page_dates = _dated(ts, counts["pages"], counts["rate"])
    file_dates = _dated(ts, counts["files"], counts["rate"])
    user_dates = _dated(ts, counts["users"], counts["rate"])
    first = _max(store, "SELECT MAX(id) FROM pages") + 1
    order = _max(store, "SELECT MAX(display_order) FROM pages WHERE parent_id = 1")
    block_id = _max(store, "SELECT MAX(id) FROM blocks")
    pages: list[tuple[Any, ...]] = []
    versions: list[tuple[Any, ...]] = []
    areas: list[tuple[Any, ...]] = []
    blocks: list[tuple[Any, ...]] = []
    placements: list[tuple[Any, ...]] = []
    section = first
    for n in range(counts["pages"]):
        page_id = first + n
        if n % 100 == 0:
            section = page_id
            order += 1
            pages.append(
                (
                    page_id,
                    1,
                    f"section-{n // 100 + 1}",
                    f"/section-{n // 100 + 1}",
                    "page",
                    page_dates[n],
                    page_dates[n],
                    order,
                    sitetree.tiebreak("page", page_id),
                )
            )
            name = f"Section {n // 100 + 1}"
        else:
            handle = f"page-{n}"
            pages.append(
                (
                    page_id,
                    section,
                    handle,
                    f"/section-{n // 100 + 1}/{handle}",
                    "page",
                    page_dates[n],
                    page_dates[n],
                    n % 100,
                    sitetree.tiebreak("page", page_id),
                )
            )
            name = f"Generated Page {n}"
        versions.append((page_id, 1, name, "", "full", 1, 0, page_dates[n]))
        if counts["blocks"]:
            areas.append((page_id, "Main"))
        for position in range(1, counts["blocks"] + 1):
            block_id += 1
            blocks.append((block_id, "content", dumps({"content": f"<p>Block {position} of page {page_id}.</p>"})))
            placements.append((page_id, 1, "Main", position, block_id))
    db.executemany(
        "INSERT INTO pages (id, parent_id, handle, path, type, date_added, date_modified, display_order,"
        " tiebreak) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
        pages,
    )
    db.executemany(
        "INSERT INTO versions (page_id, id, name, description, template, is_approved, is_new,"
        " date_created) VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
        versions,
    )
    db.executemany("INSERT INTO areas VALUES (?, ?)", areas)
    db.executemany("INSERT INTO blocks (id, type, record) VALUES (?, ?, ?)", blocks)
    db.executemany("INSERT INTO placements VALUES (?, ?, ?, ?, ?)", placements)
    root = filestore.root_folder(store)
    files = [
        (
            str(uuidlib.UUID(int=rng.getrandbits(128), version=4)),
            f"generated-{n}.txt",
            f"generated-{n}.txt",
            root,
            file_dates[n],
            filestore.storage_prefix(rng),
            len(GENERATED_TEXT),
            GENERATED_TEXT,
            rng.randrange(2**31),
        )
        for n in range(counts["files"])
    ]
    db.executemany(
        "INSERT INTO files (uuid, filename, title, folder_id, date_added, prefix, size, content, tiebreak)"
        " VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
        files,
    )
    password = userstore.hash_password("generated-password")
    users = [
        (f"user{n}", f"user{n}@example.com", password, user_dates[n], user_dates[n], user_dates[n])
        for n in range(counts["users"])
    ]
    db.executemany(
        "INSERT INTO users (username, email, password, date_added, date_password_last_changed,"
        " date_last_updated) VALUES (?, ?, ?, ?, ?, ?)",
        users,
    )
