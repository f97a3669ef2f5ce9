"""``/system/info`` and ``/sites`` (no permission checks on either)."""

from __future__ import annotations

from starlette.responses import Response

from cmssync.emulator import envelope
from cmssync.emulator.catalog import SYSTEM_INFO
from cmssync.emulator.context import Ctx, not_found


async def system_info(ctx: Ctx) -> Response:
    return envelope.item(ctx, dict(SYSTEM_INFO))


async def list_sites(ctx: Ctx) -> Response:
    return envelope.collection(ctx, [ctx.render.site(ctx.includes)], with_cursor=False)


async def default_site(ctx: Ctx) -> Response:
    return envelope.item(ctx, ctx.render.site(ctx.includes))


async def read_site(ctx: Ctx) -> Response:
    # Sites::read casts the id to int, so "abc" is site 0: not found.
    if ctx.params["siteID"].strip() != "1":
        raise not_found(404, "Site not found.")
    return envelope.item(ctx, ctx.render.site({"locales", "custom_attributes", *ctx.includes}))
