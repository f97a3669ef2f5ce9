"""Areas as the theme renders them: layouts and containers with their sub-areas, and the theme's global areas.

A layout or container block renders areas of its own, which the API lists flat among the page's areas as
``<area> : <instance>[ : <name>]`` — ``Main : 16`` a layout column, ``Main : 10 : Title`` a container's area,
``Main : 10 : Body : 11 : Item 1`` a container inside it. The number is the layout's or container's instance, not
its block id, and nothing in the API ties the two. The sandbox keeps the tie (``sub_area_owners``: a block and the
instance numbers it renders, from the seed), so that a sub-area is shown only inside its container placed in the
version shown (subareas.jsonl: a block added into ``Main : 999 : Item 1`` is listed but never shown; after a layout
is deleted, its columns keep their blocks, take adds and updates, and are never shown again). The area a container
sits in renders the container's sub-areas inside it (``includes=areas.content`` of ``Main`` holds them); a sub-area
read on its own renders only its blocks.

Global areas: the theme shows the stacks named in the seed's ``global_areas`` on every page, in their **most
recent** version (stacks.jsonl: a stack's unapproved edit shows on the public pages at once).

Stack displays (``core_stack_display``, a stack placed in an area): the block renders the ``Main`` area of the stack
its ``stID`` names (the stack's version for the page's locale, if it has one), nothing for an id that is no stack.
The public page shows the stack's most recent version, the API's render (``includes=areas.content``) its approved
one (stack-displays.jsonl ``draft.*``).
"""

from __future__ import annotations

import sqlite3
from collections.abc import Callable, Iterable

from cmssync.emulator import locales, markup, versioning
from cmssync.emulator.store import Store, dumps, loads

GLOBAL_AREAS = "global_areas"
"""Meta key: the JSON list of the stack names the theme renders on every page."""
STACKS_PREFIX = "/!stacks/"


def is_sub_area(name: str) -> bool:
    parts = name.split(" : ")
    return len(parts) > 1 and parts[1].isdigit()


def own(store: Store, block_id: int, instances: Iterable[int]) -> None:
    """Record that a layout or container block renders the sub-areas numbered ``instances``."""
    for instance in instances:
        store.db.execute("INSERT OR IGNORE INTO sub_area_owners VALUES (?, ?)", (block_id, int(instance)))


def _instances(store: Store, block_id: int) -> list[int]:
    rows = store.all("SELECT instance FROM sub_area_owners WHERE block_id = ? ORDER BY instance", block_id)
    return [int(r["instance"]) for r in rows]


def _children(area: str, instance: int, names: Iterable[str]) -> list[str]:
    """The sub-areas of ``area`` that instance ``instance`` renders directly (deeper ones render inside them)."""
    head = f"{area} : {instance}"
    return sorted(n for n in names if n == head or (n.startswith(head + " : ") and not is_sub_area(n[len(head) + 3 :])))


def area_html(
    store: Store, area: str, by_area: dict[str, list[sqlite3.Row]], render: Callable[[sqlite3.Row], str]
) -> str:
    """An area's blocks rendered, each layout or container with the sub-areas it owns inside it."""
    parts = []
    for block in by_area.get(area, []):
        instances = _instances(store, int(block["id"]))
        if not instances:
            parts.append(render(block))
            continue
        inner = "".join(
            area_html(store, child, by_area, render)
            for instance in instances
            for child in _children(area, instance, by_area)
        )
        kind = str(block["type"]).replace("_", "-")
        parts.append(f'\n\n    <div class="ccm-block-{kind}">{inner}</div>\n')
    return "".join(parts)


def stack_display_html(
    store: Store, record: dict[str, str] | None, page_id: int, render: Callable[[sqlite3.Row], str], *, newest: bool
) -> str:
    """What a stack display on page ``page_id`` shows (see the module docstring): the stack's ``Main`` area, each
    block rendered by ``render``, in its most recent version (``newest``: the public page) or its approved one."""
    stack_id = markup.leading_number((record or {}).get("stID", ""))
    stack = store.one("SELECT id FROM pages WHERE id = ? AND type = 'core_stack' AND in_trash = 0", stack_id)
    page = store.one("SELECT * FROM pages WHERE id = ?", page_id)
    if stack is None or page is None:
        return ""
    shown = locales.stack_for(store, stack_id, locales.locale_of(store, page))
    version = (versioning.recent_version if newest else versioning.live_version)(store, shown)
    if version is None:
        return ""
    return area_html(store, "Main", by_area(versioning.placed_blocks(store, shown, int(version["id"]))), render)


def by_area(blocks: Iterable[sqlite3.Row]) -> dict[str, list[sqlite3.Row]]:
    grouped: dict[str, list[sqlite3.Row]] = {}
    for block in blocks:
        grouped.setdefault(block["area"], []).append(block)
    return grouped


def set_global_areas(store: Store, names: Iterable[str]) -> None:
    store.set_meta(GLOBAL_AREAS, dumps([str(n) for n in names]))


def global_areas(store: Store, locale: str) -> list[tuple[str, int, list[sqlite3.Row]]]:
    """Each global area the theme shows on a page of ``locale``: its name, the stack page rendered (the stack's
    version for that locale if it has one, else the neutral stack: ``cmssync.emulator.locales``) and the blocks of
    that page's recent version."""
    names = loads(store.get_meta(GLOBAL_AREAS, "[]")) or []
    found = []
    for name in names:
        for page in store.all(
            "SELECT id FROM pages WHERE type = 'core_stack' AND in_trash = 0 AND path LIKE ?"
            " AND path NOT LIKE ? ORDER BY id",
            STACKS_PREFIX + "%",
            STACKS_PREFIX + "%/%",
        ):
            recent = versioning.recent_version(store, int(page["id"]))
            if recent is not None and recent["name"] == name:
                shown = locales.stack_for(store, int(page["id"]), locale)
                version = recent if shown == int(page["id"]) else versioning.recent_version(store, shown)
                assert version is not None
                blocks = versioning.placed_blocks(store, shown, int(version["id"]))
                found.append((str(name), shown, blocks))
                break
    return found
