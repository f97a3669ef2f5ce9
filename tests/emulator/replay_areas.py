"""The sites ``subareas.jsonl`` and ``stacks.jsonl`` were recorded on, rebuilt as sandbox seeds from what the
recordings show (see ``replay.py`` for the replay itself).

Both were recorded on a freshly reset ``atomik_full`` site. ``subareas.jsonl`` shows the home page's and
``/about``'s children and ``/about/services`` with its areas; ``stacks.jsonl`` shows every page id from 1 up (system
pages, page-type defaults, stacks) and the areas of the home page and of the footer column it edits. Block values
are read in export form; the seed stores file columns as "no file" and page columns by id (the replay compares the
sample site's blocks by shape only).

The API does not say which layout or container renders which sub-area (``Main : 10 : Title``); the seed gives each
container the numbers of the sub-areas named after it in order: in an area, the n-th container block takes the n-th
number that has named areas (``Main : 10 : Title``), and the layouts share the bare numbers (``Main : 16``, a
column each) in equal runs. The replay's marker counts (the public page before and after the container is deleted)
check that choice.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

RECORDINGS = Path(__file__).resolve().parents[1] / "conformance" / "concrete-9.3.1"
SUBAREAS = RECORDINGS / "subareas.jsonl"
STACKS = RECORDINGS / "stacks.jsonl"
TYPE_DEFAULTS = RECORDINGS / "type-defaults.jsonl"
RECORDED_BASE = "http://127.0.0.1:8091"
TYPE_DEFAULTS_BASE = "http://127.0.0.1:8092"

_ID_EXPORT = re.compile(r"\{ccm:export:(file|pagetype|filefolder|pagefeed):[^}]*\}")
_PAGE_EXPORT = re.compile(r"\{ccm:export:page:([^}]*)\}")


def step(exchanges: list[dict[str, Any]], name: str) -> Any:
    """The ``data`` of the response of step ``name``."""
    return next(e for e in exchanges if e["step"] == name)["response"]["body"]["data"]


def subareas_seed(exchanges: list[dict[str, Any]]) -> dict[str, Any]:
    listed = [*step(exchanges, "setup.children.home"), *step(exchanges, "setup.children.about")]
    live = step(exchanges, "read.live")
    paths = {p["path"]: p["id"] for p in listed}
    pages = [{"path": "/", "name": "Home"}]
    for page in sorted(listed, key=_depth):
        entry = _entry(page)
        if page["id"] == live["id"]:
            entry["areas"] = _areas(live, paths)
        pages.append(entry)
    return {"site": {"name": "Concrete Real Test"}, "pages": pages}


def stacks_seed(exchanges: list[dict[str, Any]]) -> dict[str, Any]:
    read = [step(exchanges, "discover.home_areas"), step(exchanges, "read.live")]
    shown = step(exchanges, "read.live")["name"]  # the stack whose edit the public pages show
    return {"site": {"name": "Concrete Real Test"}, "pages": _probed_pages(exchanges, read), "global_areas": [shown]}


def type_defaults_seed(exchanges: list[dict[str, Any]]) -> dict[str, Any]:
    """Every probed page (system pages and page-type defaults included), the ``blog_entry`` defaults pages with the
    blocks their reads show (ids pinned: a created page gets those very blocks)."""
    read = [e["response"]["body"]["data"] for e in exchanges if e["step"].startswith("discover.defaults.")]
    return {"site": {"name": "Concrete Real Test"}, "pages": _probed_pages(exchanges, read)}


def _probed_pages(exchanges: list[dict[str, Any]], read: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Every page the recording's id probe found, parents first, with the areas of the pages in ``read``."""
    probed = [
        e["response"]["body"]["data"]
        for e in exchanges
        if e["step"].startswith("discover.probe.") and e["response"]["status"] == 200
    ]
    paths = {p["path"]: p["id"] for p in probed if p["path"]}
    areas_of = {page["id"]: page for page in read}
    pages = []
    for page in sorted(probed, key=_depth):
        entry = _entry(page)
        if page["id"] == 1:
            entry["path"] = "/"
        if page["id"] in areas_of:
            entry["areas"] = _areas(areas_of[page["id"]], paths)
        pages.append(entry)
    return pages


def _depth(page: dict[str, Any]) -> tuple[int, int]:
    return ((page["path"] or "").count("/"), page["id"])


def _entry(page: dict[str, Any]) -> dict[str, Any]:
    entry = {key: page[key] for key in ("path", "name", "type", "template", "description")}
    if page["id"] != 1:
        entry["id"] = page["id"]
    return entry


def _areas(page: dict[str, Any], paths: dict[str, int]) -> dict[str, list[dict[str, Any]]]:
    areas = {area["name"]: area["blocks"]["data"] for area in page["areas"]["data"]}
    seeded: dict[str, list[dict[str, Any]]] = {}
    for name, blocks in areas.items():
        owners = sub_area_owners(name, blocks, list(areas))
        seeded[name] = [
            {
                "id": b["id"],
                "type": b["type"],
                "value": _stored(b["value"], paths),
                **({"instances": owners[b["id"]]} if b["id"] in owners else {}),
            }
            for b in blocks
        ]
    return seeded


def sub_area_owners(area: str, blocks: list[dict[str, Any]], names: list[str]) -> dict[int, list[int]]:
    """Block id → the sub-area numbers it renders (see the module docstring)."""
    named: set[int] = set()
    bare: set[int] = set()
    head = area + " : "
    for name in names:
        if not name.startswith(head):
            continue
        rest = name[len(head) :].split(" : ")
        if rest[0].isdigit():
            (named if len(rest) > 1 else bare).add(int(rest[0]))
    containers = [b["id"] for b in blocks if b["type"] == "core_container"]
    grids = [b["id"] for b in blocks if b["type"] == "core_area_layout"]
    if len(containers) != len(named) or (grids and len(bare) % len(grids)) or (bare and not grids):
        raise ValueError(f"area {area!r}: cannot tell which of {containers + grids} render {sorted(named | bare)}")
    owners = {block: [number] for block, number in zip(containers, sorted(named), strict=True)}
    run = len(bare) // len(grids) if grids else 0
    for index, block in enumerate(grids):
        owners[block] = sorted(bare)[index * run : (index + 1) * run]
    return owners


def _stored(value: Any, paths: dict[str, int]) -> dict[str, Any]:
    if not isinstance(value, dict):
        return {}
    out = {}
    for key, text in value.items():
        if isinstance(text, str) and _ID_EXPORT.fullmatch(text):
            text = "0"
        elif isinstance(text, str) and (found := _PAGE_EXPORT.fullmatch(text)):
            text = str(paths.get(found.group(1), 0)) if found.group(1) else "1"  # the home page has no path
        out[key] = text
    return out
