"""The locale trees of the site, read once per run: ``GET /sites/default?includes=locales`` and each other tree's
home page (the locales name only its id; its path is where the tree's pages are). A single-locale site costs no
request beyond the site read every run makes (``cmssync.content.trees``)."""

from __future__ import annotations

import asyncio
from logging import WARNING

from cmssync.api.client import ConcreteClient
from cmssync.api.models import Site
from cmssync.content.trees import DEFAULT_SITE, Tree, Trees
from cmssync.logs import note


async def read_trees(client: ConcreteClient) -> tuple[Site, Trees]:
    """The default site (with its locales) and its trees, the default first."""
    site = await client.default_site(includes=("locales",))
    home_id = site.home_page_id or 1
    default_code = site.default_locale or ""
    others = [locale for locale in site.locales if locale.home_page_id and locale.home_page_id != home_id]
    homes = await asyncio.gather(*(client.get_page(int(locale.home_page_id or 0)) for locale in others))
    trees = [Tree(default_code or _code(site, home_id), "/", home_id, default=True)]
    for locale, home in zip(others, homes, strict=True):
        if home.path:
            trees.append(Tree(locale.code, home.url_path, home.id))
        else:  # never seen on a real site: its pages would have no path cmssync can name
            note(f"locale {locale.code}: its home page {home.id} has no path; that tree is not managed", level=WARNING)
    return site, Trees(site.handle or DEFAULT_SITE, tuple(trees))


def _code(site: Site, home_id: int) -> str:
    """The default tree's locale when the site names no ``default_locale``: the locale whose home is the site's."""
    return next((locale.code for locale in site.locales if locale.home_page_id == home_id), "")
