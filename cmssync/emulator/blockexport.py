"""``BlockController::export``: a stored block record as every API read shows it (see :mod:`.blocktypes`).

Id columns become export forms (files, pages, page types, file folders), content values go through
``LinkAbstractor::export`` (:func:`cmssync.emulator.markup.export`), multi-record entries are left out, and the image
block adds the two link-chooser keys its export computes (``imageLink__which`` and ``imageLink_<which>``).
"""

from __future__ import annotations

from typing import Any

from cmssync.emulator import markup
from cmssync.emulator.blocktypes import (
    BLOCK_COLUMNS,
    EXPORT_FEED_COLUMNS,
    EXPORT_FILE_COLUMNS,
    EXPORT_FILEFOLDER_COLUMNS,
    EXPORT_PAGE_COLUMNS,
    EXPORT_PAGETYPE_COLUMNS,
)
from cmssync.emulator.catalog import PAGE_TYPE_IDS
from cmssync.emulator.store import Store

_PAGE_TYPE_HANDLES = {type_id: handle for handle, type_id in PAGE_TYPE_IDS.items()}


def export_page(store: Store, value: str) -> str:
    page_id = markup.leading_number(value)
    path = markup.page_path(store, page_id) if page_id else None
    return "" if path is None else f"{{ccm:export:page:{path}}}"


def export_page_type(value: str) -> str:
    handle = _PAGE_TYPE_HANDLES.get(markup.leading_number(value))
    return f"{{ccm:export:pagetype:{handle}}}" if handle else ""


def folder_path(store: Store, folder_id: int) -> str | None:
    """``/A/B`` of a file-manager folder below the root (``""`` for the root), ``None`` when there is none."""
    names: list[str] = []
    row = store.one("SELECT * FROM folders WHERE id = ?", folder_id)
    if row is None:
        return None
    while row is not None and row["parent_id"] is not None:
        names.insert(0, str(row["name"]))
        row = store.one("SELECT * FROM folders WHERE id = ?", row["parent_id"])
    return "/" + "/".join(names) if names else ""


def export_folder(store: Store, value: str) -> str:
    folder_id = markup.leading_number(value)
    path = folder_path(store, folder_id) if folder_id else None
    return "" if path is None else f"{{ccm:export:filefolder:{path}}}"


def export_record(store: Store, block_type: str, record: dict[str, str] | None) -> Any:
    """The ``value`` of a block in API answers (``[]`` for types without an exported table)."""
    if record is None:
        return []
    out: dict[str, str] = {}
    order = [column for column, _ in BLOCK_COLUMNS.get(block_type) or ()]
    for column in [*order, *sorted(record.keys() - set(order))]:
        if column.startswith("@") or column not in record:
            continue
        value = record[column]
        if column in EXPORT_FILE_COLUMNS.get(block_type, ()):
            value = markup.export_file(store, value) if markup.leading_number(value) else ""
        elif column in EXPORT_PAGE_COLUMNS.get(block_type, ()):
            value = export_page(store, value)
        elif column in EXPORT_PAGETYPE_COLUMNS.get(block_type, ()):
            value = export_page_type(value)
        elif column in EXPORT_FILEFOLDER_COLUMNS.get(block_type, ()):
            value = export_folder(store, value)
        elif column in EXPORT_FEED_COLUMNS.get(block_type, ()):
            value = ""
        elif block_type == "content" and column == "content":
            value = markup.export(value, store)
        out[column] = value
    if block_type == "image":
        which = "none"
        if record.get("externalLink"):
            which = "external"
        elif markup.leading_number(record.get("internalLinkCID", "")):
            which = "internal"
        elif markup.leading_number(record.get("fileLinkID", "")):
            which = "file"
        target = {"none": "", "external": record.get("externalLink", "")}.get(which)
        out["imageLink__which"] = which
        out[f"imageLink_{which}"] = (
            target if target is not None else out.get("internalLinkCID" if which == "internal" else "fileLinkID", "")
        )
    return out
