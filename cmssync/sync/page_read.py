"""One page read on its own by id, into the planner's view (:class:`~cmssync.plan.snapshot.LivePage`). Read-only.

:func:`read_page` is how ``cmssync.sync.observe_pages`` reads every page a children list cannot give (the home page,
a child without a live version, a known id the tree walk did not meet, the pages of a small incremental run) and how
the second phase of planning reads the pages it would write again: the *recent* version with areas and custom
attributes (drafts visible), and the live version's id besides when the recent one is a draft. A page that exists
but cannot be read is recorded, never taken as absent (``cmssync.sync.read_failures`` says which failures fail the
page and which the run).

:func:`to_live_page` converts any page the API returned (read alone or in a children list) into a ``LivePage``:
block values normalized against the site's address so they compare with the content, the description's line ends
and trailing spaces as the content's, dates in one form, attributes by handle. This is where a page read is
normalised: the planner compares what it holds as it is.
"""

from __future__ import annotations

import sys

from cmssync.api.client import ConcreteClient
from cmssync.api.errors import NotFound, PendingDeletion
from cmssync.api.models import Block, Page
from cmssync.plan.blocks import LiveBlock
from cmssync.plan.normalize import normalize_block_value, normalize_date, normalize_text
from cmssync.plan.snapshot import LivePage
from cmssync.sync.read_failures import note_unreadable_page

PAGE_INCLUDES = ("areas", "custom_attributes")
"""What a page read (alone or in a children list) includes: its blocks and its attributes."""


async def read_page(
    client: ConcreteClient,
    page_id: int,
    base_url: str,
    *,
    path: str,
    unreadable: dict[str, str],
    listed: bool = False,
) -> LivePage | None:
    """A page in its recent version, or None when it does not exist, sits in the trash or cannot be read.

    A page that exists but cannot be read (a permission refused, a server error that outlasted the retries; also
    a 404 when ``listed``: the page tree lists it at ``path``) is recorded in ``unreadable`` with the server's
    reason, never taken as absent, which would plan it to be created again (a duplicate on every run). Failures of
    the site rather than the page (``cmssync.sync.read_failures``) are raised.
    """
    try:
        recent = await client.get_page(page_id, includes=PAGE_INCLUDES, version="recent")
        live_version_id = recent.version.id if recent.version and recent.version.is_approved else None
        if recent.version is not None and not recent.version.is_approved:
            live = await client.get_page(page_id)
            live_version_id = live.version.id if live.version and live.version.is_approved else None
    except PendingDeletion:
        return None
    except Exception as exc:
        if isinstance(exc, NotFound) and not listed:
            return None
        note_unreadable_page(exc, path, page_id, listed=listed, unreadable=unreadable)
        return None
    return to_live_page(recent, live_version_id, base_url)


def to_live_page(page: Page, live_version_id: int | None, base_url: str, *, batched: bool = False) -> LivePage:
    """The planner's view of a page read, every area listed: sub-areas of layouts and containers
    (``Main : 10 : Title``) are areas like the others (:mod:`cmssync.plan.subareas` says which can be written).

    The strings that most pages share (block types, page type and template, version dates) are interned: a
    10,000-page site held ~80,000 copies of them."""
    areas = {area.name: tuple(live_block(block, base_url) for block in area.blocks) for area in page.areas or []}
    attributes = {a.handle: a.value for a in page.custom_attributes if a.handle}
    types = {a.handle: a.type for a in page.custom_attributes if a.handle and a.type}
    version = page.version
    return LivePage(
        id=page.id,
        path=page.url_path,
        name=page.name or "",
        description=normalize_text(page.description or ""),
        type=_interned(page.type),
        template=_interned(page.template),
        attributes=attributes,
        attribute_types=types,
        areas=areas,
        live_version_id=live_version_id,
        recent_version_id=version.id if version else None,
        publish_end_date=_interned(normalize_date(version.publish_end_date)) if version else None,
        recent_version_created=_interned(normalize_date(version.date_created)) if version else None,
        batched=batched,
    )


def live_block(block: Block, base_url: str) -> LiveBlock:
    """A block read, as the planner compares it: its value normalised against the site's address."""
    kind = sys.intern(block.type or "")
    return LiveBlock(block.id, kind, normalize_block_value(kind, block.value, base_url=base_url))


def _interned(text: str | None) -> str | None:
    return None if text is None else sys.intern(text)
