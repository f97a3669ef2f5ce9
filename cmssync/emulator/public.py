"""The site's public pages: ``GET /about`` shows the live version of ``/about`` as a plain HTML document.

A real site renders its pages with the theme; the sandbox renders each area's blocks in order inside a bare page, so
content synced to the sandbox (``--sandbox``) can be looked at in a browser. Unknown paths, pages in the trash and
pages without a live version get the CMS's "Page Not Found" page, as on a real site.
"""

from __future__ import annotations

import functools
import html

from starlette.responses import Response

from cmssync.emulator import blockvalues, markup, versioning
from cmssync.emulator.store import Store, loads


def page_response(store: Store, trimmed_path: str, base_url: str) -> Response | None:
    """The HTML of the live page at ``/<trimmed_path>``, or ``None`` when there is no such page."""
    path = "/" + trimmed_path if trimmed_path else None
    page = store.one("SELECT * FROM pages WHERE path IS ? AND in_trash = 0", path)
    if page is None:
        return None
    version = versioning.live_version(store, int(page["id"]))
    if version is None:
        return None
    site = store.get_meta("site_name", "Sandbox Site")
    areas: dict[str, list[str]] = {}
    for block in versioning.placed_blocks(store, int(page["id"]), int(version["id"])):
        expand = functools.partial(markup.render, store=store, base_url=base_url, page_id=int(page["id"]))
        areas.setdefault(block["area"], []).append(
            blockvalues.render_html(block["type"], loads(block["record"]), base_url, expand)
        )
    sections = "".join(
        f'<section class="ccm-area" data-area="{html.escape(name)}">{"".join(parts)}</section>\n'
        for name, parts in areas.items()
    )
    title = html.escape(f"{version['name']} :: {site}")
    body = (
        f'<!DOCTYPE html>\n<html lang="en">\n<head>\n<meta charset="utf-8">\n<title>{title}</title>\n</head>\n'
        f'<body>\n<div class="ccm-page page-type-{html.escape(page["type"])} '
        f'page-template-{html.escape(version["template"])}">\n{sections}</div>\n</body>\n</html>\n'
    )
    return Response(body, headers={"cache-control": "no-cache, private", "content-type": "text/html; charset=UTF-8"})
