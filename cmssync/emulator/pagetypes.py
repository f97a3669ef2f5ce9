"""The site's page types: each handle's numeric id (what a page list's ``ptID`` column stores) and which types a
page can be created with.

A default install has the types of :data:`cmssync.emulator.catalog.PAGE_TYPES` (ids in ``PAGE_TYPE_IDS``, as on the
recorded site). A seed's ``page_types: {handle: id}`` replaces them all, as a site built from another theme or
starting point has other types — none with the handle ``page``, perhaps (issue 36). The core types a site always has
(``core_stack`` … ``core_theme_documentation``) are not creatable by ``POST /pages`` except ``core_stack``.
"""

from __future__ import annotations

from json import dumps, loads

from cmssync.emulator.catalog import PAGE_TYPE_IDS, PAGE_TYPES
from cmssync.emulator.store import Store

META = "page_types"
_NOT_CREATABLE = frozenset(PAGE_TYPE_IDS) - frozenset(PAGE_TYPES)


def set_page_types(store: Store, types: dict[str, int]) -> None:
    """Replace the site's page types (a seed's ``page_types``)."""
    store.set_meta(META, dumps({str(handle): int(number) for handle, number in types.items()}))


def type_ids(store: Store) -> dict[str, int]:
    """Handle → id of every page type the site has."""
    seeded = store.get_meta(META, "")
    return {str(k): int(v) for k, v in loads(seeded).items()} if seeded else dict(PAGE_TYPE_IDS)


def handle_of(store: Store, number: int) -> str | None:
    return next((handle for handle, type_id in type_ids(store).items() if type_id == number), None)


def creatable(store: Store) -> dict[str, str]:
    """Handle → display name of the types ``POST /pages`` and ``PUT /pages`` accept (the name is in a permission
    message)."""
    if not store.get_meta(META, ""):
        return dict(PAGE_TYPES)
    return {
        handle: PAGE_TYPES.get(handle, handle.replace("_", " ").title())
        for handle in type_ids(store)
        if handle not in _NOT_CREATABLE
    }
