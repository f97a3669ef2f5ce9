"""The site ``blocks.jsonl`` was recorded on, rebuilt as a sandbox seed (see ``replay.py`` for the replay itself).

The recording shows the sample site (``atomik_full``) through the API: every page with its blocks and attributes
(``batch.list.before`` lists the whole site with ``includes=areas,custom_attributes`` before anything was changed),
the 36 sample files with their UUIDs, folders and storage prefixes, and — from the probe of ``{CCM:FID_DL_1…43}`` —
the numeric id behind each file. Block values are read back in export form; the seed stores them the way the site
stores them (numeric file ids, page ids, page-type and folder ids), so that the sandbox's export gives the recorded
values back. The two files the recorder uploads get their recorded UUIDs and prefixes (``uploads``), and the ids of
created pages and blocks start where the recording's did.
"""

from __future__ import annotations

import contextlib
import re
from typing import Any

from cmssync.emulator.blocktypes import BLOCK_TYPES
from cmssync.emulator.catalog import PAGE_TYPE_IDS
from tests.emulator.replay import PREFIX, TRANSCRIPT
from tests.emulator.replay_areas import sub_area_owners

BLOCKS = TRANSCRIPT.with_name("blocks.jsonl")
BLOCKS_BASE = "http://127.0.0.1:8091"
FIRST_CREATED_BLOCK = 154
#: The folder the sample ``dummy.pdf`` is in; the document library block lists ``{ccm:export:filefolder:/Documents}``.
DOCUMENTS_FOLDER = 8

_EXPORT_FILE = re.compile(r'\{ccm:export:file:(\d+):([^}]+)\}">(\d+)<')


def _step(exchanges: list[dict[str, Any]], step: str) -> dict[str, Any]:
    return next(e for e in exchanges if e["step"] == step)


def _url_prefix(url: str) -> str:
    return url.split("/application/files/")[1].rsplit("/", 1)[0]


def blocks_site_seed(
    exchanges: list[dict[str, Any]],
    *,
    site_step: str = "batch.list.before",
    first_block: int = FIRST_CREATED_BLOCK,
    owned_sub_areas: bool = False,
) -> dict[str, Any]:
    """A seed with the recorded site as it was before the recorder changed anything (``site_step`` lists it).

    Folder names come from the recording's folder probe (``setup.probe_folder_ids.N``: ``document_library.folderID
    = N`` read back as ``{ccm:export:filefolder:/path}``) when it has one; tree nodes the probe names ``/`` are extra
    roots, and the group nodes (``/Guest``…) hang below the first of them. With ``owned_sub_areas`` each container
    and layout renders its sub-areas (``replay_areas.sub_area_owners``), so their blocks show on the public page.
    """
    uploaded = {
        e["response"]["body"]["data"]["id"]: e["response"]["body"]["data"]
        for e in exchanges
        if e["request"]["method"] == "POST" and e["request"]["path"] == PREFIX + "/files"
    }
    probe = _step(exchanges, "setup.probe_numeric_file_ids")["response"]["body"]["data"]["value"]["content"]
    numeric = {(prefix, name): int(n) for prefix, name, n in _EXPORT_FILE.findall(probe)}
    listed = _step(exchanges, "setup.files")["response"]["body"]["data"]
    files = []
    for f in listed:
        if f["id"] in uploaded:
            continue
        prefix = _url_prefix(f["url"])
        files.append(
            {
                "id": numeric[(prefix.replace("/", ""), f["title"])],
                "uuid": f["id"],
                "filename": f["title"],
                "folder": f["folder"],
                "prefix": prefix,
                **({"png": [4, 4]} if f["extension"] == "png" else {"text": "sample " * 8}),
            }
        )
    files.sort(key=lambda f: f["id"])
    site = _step(exchanges, site_step)["response"]["body"]["data"]
    pages: dict[int, dict[str, Any]] = {}
    for page in site:
        if page["id"] < 260:
            pages.setdefault(page["id"], page)
    paths = {int(p["id"]): p["path"] or "" for p in pages.values()}
    probed = _probed_folders(exchanges)
    folders = sorted({int(f["folder"]) for f in files} - {7})
    converter = _Stored(
        numeric_by_name={(p, n): i for (p, n), i in numeric.items()},
        paths=paths,
        folders={path: n for n, path in probed.items()} or {"/Documents": DOCUMENTS_FOLDER},
    )
    return {
        "site": {"name": "Concrete Real Test"},
        "folders": _seed_folders(probed)
        or [
            {"id": 7, "name": "File Manager"},
            *({"id": f, "name": "Documents" if f == DOCUMENTS_FOLDER else f"folder {f}", "parent": 7} for f in folders),
        ],
        "pages": [_seed_page(page, converter, owned_sub_areas) for page in sorted(pages.values(), key=_depth)],
        "files": files,
        "uploads": [
            {"filename": f["title"], "uuid": f["id"], "prefix": _url_prefix(f["url"])} for f in uploaded.values()
        ],
        "next_ids": {"blocks": first_block},
    }


