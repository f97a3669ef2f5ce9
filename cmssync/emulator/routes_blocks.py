"""Blocks in page areas (``Areas.php``) and blocks by id (``Blocks.php``).

Area endpoints answer their "not found" and permission errors with HTTP **400** (the intended code went into
``t()``), a failed block validation on update with an ErrorList and HTTP **200**, and never approve anything: the
change lands in the page's draft (see :mod:`cmssync.emulator.versioning`) and leaves the page's
``date_last_updated`` alone. Adds that the real controller cannot save (layouts, containers, an image whose file
id is not a number) answer the Whoops 500 of the failed command after taking a block id and making the draft.
"""

from __future__ import annotations

import sqlite3
from typing import Any

from starlette.responses import Response

from cmssync.emulator import blockvalues, envelope, markup, sitetree, versioning
from cmssync.emulator.blocktypes import BLOCK_TYPES, LAYOUT_TYPES, Where
from cmssync.emulator.context import ApiError, Ctx, denied, missing_key, not_found, php_type
from cmssync.emulator.phperror import PhpError

HANDLER_FAILED = "Symfony\\Component\\Messenger\\Exception\\HandlerFailedException"
ADD_COMMAND = "Concrete\\Core\\Block\\Command\\AddBlockToPageCommand"


def _page(ctx: Ctx) -> sqlite3.Row:
    page = sitetree.get_page(ctx.store, ctx.int_param("pageID"))
    if page is None:
        raise not_found(400, "Page not found.")
    return page


def _value(data: dict[str, Any], where: str, line: int) -> dict[str, Any]:
    value = data["value"]
    if isinstance(value, list):
        return {}  # a JSON array is a PHP array too
    if not isinstance(value, dict):
        raise PhpError(
            "TypeError",
            f"{where}(): Argument #1 ($data) must be of type array, {php_type(value)} given, called in "
            f"<site-root>/concrete/src/Api/Controller/Areas.php on line {line}",
        )
    return value


def _where(ctx: Ctx, page: sqlite3.Row) -> Where:
    """The page a controller's ``save()`` runs on (its id, its parent's, page paths, the site's URL)."""
    return Where(
        page_id=int(page["id"]),
        parent_id=int(page["parent_id"] or 0),
        page_path=lambda page_id: markup.page_path(ctx.store, page_id),
        base_url=ctx.render.base_url,
    )


def _block_with_page(ctx: Ctx, block_id: int, page: sqlite3.Row, version_id: int) -> dict[str, Any]:
    block = ctx.store.one("SELECT * FROM blocks WHERE id = ?", block_id)
    assert block is not None
    fresh_page = sitetree.get_page(ctx.store, int(page["id"]))
    assert fresh_page is not None
    out = ctx.render.block(block)
    version = versioning.get_version(ctx.store, int(page["id"]), version_id)
    out["page"] = ctx.render.wrap(ctx.render.page(fresh_page, version))
    return out


async def add(ctx: Ctx) -> Response:
    page = _page(ctx)
    data = ctx.json_object()
    for key in ("type", "value"):
        if key not in data:
            raise missing_key(key)
    block_type = data["type"]
    if not isinstance(block_type, str) or block_type not in BLOCK_TYPES:
        raise not_found(400, "Invalid block type handle.")
    if not ctx.caller.is_super_admin:
        raise denied(400, "You do not have permission to add this block type to this area on this page.", "update")
    value = _value(data, "Concrete\\Core\\Block\\Command\\AddBlockToPageCommand::setData", 89)
    page_id = int(page["id"])
    try:
        record = blockvalues.save(block_type, value, _where(ctx, page))
    except (blockvalues.LayoutKeyError, blockvalues.ColumnError) as exc:
        # The command fails after the draft was made and the block id taken (blocks.jsonl, layout.* / filecol.*).
        with ctx.store.transaction():
            orphan = versioning.add_orphan(ctx.store, page_id, block_type, ctx.now)
        if isinstance(exc, blockvalues.ColumnError):
            raise PhpError(HANDLER_FAILED, exc.message(orphan, update=False)) from exc
        raise PhpError(HANDLER_FAILED, f'Handling "{ADD_COMMAND}" failed: {exc}') from exc
    with ctx.store.transaction():
        # A block change in a draft does not move the page's date_last_updated (blocks.jsonl, batch.*).
        block_id, version = versioning.add_block(
            ctx.store, page_id, ctx.params["areaHandle"], block_type, record, ctx.now
        )
    return envelope.item(ctx, _block_with_page(ctx, block_id, page, int(version["id"])))


