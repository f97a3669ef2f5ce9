"""``/system/info`` and ``/sites`` (no permission checks on either)."""

from __future__ import annotations

from starlette.responses import Response

from cmssync.emulator import envelope, sites
from cmssync.emulator.catalog import SYSTEM_INFO
from cmssync.emulator.context import Ctx, as_id, not_found
from cmssync.emulator.sites import DEFAULT_SITE_ID


async def system_info(ctx: Ctx) -> Response:
    return envelope.item(ctx, dict(SYSTEM_INFO))


async def list_sites(ctx: Ctx) -> Response:
    listed = [DEFAULT_SITE_ID, *(int(row["id"]) for row in sites.others(ctx.store))]
    return envelope.collection(ctx, [ctx.render.site(ctx.includes, i) for i in listed], with_cursor=False)


async def default_site(ctx: Ctx) -> Response:
    return envelope.item(ctx, ctx.render.site(ctx.includes))  # whatever the host (sites.jsonl)


async def read_site(ctx: Ctx) -> Response:
    # Sites::read casts the id to int, so "abc" (or a handle) is site 0, and a number past PHP's largest integer
    # its largest: not found either way (as_id: None past the database's largest id, which SQLite cannot hold).
    site_id = as_id(ctx.params["siteID"].strip()) or 0
    if site_id != DEFAULT_SITE_ID and sites.get(ctx.store, site_id) is None:
        raise not_found(404, "Site not found.")
    return envelope.item(ctx, ctx.render.site({"locales", "custom_attributes", *ctx.includes}, site_id))
