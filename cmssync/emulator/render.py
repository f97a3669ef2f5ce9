"""Fractal transformers: database rows → the JSON objects of the API, in either dialect.

``concrete`` wraps every include in ``{"data": …}`` (``"version": {"data": {…}}``), writes ``is_approved`` as 0/1,
page/user/file dates as ATOM and version dates as ``Y-m-d H:i:s``. ``documented`` serves the same data bare
(``"version": {…}``), with ``is_approved`` as a boolean and every date as ``YYYY-MM-DD``.
"""

from __future__ import annotations

import re
import sqlite3
from collections.abc import Iterable
from collections.abc import Set as AbstractSet
from dataclasses import dataclass
from typing import Any

from cmssync.emulator import blockexport, blockvalues, layouts, locales, markup, sites, timefmt, versioning
from cmssync.emulator.blocktypes import file_columns
from cmssync.emulator.catalog import FILE_ATTRIBUTE_KEYS, FILE_TYPE_NAMES
from cmssync.emulator.store import Store, loads

LOCALE = locales.DEFAULT_LOCALE
DEFAULT_AVATAR = "/concrete/images/avatar_none.png"
_FILE_COLUMNS = file_columns()
_FILE_URL = re.compile(r"/application/files/(\d{4}/\d{4}/\d{4})/([^\"'\s<>?#]+)")


def parse_includes(query: Iterable[tuple[str, str]]) -> set[str]:
    """``includes=a,b`` (or ``includes[]=a``); dotted names also include their parent."""
    names: set[str] = set()
    for key, value in query:
        if key in ("includes", "includes[]"):
            for name in value.split(","):
                name = name.strip()
                if name:
                    names.add(name)
                    parts = name.split(".")
                    names.update(".".join(parts[: i + 1]) for i in range(len(parts)))
    return names


