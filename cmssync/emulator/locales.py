"""Locale trees (Concrete's multilingual sections), as a real 9.3.1 site shows them (``locales.jsonl``).

The default tree is ``en_US`` with home page 1; every other tree is a row of ``locales`` whose home page has no
parent, its own URL segment (``/de``) and no page type (``type: false``). What the API shows of them:

* only ``includes=locales`` on the site read names the trees (``{id, country, language, home_page_id}``, creation
  order, the default first);
* a page's ``locale`` is its tree's (the tree whose home is the page or one of its ancestors); pages outside every
  tree — stacks, localized stacks, ``/!stacks`` — report the default locale;
* the page list (``GET /pages``) shows the default tree only; a second tree is reached by walking children from its
  home;
* :func:`add_locale` does what the dashboard's "add locale" and the Copy Languages tool do: a home page whose live
  version (2; version 1 is the empty, unapproved first version) holds the default home's blocks, and a copy of every
  page below the default home, **placing the same block ids** (Concrete copies block references: an update on
  either page then writes a new block id into that page's draft only, ``cmssync.emulator.versioning.update_block``);
* a localized stack is a child page of the neutral stack (same name and type, ``template: false``) starting with
  the neutral stack's blocks (the same block ids); its handle is the neutral stack's, made unique among the versions
  in the order they are made (``footer``, ``footer-2``, ``footer-3``: ``localized-stacks.jsonl``, a site with two
  trees besides the default one), whatever their locales; rendering a page picks the stack version of the page's
  locale (``localized_stacks`` keeps which locale each is for: the API never says).
"""

from __future__ import annotations

import sqlite3
from typing import Any

from cmssync.emulator import sites, sitetree, versioning
from cmssync.emulator.store import Store

DEFAULT_LOCALE = "en_US"


def trees(store: Store) -> list[dict[str, Any]]:
    """Every locale tree as ``includes=locales`` lists it, the default first."""
    language, country = DEFAULT_LOCALE.split("_")
    out: list[dict[str, Any]] = [
        {"id": 1, "country": country, "language": language, "home_page_id": sitetree.HOME_PAGE_ID}
    ]
    for row in store.all("SELECT * FROM locales ORDER BY id"):
        out.append(
            {
                "id": int(row["id"]),
                "country": row["country"],
                "language": row["language"],
                "home_page_id": int(row["home_page_id"]),
            }
        )
    return out


def _homes(store: Store) -> list[tuple[str, str]]:
    """``(home path, locale)`` of every tree besides the default one."""
    return [
        (str(row["path"]), f"{row['language']}_{row['country']}")
        for row in store.all(
            "SELECT l.language, l.country, p.path FROM locales l JOIN pages p ON p.id = l.home_page_id"
        )
    ]


def locale_of(store: Store, page: sqlite3.Row) -> str:
    """The locale a page reports: its tree's, else the default (stacks and system pages too); a page of another
    site of the installation reports that site's (``sites.jsonl``)."""
    other_site = sites.locale_of(store, sites.site_of(store, page))
    if other_site is not None:
        return other_site
    path = page["path"]
    if path:
        for home, locale in _homes(store):
            if path == home or path.startswith(home + "/"):
                return locale
    return DEFAULT_LOCALE


OUTSIDE_DEFAULT_TREE = (
    "EXISTS (SELECT 1 FROM locales l JOIN pages h ON h.id = l.home_page_id"
    " WHERE pages.path = h.path OR pages.path LIKE h.path || '/%')"
)
"""SQL: a page of a tree other than the default one (the page list never shows those)."""


