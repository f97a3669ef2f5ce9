"""``BlockController::export``: a stored block record as every API read shows it (see :mod:`.blocktypes`).

Id columns become export forms (files, pages, page types, file folders), content values go through
``LinkAbstractor::export`` (:func:`cmssync.emulator.markup.export`), multi-record entries are left out, and the image
block adds the two link-chooser keys its export computes (``imageLink__which`` and ``imageLink_<which>``).
"""

from __future__ import annotations

from typing import Any

from cmssync.emulator import markup, pagetypes
from cmssync.emulator.blocktypes import BLOCK_TYPES
from cmssync.emulator.phperror import PhpError
from cmssync.emulator.store import Store


def export_page(store: Store, value: str) -> str:
    page_id = markup.leading_number(value)
    path = markup.page_path(store, page_id) if page_id else None
    return "" if path is None else f"{{ccm:export:page:{path}}}"


def export_page_type(store: Store, value: str) -> str:
    """``{ccm:export:pagetype:<handle>}``; ``""`` for 0; an id no page type has is an uncaught PHP error
    (block-types.jsonl ``setup.probe_page_type_ids.10``)."""
    number = markup.leading_number(value)
    if not number:
        return ""
    handle = pagetypes.handle_of(store, number)
    if handle is None:
        raise PhpError("Error", "Call to a member function getPageTypeHandle() on null")
    return f"{{ccm:export:pagetype:{handle}}}"


def folder_path(store: Store, folder_id: int) -> str | None:
    """``/A/B`` of a file-manager folder below the root (``/`` for a root), ``None`` when there is none."""
    names: list[str] = []
    row = store.one("SELECT * FROM folders WHERE id = ?", folder_id)
    if row is None:
        return None
    while row is not None and row["parent_id"] is not None:
        names.insert(0, str(row["name"]))
        row = store.one("SELECT * FROM folders WHERE id = ?", row["parent_id"])
    return "/" + "/".join(names)


def export_folder(store: Store, value: str) -> str:
    folder_id = markup.leading_number(value)
    path = folder_path(store, folder_id) if folder_id else None
    return "" if path is None else f"{{ccm:export:filefolder:{path}}}"


def export_record(store: Store, block_type: str, record: dict[str, str] | None) -> Any:
    """The ``value`` of a block in API answers (``[]`` for types without an exported table)."""
    if record is None:
        return []
    kind = BLOCK_TYPES[block_type]
    if not kind.exported:
        return []
    out: dict[str, str] = {}
    order = [column for column, _ in kind.columns or ()]
    for column in [*order, *sorted(record.keys() - set(order))]:
        if column.startswith("@") or column not in record:
            continue
        value = record[column]
        if column in kind.files or column in kind.lenient_files:
            value = markup.export_file(store, value) if markup.leading_number(value) else ""
        elif column in kind.pages:
            value = export_page(store, value)
        elif column in kind.page_types:
            value = export_page_type(store, value)
        elif column in kind.folders:
            value = export_folder(store, value)
        elif column in kind.feeds:
            value = ""
        elif block_type == "content" and column == "content":
            value = markup.export(value, store)
        out[column] = value
    if block_type == "image":
        out.update(_image_link(record))
    return out


def _image_link(record: dict[str, str]) -> dict[str, str]:
    """The image block's export adds its link chooser: ``imageLink__which`` and ``imageLink_<which>`` (the page or
    file id as stored, the URL; ``""`` for none)."""
    if markup.leading_number(record.get("internalLinkCID", "")):
        return {"imageLink__which": "page", "imageLink_page": record["internalLinkCID"]}
    if markup.leading_number(record.get("fileLinkID", "")):
        return {"imageLink__which": "file", "imageLink_file": record["fileLinkID"]}
    if record.get("externalLink"):
        return {"imageLink__which": "external_url", "imageLink_external_url": record["externalLink"]}
    return {"imageLink__which": "none", "imageLink_none": ""}