def _probed_folders(exchanges: list[dict[str, Any]]) -> dict[int, str]:
    found: dict[int, str] = {}
    for exchange in exchanges:
        if exchange["step"].startswith("setup.probe_folder_ids."):
            value = exchange["response"]["body"]["data"]["value"]["folderID"]
            found[int(exchange["step"].rsplit(".", 1)[1])] = re.fullmatch(r"\{ccm:export:filefolder:(.*)\}", value)[1]
    return found


def _seed_folders(probed: dict[int, str]) -> list[dict[str, Any]]:
    """The file manager's root (7) first, as seeds want it; other roots; then the named nodes under the root, except
    the group nodes (named like the built-in groups), which hang below the first other root."""
    if not probed:
        return []
    roots = [n for n, path in probed.items() if path == "/" and n != 7]
    groups = {"/Guest", "/Registered Users", "/Administrators"}
    named = [
        {"id": n, "name": path[1:], "parent": roots[0] if path in groups and roots else 7}
        for n, path in probed.items()
        if path != "/"
    ]
    return [{"id": 7, "name": "File Manager"}, *({"id": n, "name": f"root {n}"} for n in roots), *named]


def _depth(page: dict[str, Any]) -> tuple[int, int]:
    return ((page["path"] or "").count("/"), page["id"])


def _seed_page(page: dict[str, Any], converter: _Stored, owned_sub_areas: bool) -> dict[str, Any]:
    entry: dict[str, Any] = {
        "path": page["path"] or "/",
        "name": page["name"],
        "type": page["type"],
        "template": page["template"],
        "description": page["description"],
    }
    if page["id"] != 1:
        entry["id"] = page["id"]
    attributes: dict[str, Any] = {}
    for attribute in page["custom_attributes"]["data"]:
        value = attribute["value"]
        if attribute["type"] == "image_file":
            value = {"file": value["data"]["id"]}
        elif isinstance(value, dict) and "data" in value:
            value = value["data"]
        attributes[attribute["handle"]] = value
    if attributes:
        entry["attributes"] = attributes
    names = [area["name"] for area in page["areas"]["data"]]
    entry["areas"] = {}
    for area in page["areas"]["data"]:
        blocks = area["blocks"]["data"]
        owners: dict[int, list[int]] = {}
        # when the names do not say which container renders which sub-area, the sub-areas stay unrendered
        with contextlib.suppress(ValueError):
            owners = sub_area_owners(area["name"], blocks, names) if owned_sub_areas else {}
        entry["areas"][area["name"]] = [
            {
                "id": b["id"],
                "type": b["type"],
                "value": converter.record(b["type"], b["value"]),
                **({"instances": owners[b["id"]]} if b["id"] in owners else {}),
            }
            for b in blocks
        ]
    return entry


class _Stored:
    """Export forms back to what the site stores."""

    def __init__(
        self, numeric_by_name: dict[tuple[str, str], int], paths: dict[int, str], folders: dict[str, int]
    ) -> None:
        self.files = numeric_by_name
        self.pages = {path: page_id for page_id, path in paths.items()}
        self.folders = folders

    def record(self, block_type: str, value: Any) -> dict[str, Any]:
        if not isinstance(value, dict):
            return {}
        out = dict(value)
        kind = BLOCK_TYPES[block_type]
        for column, text in value.items():
            if column in (*kind.files, *kind.lenient_files):
                found = re.fullmatch(r"\{ccm:export:file:(\d+):(.+)\}", text)
                out[column] = str(self.files[(found.group(1), found.group(2))]) if found else "0"
            elif column in kind.pages:
                found = re.fullmatch(r"\{ccm:export:page:(.*)\}", text)
                out[column] = str(self.pages[found.group(1)]) if found else "0"
            elif column in kind.page_types:
                found = re.fullmatch(r"\{ccm:export:pagetype:(.+)\}", text)
                out[column] = str(PAGE_TYPE_IDS[found.group(1)]) if found else "0"
            elif column in kind.folders:
                found = re.fullmatch(r"\{ccm:export:filefolder:(.*)\}", text)
                out[column] = str(self.folders.get(found.group(1), 0)) if found else "0"
            elif column in kind.feeds:
                out[column] = "0"
        return out
