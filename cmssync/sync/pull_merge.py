"""What ``cmssync pull`` keeps of an existing page file: the site's values merged into what the file says.

Pull writes what the site holds, and leaves out what is empty there (no description, no blocks in an area, a
false boolean attribute). Written over an existing file, leaving a key out would change what the file *manages*:
``Sidebar: []`` means "managed, must stay empty", ``description: ""`` means "managed, empty"; without the key the
area or field is no longer managed and an editor's later addition would go unnoticed. So a key the file already
has is kept, with the site's (empty) value:

* ``description: ""`` and ``areas: {Name: []}`` when the site has nothing there;
* an attribute the site has empty keeps its handle: ``false`` for a boolean, ``""`` for a text, dropped otherwise
  (a number or date cannot be written empty); an attribute pull does not read (select, file, or not on the page's
  read) is left as the file has it;
* keys the site has no value for — ``id`` (pull refuses a file pinning another id before this), ``protect``,
  ``ignore``, ``on_conflict``, ``on_foreign_draft``, ``on_drift``, ``areas_owned``, ``publish_end_date`` — stay as
  written: they are the content's instructions, not the site's state. ``publish_end_date`` is not in the API's page
  read, so it is kept even though the site may differ (then the next plan shows it).

``type`` and ``template`` the site does not have are dropped (the site's truth; they matter only on creation).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from cmssync.content.blocktypes import block_type
from cmssync.plan.blocks import Add, AlignmentError, DesiredBlock, Keep, LiveBlock, align_area
from cmssync.plan.conflicts import field_matches
from cmssync.plan.page_form import DesiredPage
from cmssync.plan.snapshot import LivePage

CONTENT_ONLY_KEYS = (
    "id",
    "publish_end_date",
    "ignore",
    "protect",
    "on_conflict",
    "on_foreign_draft",
    "on_drift",
    "areas_owned",
)
"""Page keys the API does not read back: an existing file's value is kept as written."""


def keep_explicit(
    existing: Any, pulled: dict[str, Any], attribute_types: Mapping[str, str], pulled_types: frozenset[str]
) -> dict[str, Any]:
    """``pulled`` (a page's written form) with what ``existing`` (the file's plain data) states explicitly kept.

    ``attribute_types`` maps the handles of the page's read to their types; ``pulled_types`` are the types pull
    writes. Key order is ``pulled``'s with kept keys after; the writer keeps the file's own order anyway.
    """
    if not isinstance(existing, dict):
        return pulled
    merged = dict(pulled)
    for key in CONTENT_ONLY_KEYS:
        if key in existing and key not in merged:
            merged[key] = existing[key]
    if "description" in existing and "description" not in merged:
        merged["description"] = ""
    areas = existing.get("areas")
    if isinstance(areas, dict):
        kept_areas = dict(merged.get("areas", {}))
        for name in areas:
            kept_areas.setdefault(name, [])
        if kept_areas:
            merged["areas"] = kept_areas
    attributes = existing.get("attributes")
    if isinstance(attributes, dict):
        kept = dict(merged.get("attributes", {}))
        for handle, value in attributes.items():
            if handle in kept:
                continue
            kind = attribute_types.get(handle)
            if kind is None or kind not in pulled_types:
                kept[handle] = value  # not read by pull: the file's value stands
            elif isinstance(value, bool):
                kept[handle] = False
            elif isinstance(value, str):
                kept[handle] = ""
        if kept:
            merged["attributes"] = kept
    return merged