@dataclass
class Renderer:
    store: Store
    dialect: str
    base_url: str

    @property
    def documented(self) -> bool:
        return self.dialect == "documented"

    def wrap(self, value: Any) -> Any:
        """An include as Fractal's DataArraySerializer nests it (bare in the documented dialect)."""
        return value if self.documented else {"data": value}

    def date(self, ts: int | None) -> str | None:
        return timefmt.calendar(ts) if self.documented else timefmt.atom(ts)

    def version_date(self, ts: int | None) -> str | None:
        return timefmt.calendar(ts) if self.documented else timefmt.db(ts)

    # --- pages -------------------------------------------------------------------------------------------------

    def version(self, row: sqlite3.Row | None) -> dict[str, Any]:
        if row is None:
            return {
                "id": None,
                "is_approved": None,
                "date_created": None,
                "date_approved": None,
                "publish_end_date": None,
            }
        approved: Any = bool(row["is_approved"]) if self.documented else int(row["is_approved"])
        return {
            "id": int(row["id"]),
            "is_approved": approved,
            "date_created": self.version_date(row["date_created"]),
            "date_approved": self.version_date(row["date_approved"]),
            "publish_end_date": self.version_date(row["publish_end_date"]),
        }

    def page(
        self, page: sqlite3.Row, version: sqlite3.Row | None, includes: AbstractSet[str] = frozenset()
    ) -> dict[str, Any]:
        # A page whose live version was denied has no version: name null, template false (recorded).
        out: dict[str, Any] = {
            "id": int(page["id"]),
            "path": page["path"],
            "name": version["name"] if version is not None else None,
            "date_added": self.date(page["date_added"]),
            "date_last_updated": self.date(page["date_modified"]),
            "type": page["type"] or False,  # a system page has none
            "template": (version["template"] or False) if version is not None else False,
            "locale": locales.locale_of(self.store, page),
            "description": version["description"] if version is not None else "",
            "version": self.wrap(self.version(version)),
        }
        if version is None:
            includes = set()
        page_id = int(page["id"])
        if "custom_attributes" in includes:
            assert version is not None
            out["custom_attributes"] = self.wrap(self.page_attributes(page_id, int(version["id"])))
        if "areas" in includes or "files" in includes or "content" in includes:
            assert version is not None
            blocks = versioning.placed_blocks(self.store, page_id, int(version["id"]))
            if "areas" in includes:
                out["areas"] = self.wrap(self.areas(blocks, "areas.content" in includes, page_id))
            if "files" in includes:
                files = self.referenced_files(blocks, page_id, int(version["id"]))
                out["files"] = self.wrap([self.file(f) for f in files])
            if "content" in includes:
                raw = "".join(self.block_html(b, page_id) for b in blocks)
                raw = f'<div class="ccm-page page-type-{page["type"]}">{raw}</div>'
                out["content"] = self.wrap({"raw": raw, "content": blockvalues.clean_html(raw)})
        return out

    def page_attributes(self, page_id: int, version_id: int) -> list[dict[str, Any]]:
        out = []
        for av_id, kind, handle, value in versioning.listed_attributes(self.store, page_id, version_id):
            if kind == "image_file":
                row = self.store.one("SELECT * FROM files WHERE uuid = ?", value.get("file"))
                if row is None:
                    continue
                value = self.wrap(self.file(row))
            elif kind in ("select", "topics"):
                keys = ("id", "value", "display_value") if kind == "select" else ("id", "name", "path", "display_name")
                value = self.wrap([{k: option[k] for k in keys if k in option} for option in value])
            out.append({"id": av_id, "type": kind, "handle": handle, "value": value})
        return out

    def areas(self, blocks: list[sqlite3.Row], with_content: bool, page_id: int) -> list[dict[str, Any]]:
        grouped = layouts.by_area(blocks)
        out = []
        for name, members in grouped.items():
            area: dict[str, Any] = {"name": name, "blocks": self.wrap([self.block(b) for b in members])}
            if with_content:
                raw = layouts.area_html(self.store, name, grouped, lambda b: self.block_html(b, page_id))
                area["content"] = self.wrap({"raw": raw, "content": blockvalues.clean_html(raw)})
            out.append(area)
        return out

    def block(self, row: sqlite3.Row) -> dict[str, Any]:
        value = blockexport.export_record(self.store, row["type"], loads(row["record"]))
        return {"id": int(row["id"]), "type": row["type"], "value": value}

    def block_html(self, row: sqlite3.Row, page_id: int) -> str:
        """A placed block rendered (content placeholders expanded as the public page shows them); a stack display
        as the stack's approved version (:func:`layouts.stack_display_html`)."""
        if row["type"] == "core_stack_display":
            return layouts.stack_display_html(
                self.store, loads(row["record"]), page_id, lambda b: self.block_html(b, page_id), newest=False
            )
        return blockvalues.render_html(
            row["type"],
            loads(row["record"]),
            self.base_url,
            lambda text: markup.render(text, self.store, self.base_url, page_id),
            core_views=self.store.get_meta(blockvalues.BLOCK_VIEWS) == "core",
        )

    def referenced_files(self, blocks: list[sqlite3.Row], page_id: int, version_id: int) -> list[sqlite3.Row]:
        """Files a page version refers to: image attributes, numeric file columns and links in block values."""
        found: dict[int, sqlite3.Row] = {}
        for _, kind, _, value in versioning.listed_attributes(self.store, page_id, version_id):
            if kind == "image_file":
                row = self.store.one("SELECT * FROM files WHERE uuid = ?", value.get("file"))
                if row is not None:
                    found[int(row["num_id"])] = row
        for block in blocks:
            record = loads(block["record"]) or {}
            if block["type"] == "content":
                for num_id in markup.referenced_file_ids(record.get("content", ""), self.store):
                    row = self.store.one("SELECT * FROM files WHERE num_id = ?", num_id)
                    if row is not None:
                        found[num_id] = row
            for column, value in record.items():
                if column in _FILE_COLUMNS and value.isdigit():
                    row = self.store.one("SELECT * FROM files WHERE num_id = ?", int(value))
                    if row is not None:
                        found[int(row["num_id"])] = row
                for prefix, name in _FILE_URL.findall(value):
                    row = self.store.one("SELECT * FROM files WHERE prefix = ? AND filename = ?", prefix, name)
                    if row is not None:
                        found[int(row["num_id"])] = row
        return list(found.values())

    # --- files -------------------------------------------------------------------------------------------------

    def file_url(self, row: sqlite3.Row) -> str:
        return f"{self.base_url}/application/files/{row['prefix']}/{row['filename']}"

    def file(
        self, row: sqlite3.Row, *, exact_as_int: bool = False, includes: AbstractSet[str] = frozenset()
    ) -> dict[str, Any]:
        extension = row["filename"].rsplit(".", 1)[-1].lower() if "." in row["filename"] else ""
        size = int(row["size"])
        out: dict[str, Any] = {
            "id": row["uuid"],
            "title": row["title"],
            "description": row["description"],
            "tags": row["tags"],
            "url": self.file_url(row),
            "file_type": FILE_TYPE_NAMES.get(extension, extension.upper()),
            "extension": extension,
            "tracked_url": f"{self.base_url}/download_file/{row['uuid']}/0",
            "folder": int(row["folder_id"]),
            "date_added": self.date(row["date_added"]),
            # size.exact is a number only in the POST /files answer, a string everywhere else (recorded).
            "size": {"description": f"{size / 1024:,.2f} KB", "exact": size if exact_as_int else str(size)},
        }
        if "custom_attributes" in includes:
            out["custom_attributes"] = self.wrap(self.file_attributes(int(row["num_id"])))
        return out

    def file_attributes(self, file_id: int) -> list[dict[str, Any]]:
        rows = self.store.all("SELECT handle, av_id, value FROM file_attributes WHERE file_id = ?", file_id)
        rows.sort(key=lambda r: FILE_ATTRIBUTE_KEYS[r["handle"]].order)
        return [
            {
                "id": int(r["av_id"]),
                "type": FILE_ATTRIBUTE_KEYS[r["handle"]].type,
                "handle": r["handle"],
                "value": loads(r["value"]),
            }
            for r in rows
        ]

    # --- users, groups, sites ----------------------------------------------------------------------------------

    def user(self, row: sqlite3.Row, includes: AbstractSet[str] = frozenset()) -> dict[str, Any]:
        out: dict[str, Any] = {
            "id": int(row["id"]),
            "username": row["username"],
            "email": row["email"],
            "date_added": self.date(row["date_added"]),
            "status": row["status"],
            "total_logins": int(row["total_logins"]),
            "date_password_last_changed": self.date(row["date_password_last_changed"]),
            "date_last_updated": self.date(row["date_last_updated"]),
            "has_avatar": False,
            "avatar": DEFAULT_AVATAR,
            "last_login": int(row["last_login"]),
            "previous_login": int(row["previous_login"]),
            "timezone": row["timezone"],
            "language": row["language"],
        }
        if "groups" in includes:
            groups = self.store.all(
                "SELECT g.id, g.name FROM user_groups ug JOIN groups g ON g.id = ug.group_id"
                " WHERE ug.user_id = ? ORDER BY g.id",
                row["id"],
            )
            out["groups"] = self.wrap([self.group(g) for g in groups])
        if "custom_attributes" in includes:
            out["custom_attributes"] = self.wrap(self.user_attributes(int(row["id"])))
        return out

    def user_attributes(self, user_id: int) -> list[dict[str, Any]]:
        rows = self.store.all("SELECT handle, av_id, value FROM user_attributes WHERE user_id = ?", user_id)
        return [
            {"id": int(r["av_id"]), "type": "boolean", "handle": r["handle"], "value": loads(r["value"])}
            for r in rows
            if loads(r["value"])
        ]

    def group(self, row: sqlite3.Row) -> dict[str, Any]:
        return {"id": int(row["id"]), "name": row["name"]}

    def site(self, includes: AbstractSet[str], site_id: int = sites.DEFAULT_SITE_ID) -> dict[str, Any]:
        other = sites.get(self.store, site_id) if site_id != sites.DEFAULT_SITE_ID else None
        out: dict[str, Any] = (
            sites.describe(other)
            if other is not None
            else {
                "id": sites.DEFAULT_SITE_ID,
                "handle": sites.DEFAULT_HANDLE,
                "name": self.store.get_meta("site_name", "Sandbox Site"),
                "home_page_id": 1,
                "default_locale": LOCALE,
            }
        )
        if "locales" in includes:
            out["locales"] = self.wrap(sites.trees(other) if other is not None else locales.trees(self.store))
        if "custom_attributes" in includes:
            out["custom_attributes"] = self.wrap([])
        return out
