"""The site's public pages: ``GET /about`` shows the live version of ``/about`` as a plain HTML document.

A real site renders its pages with the theme; the sandbox renders each area's blocks in order inside a bare page
(layouts and containers with their sub-areas inside them), then the theme's global areas (stacks), so content
synced to the sandbox (``--sandbox``) can be looked at in a browser (see :mod:`cmssync.emulator.layouts`). Unknown
paths, pages in the trash and pages without a live version get the CMS's "Page Not Found" page, as on a real site.
"""

from __future__ import annotations

import functools
import html
import sqlite3

from starlette.responses import Response

from cmssync.emulator import blockvalues, layouts, locales, markup, sites, versioning
from cmssync.emulator.store import Store, loads


def download_view(store: Store, identifier: str, base_url: str) -> Response:
    """``/download_file/view/<id>[/<page id>]``, where rendered ``{CCM:FID_DL_…}`` links point (blocks.jsonl,
    ``links.public_download.*``): a lower-case UUID redirects to the file; a numeric id (refused for files that have
    a UUID, as all 9.x files do), an upper-case UUID or an unknown one gets the "Download File" page saying
    "Invalid File."."""
    row = store.one("SELECT * FROM files WHERE uuid = ?", identifier)
    if row is not None:
        url = f"{base_url}/application/files/{row['prefix']}/{row['filename']}"
        body = (
            '<!DOCTYPE html>\n<html>\n    <head>\n        <meta charset="UTF-8" />\n'
            f'        <meta http-equiv="refresh" content="0;url=\'{html.escape(url)}\'" />\n\n'
            f"        <title>Redirecting to {html.escape(url)}</title>\n    </head>\n    <body>\n"
            f'        Redirecting to <a href="{html.escape(url)}">{html.escape(url)}</a>.\n    </body>\n</html>'
        )
        return Response(
            body,
            status_code=307,
            headers={"cache-control": "no-cache, private", "content-type": "text/html; charset=utf-8", "location": url},
        )
    title = html.escape(f"Download File :: {store.get_meta('site_name', 'Sandbox Site')}")
    body = (
        f'<!DOCTYPE html>\n<html lang="en">\n<head>\n<meta charset="utf-8">\n<title>{title}</title>\n</head>\n'
        "<body>\n<h1>Download File</h1>\n<p>Invalid File.</p>\n</body>\n</html>\n"
    )
    return Response(body, headers={"cache-control": "no-cache, private", "content-type": "text/html; charset=UTF-8"})


def page_response(store: Store, trimmed_path: str, base_url: str, host: str = "") -> Response | None:
    """The HTML of the live page at ``/<trimmed_path>`` of the site ``host`` names (``cmssync.emulator.sites``),
    or ``None`` when there is no such page."""
    site_id = sites.for_host(store, host)
    page = sites.find_path(store, site_id, "/" + trimmed_path)
    if page is None:
        return None
    version = versioning.live_version(store, int(page["id"]))
    if version is None:
        return None
    other = sites.get(store, site_id)
    site = str(other["name"]) if other is not None else store.get_meta("site_name", "Sandbox Site")
    page_id = int(page["id"])
    expand = functools.partial(markup.render, store=store, base_url=base_url, page_id=page_id)
    core_views = store.get_meta(blockvalues.BLOCK_VIEWS) == "core"

    def render(block: sqlite3.Row) -> str:
        if block["type"] == "core_stack_display":
            return layouts.stack_display_html(store, loads(block["record"]), page_id, render, newest=True)
        return blockvalues.render_html(
            block["type"], loads(block["record"]), base_url, expand, version["name"], core_views=core_views
        )

    grouped = layouts.by_area(versioning.placed_blocks(store, page_id, int(version["id"])))
    # Sub-areas show inside their layout or container, never on their own (see cmssync.emulator.layouts).
    sections = "".join(
        f'<section class="ccm-area" data-area="{html.escape(name)}">{layouts.area_html(store, name, grouped, render)}'
        "</section>\n"
        for name in grouped
        if not layouts.is_sub_area(name)
    )
    locale = locales.locale_of(store, page)
    for name, _stack_id, blocks in layouts.global_areas(store, locale):
        stack = layouts.by_area(blocks)
        sections += (
            f'<section class="ccm-global-area" data-area="{html.escape(name)}">'
            f"{layouts.area_html(store, 'Main', stack, render)}</section>\n"
        )
    title = html.escape(f"{version['name']} :: {site}")
    if page["type"] == "blog_entry":
        # The blog entry template heads the page with its name.
        sections = f"<header><h1>{html.escape(version['name'])}</h1></header>\n{sections}"
    body = (
        f'<!DOCTYPE html>\n<html lang="{locale.split("_")[0]}">\n<head>\n<meta charset="utf-8">\n'
        f"<title>{title}</title>\n</head>\n<body>\n"
        f'<div class="ccm-page page-type-{html.escape(page["type"] or "")} '
        f'page-template-{html.escape(version["template"] or "")}">\n{sections}</div>\n</body>\n</html>\n'
    )
    return Response(body, headers={"cache-control": "no-cache, private", "content-type": "text/html; charset=UTF-8"})