def merge_page(
    existing: dict[str, Any],
    site: dict[str, Any],
    desired: DesiredPage,
    live: LivePage,
    *,
    take_all: bool,
    unchanged: Callable[[str], bool] = lambda name: False,
    pending: list[str] | None = None,
) -> dict[str, Any]:
    """The page file ``existing`` (plain data) with the site's values (``site``, its written form after
    :func:`keep_explicit`) where they differ from what the file means, and the file's own text where they do not.

    Compared as the planner compares (``desired``: the file's desired form, ``live``: the page read): a field, an
    attribute or a block the site holds as the file says keeps the file's text — references, ``raw`` blocks,
    comments, key order, quoting; one the site holds otherwise takes the site's value. Keys, attributes and areas
    the file does not state are not managed and stay out, unless ``take_all`` (``pull --all``); an ``id`` the site
    needs pinned is always added.

    A difference the site did not make — ``unchanged(name)`` (a field, ``attributes.H`` or ``area:NAME``): the site
    still holds what cmssync last applied there — is a local edit not applied yet: the file keeps it, and its name
    goes to ``pending``.
    """
    merged = dict(existing)
    pending = pending if pending is not None else []
    for name, value in desired.fields.items():
        if name.startswith("attributes.") or field_matches(name, value, live):
            continue
        if unchanged(name):
            pending.append(name)
            continue
        if name in site:
            merged[name] = site[name]
        else:
            merged.pop(name, None)
    attributes = _merge_attributes(
        existing, site, desired, live, take_all=take_all, unchanged=unchanged, pending=pending
    )
    if attributes is not None:
        merged["attributes"] = attributes
    areas = existing.get("areas")
    if isinstance(areas, dict):
        merged["areas"] = {}
        for name, blocks in areas.items():
            merged["areas"][name] = _merge_area(
                blocks, site.get("areas", {}).get(name, []), desired.areas.get(name), live.blocks(name)
            )
            if merged["areas"][name] != blocks and unchanged(f"area:{name}"):
                merged["areas"][name] = blocks
                pending.append(f"area:{name}")
            if merged["areas"][name] is blocks:
                merged["areas"][name] = _unkept(
                    blocks, site.get("areas", {}).get(name, []), desired.areas.get(name), live.blocks(name)
                )
    for key, value in site.items():
        if key not in merged and (take_all or key == "id"):
            merged[key] = value
        elif key == "areas" and take_all:
            merged["areas"] = {**value, **merged.get("areas", {})}
    return merged


def _merge_attributes(
    existing: dict[str, Any],
    site: dict[str, Any],
    desired: DesiredPage,
    live: LivePage,
    *,
    take_all: bool,
    unchanged: Callable[[str], bool],
    pending: list[str],
) -> dict[str, Any] | None:
    local = existing.get("attributes")
    site_values = site.get("attributes", {})
    if not isinstance(local, dict):
        return dict(site_values) if take_all and site_values else None
    merged = dict(local)
    for handle in local:
        name = f"attributes.{handle}"
        if name not in desired.fields or field_matches(name, desired.fields[name], live):
            continue
        if unchanged(name):
            pending.append(name)
            continue
        if handle in site_values:
            merged[handle] = site_values[handle]
        else:
            del merged[handle]
    if take_all:
        merged = {**site_values, **merged}
    return merged


def _merge_area(
    local: Any, site: list[Any], desired: list[DesiredBlock] | None, live: tuple[LiveBlock, ...]
) -> list[Any]:
    """The file's blocks where the live area holds them as the file says, the site's (``site``: one item per live
    block) elsewhere, in the site's order."""
    if not isinstance(local, list) or desired is None or len(desired) != len(local) or len(site) != len(live):
        return site
    try:
        alignment = align_area(live, desired)
    except AlignmentError:
        return site
    if not alignment.changed:
        return local
    position = {block.id: index for index, block in enumerate(live)}
    return [
        local[op.index] if isinstance(op, Keep) else site[position[op.live_id]]
        for op in alignment.ops
        if not isinstance(op, Add)
    ]


def _unkept(local: Any, site: list[Any], desired: list[DesiredBlock] | None, live: tuple[LiveBlock, ...]) -> Any:
    """``local`` with each placeholder of a type cmssync does not model replaced by the site's block where pull now
    writes it as content (``cmssync probe-block-type`` found the type symmetric since the file was written); never
    an edit of the file's own."""
    if not isinstance(local, list) or not any(_unmodelled_placeholder(block) for block in local):
        return local
    if desired is None or len(desired) != len(local) or len(site) != len(live):
        return local
    try:
        alignment = align_area(live, desired)
    except AlignmentError:
        return local
    position = {block.id: index for index, block in enumerate(live)}
    out = list(local)
    for op in alignment.ops:
        if isinstance(op, Keep) and _unmodelled_placeholder(local[op.index]):
            taken = site[position[op.live_id]]
            if isinstance(taken, dict) and "keep" not in taken:
                out[op.index] = taken
    return out


def _unmodelled_placeholder(block: Any) -> bool:
    kept = block.get("keep") if isinstance(block, dict) else None
    return isinstance(kept, dict) and block_type(str(kept.get("type"))) is None
