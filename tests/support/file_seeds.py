"""Sandbox seeds of a home page whose content blocks hold download links and pictures (``Site.seeded``)."""

from __future__ import annotations

from typing import Any

LIGHTBOX = "4ee0f842-441a-4ad0-8b78-69bdaf7c0a29"
"""A digit-led UUID: the API reads a link to it as the file whose numeric id is 4, not this one."""
LIGHTBOX_FILES = [
    {"filename": "blank2.png", "png": [4, 4], "uuid": "44f4152e-bb1f-410f-abb0-d86af4d9ce87", "id": 4},
    {"filename": "balloon.jpg", "png": [4, 4], "uuid": LIGHTBOX, "id": 16},
]
"""Files 4 and 16 of the ``elemental_full`` sample (``core-views.jsonl``)."""
LIGHTBOX_CONTENT = (
    f'<p>Words.</p><p><a href="{{CCM:FID_DL_{LIGHTBOX}}}" data-concrete5-link-lightbox="image">'
    '<concrete-picture fid="16" /></a></p>'
)
"""As ``/blog/hello-world`` of ``elemental_full`` stores it: a lightbox link by UUID around a picture."""
PAGE_TITLE = {"type": "page_title", "value": {"useCustomTitle": "0", "titleText": "", "formatting": "h1"}}


def content(html: str) -> dict[str, Any]:
    """A content block holding ``html`` (stored form)."""
    return {"type": "content", "value": {"content": html}}


def home_seed(*blocks: dict[str, Any], files: list[dict[str, Any]], name: str = "Home", **extra: Any) -> dict[str, Any]:
    """A site of one page, the home page, whose ``Main`` holds ``blocks``, with ``files`` and other seed keys."""
    return {**extra, "pages": [{"path": "/", "name": name, "areas": {"Main": list(blocks)}}], "files": files}