def add_locale(
    store: Store, code: str, *, slug: str | None = None, ts: int, prefix: bool = True, stacks: bool = True
) -> int:
    """Add the locale ``code`` (``de_DE``) with its home at ``/<slug>`` (default: the language), copy the default
    tree into it and (``stacks``) give every stack a version for it; returns the new home page's id. ``prefix``
    names every copy ``[de_DE] <name>`` (as the kit does). Call inside a transaction."""
    language, _, country = code.partition("_")
    if not language or not country:
        raise ValueError(f"locale {code!r}: expected language_COUNTRY such as de_DE")
    if any(f"{t['language']}_{t['country']}" == code for t in trees(store)):
        raise ValueError(f"locale {code} exists already")
    handle = slug or language
    if store.one("SELECT 1 FROM pages WHERE path = ?", "/" + handle):
        raise ValueError(f"locale {code}: a page /{handle} exists already")
    source = sitetree.get_page(store, sitetree.HOME_PAGE_ID)
    assert source is not None
    live = versioning.live_version(store, sitetree.HOME_PAGE_ID)
    assert live is not None
    name = _named(code, str(live["name"]), prefix)
    home = sitetree.create_page(
        store, parent_id=None, name=name, handle_source="", page_type="", template=live["template"], ts=ts
    )
    store.db.execute("UPDATE pages SET handle = ?, path = ? WHERE id = ?", (handle, "/" + handle, home))
    # version 1 is the empty first version, never approved; version 2 the copy of the default home's live version
    store.db.execute("UPDATE versions SET is_approved = 0 WHERE page_id = ? AND id = 1", (home,))
    store.db.execute(
        "INSERT INTO versions (page_id, id, name, description, template, is_approved, is_new, date_created,"
        " date_approved) VALUES (?, 2, ?, ?, ?, 1, 0, ?, ?)",
        (home, name, live["description"], live["template"], ts, ts),
    )
    _copy_content(store, sitetree.HOME_PAGE_ID, int(live["id"]), home, 2)
    _copy_below(store, sitetree.HOME_PAGE_ID, home, code, prefix, ts)
    store.db.execute(  # ids after the default locale's 1, in creation order (across the installation's sites)
        "INSERT INTO locales (id, language, country, home_page_id) VALUES (?, ?, ?, ?)",
        (sites.next_locale_id(store), language, country, home),
    )
    if stacks:
        for stack in store.all(
            "SELECT * FROM pages WHERE type = 'core_stack' AND in_trash = 0 AND path LIKE '/!stacks/%'"
            " AND path NOT LIKE '/!stacks/%/%' ORDER BY id"
        ):
            add_localized_stack(store, stack, code, ts)
    return home


def add_localized_stack(store: Store, stack: sqlite3.Row, code: str, ts: int) -> int:
    """The ``code`` version of a stack: a child page with the neutral stack's name and blocks, and its handle made
    unique among the versions made before (``footer``, then ``footer-2``)."""
    recent = versioning.recent_version(store, int(stack["id"]))
    assert recent is not None
    taken = {row["handle"] for row in store.all("SELECT handle FROM pages WHERE parent_id = ?", int(stack["id"]))}
    handle, number = str(stack["handle"]), 1
    while handle in taken:
        number += 1
        handle = f"{stack['handle']}-{number}"
    page_id = sitetree.create_page(
        store,
        parent_id=int(stack["id"]),
        name=str(recent["name"]),
        handle_source="",
        page_type="core_stack",
        template="",
        ts=ts,
        handle=handle,
    )
    _copy_content(store, int(stack["id"]), int(recent["id"]), page_id, 1)
    store.db.execute("INSERT INTO localized_stacks (page_id, locale) VALUES (?, ?)", (page_id, code))
    return page_id


def stack_for(store: Store, stack_id: int, locale: str) -> int:
    """The stack page a page of ``locale`` renders for the neutral stack ``stack_id``: its version for that locale,
    else the neutral one."""
    row = store.one(
        "SELECT p.id FROM pages p JOIN localized_stacks s ON s.page_id = p.id"
        " WHERE p.parent_id = ? AND p.in_trash = 0 AND s.locale = ?",
        stack_id,
        locale,
    )
    return int(row["id"]) if row else stack_id


def _named(code: str, name: str, prefix: bool) -> str:
    return f"[{code}] {name}" if prefix else name


def _copy_below(store: Store, source_parent: int, target_parent: int, code: str, prefix: bool, ts: int) -> None:
    """Copy every page below ``source_parent`` under ``target_parent`` (same handles, copied versions)."""
    for child in sitetree.children(store, source_parent):
        live = versioning.live_version(store, int(child["id"]))
        if live is None:
            continue
        copy = sitetree.create_page(
            store,
            parent_id=target_parent,
            name=_named(code, str(live["name"]), prefix),
            handle_source="",
            page_type=str(child["type"]),
            template=str(live["template"]),
            ts=ts,
            description=str(live["description"]),
            handle=str(child["handle"]),
        )
        _copy_content(store, int(child["id"]), int(live["id"]), copy, 1)
        _copy_below(store, int(child["id"]), copy, code, prefix, ts)


def _copy_content(store: Store, page_id: int, version_id: int, target: int, target_version: int) -> None:
    """Areas, attributes and block placements of a version into another page's version (the same block ids)."""
    db = store.db
    db.execute(
        "INSERT OR IGNORE INTO areas (page_id, handle) SELECT ?, handle FROM areas WHERE page_id = ?", (target, page_id)
    )
    db.execute(
        "INSERT OR REPLACE INTO version_attributes (page_id, version_id, handle, av_id, value)"
        " SELECT ?, ?, handle, av_id, value FROM version_attributes WHERE page_id = ? AND version_id = ?",
        (target, target_version, page_id, version_id),
    )
    db.execute(
        "INSERT INTO placements (page_id, version_id, area, position, block_id)"
        " SELECT ?, ?, area, position, block_id FROM placements WHERE page_id = ? AND version_id = ?",
        (target, target_version, page_id, version_id),
    )
