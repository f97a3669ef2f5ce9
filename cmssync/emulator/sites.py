"""Several sites of one installation (Concrete 9's multisite), as a real 9.3.1 install shows them (``sites.jsonl``).

The default site is ``{id: 1, handle: default}`` with home page 1; every other site is a row of ``sites`` made by
:func:`add_site` as the Dashboard's "add site" does: a home page without a parent whose ``path`` is ``""`` (not
``null`` like page 1's), ``type`` and ``template`` false, the site's name, and one locale of its own (locale ids
count across the installation: the default site's ``en_US`` is 1). What the API shows of them:

* ``GET /sites`` lists every site (id order, no includes), ``GET /sites/{id}`` reads one (``locales`` and
  ``custom_attributes`` by default), ``GET /sites/default`` is always the default site;
* a page says nothing about its site: pages of two sites share paths (``/about`` in both), and their ``locale`` is
  their site's;
* which site a request is about is chosen by its **host**: the site whose canonical URL names that host (port left
  out), else the default one. ``GET /pages`` lists that site's pages only (its home included) and the public pages
  are that site's (``for_host``, ``find_path``); reads by id, children lists and writes take any site's pages.

Stacks are the installation's (``/!stacks``, outside every site), so every site renders the same ones.
"""

from __future__ import annotations

import sqlite3
from typing import Any

from cmssync.emulator import sitetree
from cmssync.emulator.store import Store

DEFAULT_SITE_ID = 1
DEFAULT_HANDLE = "default"

_TREE = (
    "WITH RECURSIVE site_pages(id) AS (SELECT home_page_id FROM sites WHERE {which}"
    " UNION ALL SELECT p.id FROM pages p JOIN site_pages s ON p.parent_id = s.id) SELECT id FROM site_pages"
)


def others(store: Store) -> list[sqlite3.Row]:
    """The sites besides the default one, in id order."""
    return store.all("SELECT * FROM sites ORDER BY id")


def get(store: Store, site_id: int) -> sqlite3.Row | None:
    return store.one("SELECT * FROM sites WHERE id = ?", site_id)


def in_site(site_id: int) -> tuple[str, list[Any]]:
    """SQL condition (and its parameters) for a page of ``site_id``: below its home, or for the default site below
    no other site's home."""
    if site_id == DEFAULT_SITE_ID:
        return f"pages.id NOT IN ({_TREE.format(which='1')})", []
    return f"pages.id IN ({_TREE.format(which='id = ?')})", [site_id]


def for_host(store: Store, host: str) -> int:
    """The site a request with this ``Host`` header is about (its port left out): the site whose canonical URL
    names that host, else the default site."""
    name = host.rsplit(":", 1)[0] if not host.endswith("]") else host
    row = store.one("SELECT id FROM sites WHERE host = ?", name.lower())
    return int(row["id"]) if row else DEFAULT_SITE_ID


def site_of(store: Store, page: sqlite3.Row) -> int:
    """The site a page belongs to: the site whose home is the page or its top ancestor (the default site for
    pages outside every other site: the default tree, stacks, system pages)."""
    if store.one("SELECT 1 FROM sites LIMIT 1") is None:
        return DEFAULT_SITE_ID
    current: sqlite3.Row | None = page
    while current is not None and current["parent_id"] is not None:
        current = sitetree.get_page(store, int(current["parent_id"]))
    if current is None:
        return DEFAULT_SITE_ID
    row = store.one("SELECT id FROM sites WHERE home_page_id = ?", current["id"])
    return int(row["id"]) if row else DEFAULT_SITE_ID


def locale_of(store: Store, site_id: int) -> str | None:
    """A site's locale (``en_US``), ``None`` for the default site (whose trees :mod:`locales` knows)."""
    row = get(store, site_id) if site_id != DEFAULT_SITE_ID else None
    return f"{row['language']}_{row['country']}" if row else None


def find_path(store: Store, site_id: int, path: str) -> sqlite3.Row | None:
    """The page of ``site_id`` at ``path`` (``/`` is the site's home), not in the trash."""
    if path in ("", "/"):
        row = get(store, site_id)
        return sitetree.get_page(store, int(row["home_page_id"]) if row else sitetree.HOME_PAGE_ID)
    condition, params = in_site(site_id)
    return store.one(f"SELECT * FROM pages WHERE path = ? AND in_trash = 0 AND {condition}", path, *params)


def describe(row: sqlite3.Row) -> dict[str, Any]:
    """A site other than the default one as the API shows it (without includes)."""
    return {
        "id": int(row["id"]),
        "handle": row["handle"],
        "name": row["name"],
        "home_page_id": int(row["home_page_id"]),
        "default_locale": f"{row['language']}_{row['country']}",
    }


def trees(row: sqlite3.Row) -> list[dict[str, Any]]:
    """``includes=locales`` of a site other than the default one: its one locale."""
    return [
        {
            "id": int(row["locale_id"]),
            "country": row["country"],
            "language": row["language"],
            "home_page_id": int(row["home_page_id"]),
        }
    ]


def add_site(store: Store, handle: str, name: str, *, host: str, ts: int, locale: str = "en_US") -> int:
    """Add the site ``handle`` whose canonical URL names ``host``, with its home page; returns the home's id.
    Call inside a transaction."""
    language, _, country = locale.partition("_")
    if not handle or handle == DEFAULT_HANDLE or not handle.replace("_", "").isalnum():
        raise ValueError(f"site handle {handle!r}: letters, digits and underscores, not 'default'")
    if not language or not country:
        raise ValueError(f"site {handle}: locale {locale!r} is not language_COUNTRY such as en_US")
    if store.one("SELECT 1 FROM sites WHERE handle = ? OR host = ?", handle, host.lower()):
        raise ValueError(f"site {handle}: a site with that handle or host exists already")
    home = sitetree.create_page(store, parent_id=None, name=name, handle_source="", page_type="", template="", ts=ts)
    store.db.execute("UPDATE pages SET path = '' WHERE id = ?", (home,))  # a site's home: "" (page 1: null)
    locale_id = next_locale_id(store)
    store.db.execute(
        "INSERT INTO sites (id, handle, name, home_page_id, host, locale_id, language, country)"
        " VALUES ((SELECT MAX(2, COALESCE(MAX(id), 0) + 1) FROM sites), ?, ?, ?, ?, ?, ?, ?)",
        (handle, name, home, host.lower(), locale_id, language, country),
    )
    return home


def next_locale_id(store: Store) -> int:
    """The id the next locale gets, in any site (the default site's first locale is 1)."""
    row = store.one(
        "SELECT MAX(COALESCE((SELECT MAX(id) FROM locales), 1), COALESCE((SELECT MAX(locale_id) FROM sites), 1)) AS m"
    )
    return int(row["m"] if row else 1) + 1
