"""The locale trees of the site, read once per run: ``GET /sites/default?includes=locales`` and each other tree's
home page (the locales name only its id; its path is where the tree's pages are). A single-locale site costs no
request beyond the site read every run makes (``cmssync.content.trees``).

Another site of a multi-site installation (``site.handle``, ``--site``) is found by its handle in ``GET /sites`` and
read with ``GET /sites/{id}`` (its locales come with it): two requests instead of one. Its home has no parent and
its pages' paths start at that home (``/about`` may be a page of several sites: ``sites.jsonl``), so its trees read
like the default site's, rooted at its own home."""

from __future__ import annotations

import asyncio
from logging import WARNING

from cmssync.api.client import ConcreteClient
from cmssync.api.models import Site
from cmssync.content.trees import DEFAULT_SITE, Tree, Trees
from cmssync.errors import ApiError, ConfigError
from cmssync.logs import note


async def read_trees(client: ConcreteClient) -> tuple[Site, Trees]:
    """The site the client manages (the default one unless ``client.site_handle`` names another), with its
    locales, and its trees, the default first."""
    site = await read_site(client)
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


async def read_site(client: ConcreteClient, listed: list[Site] | None = None) -> Site:
    """The site ``client.site_handle`` names, with its locales; a handle no site has is a ``ConfigError`` naming the
    installation's sites (the REST API cannot create a site). ``listed``: ``GET /sites`` if the caller read it."""
    handle = client.site_handle
    if handle is None:
        return await client.default_site(includes=("locales",))
    sites = listed if listed is not None else await client.list_sites()
    found = next((site for site in sites if site.handle == handle), None)
    if found is None:
        handles = ", ".join(str(site.handle) for site in sites) or "none"
        raise ConfigError(
            f"site.handle {handle}: the installation at {client.base_url} has no such site (its sites: {handles}); "
            "the REST API cannot create a site: add it in Dashboard › System › Multisite › Sites, then run again"
        )
    return await client.get_site(found.id)


async def list_sites(client: ConcreteClient) -> list[Site] | str:
    """``GET /sites``, or why it could not be read (what pull then says instead of naming the other sites)."""
    try:
        return await client.list_sites()
    except ApiError as exc:
        return f"the installation's sites could not be listed ({exc})"


def other_sites_note(listed: list[Site] | str, site: Site) -> list[str]:
    """What a pull of ``site`` says about the installation's other sites (nothing when it has no other)."""
    if isinstance(listed, str):
        return [listed]
    others = [str(other.handle or other.id) for other in listed if other.id != site.id]
    if not others:
        return []
    return [
        f"the installation has other sites, not pulled here: {', '.join(others)} (each into its own content "
        "directory: cmssync --site HANDLE pull DIR; docs/content-format.md › Several sites)"
    ]


def _code(site: Site, home_id: int) -> str:
    """The default tree's locale when the site names no ``default_locale``: the locale whose home is the site's."""
    return next((locale.code for locale in site.locales if locale.home_page_id == home_id), "")