def _find(ctx: Ctx, page: sqlite3.Row, action: str) -> sqlite3.Row:
    """Area and block looked up in the page's most recent version (errors answered with 400)."""
    if not ctx.caller.is_super_admin:
        raise denied(
            400, f"You do not have permission to {action} this block.", "update" if action == "edit" else "delete"
        )
    page_id, area = int(page["id"]), ctx.params["areaHandle"]
    if not versioning.area_exists(ctx.store, page_id, area):
        raise not_found(400, "Area not found.")
    recent = versioning.recent_version(ctx.store, page_id)
    assert recent is not None
    block = versioning.block_in_version(ctx.store, page_id, int(recent["id"]), area, ctx.int_param("blockID"))
    if block is None:
        raise not_found(400, "Block not found.")
    return block


async def update(ctx: Ctx) -> Response:
    page = _page(ctx)
    block = _find(ctx, page, "edit")
    data = ctx.json_object()
    if "value" not in data:
        raise missing_key("value")
    value = _value(data, "Concrete\\Core\\Block\\BlockController::validate", 134)
    errors, fields = blockvalues.validate(block["type"], value)
    if errors:
        # ValidateBlockRequestTrait answers a failed validation with HTTP 200.
        raise ApiError(200, *errors, fields=fields)
    try:
        record = blockvalues.save(block["type"], value, _where(ctx, page))
    except blockvalues.ColumnError as exc:
        raise PhpError(HANDLER_FAILED, exc.message(int(block["id"]), update=True)) from exc
    page_id = int(page["id"])
    with ctx.store.transaction():
        block_id, version = versioning.update_block(
            ctx.store, page_id, ctx.params["areaHandle"], int(block["id"]), record, ctx.now
        )
    return envelope.item(ctx, _block_with_page(ctx, block_id, page, int(version["id"])))


async def remove(ctx: Ctx) -> Response:
    page = _page(ctx)
    block = _find(ctx, page, "delete")
    page_id = int(page["id"])
    with ctx.store.transaction():
        version = versioning.remove_block(ctx.store, page_id, ctx.params["areaHandle"], int(block["id"]), ctx.now)
    return envelope.deleted(ctx, ctx.params["blockID"], "blocks", ctx.render.version(version))


async def read(ctx: Ctx) -> Response:
    block = ctx.store.one("SELECT * FROM blocks WHERE id = ?", ctx.int_param("bID"))
    if block is None:
        raise not_found(404, "Block not found")
    if ctx.caller.is_guest:
        raise denied(401, "You do not have access to view this block.", "access")
    if block["type"] in LAYOUT_TYPES and versioning.is_orphan(ctx.store, int(block["id"])):
        # The layout controller exports its (never created) layout object.
        raise PhpError("Error", "Call to a member function export() on null")
    out = ctx.render.block(block)
    if "pages" in ctx.includes:
        pages = []
        for row in ctx.store.all(
            "SELECT DISTINCT page_id FROM placements WHERE block_id = ? ORDER BY page_id", block["id"]
        ):
            page = sitetree.get_page(ctx.store, int(row["page_id"]))
            if page is not None:
                pages.append(ctx.render.page(page, versioning.recent_version(ctx.store, int(page["id"]))))
        out["pages"] = ctx.render.wrap(pages)
    return envelope.item(ctx, out)


async def delete(ctx: Ctx) -> Response:
    block = ctx.store.one("SELECT * FROM blocks WHERE id = ?", ctx.int_param("bID"))
    if block is None:
        raise not_found(404, "Block not found")
    if not ctx.caller.is_super_admin:
        raise denied(401, "You do not have access to delete this block.", "delete")
    with ctx.store.transaction():
        # Blocks::delete calls deleteBlock(true): gone from every version, live ones included.
        versioning.delete_block_everywhere(ctx.store, int(block["id"]))
    return envelope.deleted(ctx, ctx.params["bID"], "blocks")
