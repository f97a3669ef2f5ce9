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
  ``ignore``, ``on_conflict``, ``on_foreign_draft``, ``publish_end_date`` — stay as written: they are the
  content's instructions, not the site's state. ``publish_end_date`` is not in the API's page read, so it is kept
  even though the site may differ (then the next plan shows it).

``type`` and ``template`` the site does not have are dropped (the site's truth; they matter only on creation).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

CONTENT_ONLY_KEYS = ("id", "publish_end_date", "ignore", "protect", "on_conflict", "on_foreign_draft")
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
