"""``/page_versions``: list (legacy ``limit``/``resultsPage`` paging, no cursor), read, approve/deny, delete.

For a page that does not exist the real server does not say 404: the super admin gets an HTTP 500 (a broken SQL
query for the list, a cache error for a version) and anyone else the permission error. Denying answers the version
as it was before (the object is not refreshed); denying the live version leaves the page without one.
"""

from __future__ import annotations

import sqlite3
from typing import Any

from starlette.responses import Response

from cmssync.emulator import envelope, sitetree, timefmt, versioning
from cmssync.emulator.context import ApiError, Ctx, denied, not_found
from cmssync.emulator.phperror import PhpError

READ_DENIED = "You do not have access to read versions about this page."


def php_truthy(value: Any) -> bool:
    if isinstance(value, str):
        return value not in ("", "0")
    return bool(value)


def _sql_error(limit: int, offset: int) -> PhpError:
    # The version list of a missing page builds "cID IS ''" into its SQL (recorded: page_versions.list.unknown_page).
    tail = f"order by cvID desc limit {offset},{limit}"
    near = "near '" + "'' " + tail + "' at line 1"
    return PhpError(
        "Doctrine\\DBAL\\Exception\\SyntaxErrorException",
        f"An exception occurred while executing 'select cvID from CollectionVersions where 1=1 and cID IS '' {tail} ':"
        " SQLSTATE[42000]: Syntax error or access violation: 1064 You have an error in your SQL syntax; check the"
        " manual that corresponds to your MariaDB server version for the right syntax to use " + near,
    )


def _results_page(ctx: Ctx) -> int:
    text = ctx.query("resultsPage") or "1"
    return int(text) if text.isdigit() and 0 < int(text) < 10**9 else 1


def _page(ctx: Ctx, *, listing: bool, message: str = READ_DENIED, action: str = "access") -> sqlite3.Row:
    page = sitetree.get_page(ctx.store, ctx.int_param("pageID"))
    if not ctx.caller.is_super_admin:
        raise denied(401, message, action)
    if page is None:
        if listing:
            limit = envelope.limit(ctx)
            raise _sql_error(limit, limit * (_results_page(ctx) - 1))
        raise PhpError(
            "Stash\\Exception\\InvalidArgumentException", "Invalid or Empty Node passed to getItem constructor."
        )
    return page


def _version(ctx: Ctx, page: sqlite3.Row, documented_message: str) -> sqlite3.Row:
    version = versioning.get_version(ctx.store, int(page["id"]), ctx.int_param("versionID"))
    if version is None:
        raise not_found(404, "Version not found", documented_message)
    return version


async def list_versions(ctx: Ctx) -> Response:
    page = _page(ctx, listing=True)
    limit = envelope.limit(ctx)
    rows = ctx.store.all(
        "SELECT * FROM versions WHERE page_id = ? ORDER BY id DESC LIMIT ? OFFSET ?",
        page["id"],
        limit,
        limit * (_results_page(ctx) - 1),
    )
    return envelope.collection(ctx, [ctx.render.version(r) for r in rows], with_cursor=False)


async def read(ctx: Ctx) -> Response:
    page = _page(ctx, listing=False)
    return envelope.item(ctx, ctx.render.version(_version(ctx, page, "Page version not found")))


async def update(ctx: Ctx) -> Response:
    page = _page(
        ctx, listing=False, message="You do not have access to approve page versions from this page.", action="update"
    )
    version = _version(ctx, page, "Version not found")
    data = ctx.json()
    data = data if isinstance(data, dict) else {}
    end_date: int | None = None
    if data.get("publish_end_date") is not None:
        text = str(data["publish_end_date"])
        end_date = timefmt.parse(text)
        if end_date is None:
            raise PhpError("Punic\\Exception\\BadArgumentType", f"Can't convert '{text}' to a \\DateTime")
    page_id, version_id = int(page["id"]), int(version["id"])
    denying = "is_approved" in data and not php_truthy(data["is_approved"])
    with ctx.store.transaction():
        if "is_approved" in data:
            if denying:
                versioning.deny(ctx.store, page_id, version_id)
            else:
                versioning.approve(ctx.store, page_id, version_id, ctx.now)
            sitetree.touch(ctx.store, page_id, ctx.now)
        if end_date is not None:
            ctx.store.db.execute(
                "UPDATE versions SET publish_end_date = ? WHERE page_id = ? AND id = ?", (end_date, page_id, version_id)
            )
    fresh = versioning.get_version(ctx.store, page_id, version_id)
    assert fresh is not None
    out = ctx.render.version(version if denying else fresh)
    out["publish_end_date"] = ctx.render.version(fresh)["publish_end_date"]
    return envelope.item(ctx, out)


async def delete(ctx: Ctx) -> Response:
    page = _page(
        ctx, listing=False, message="You do not have access to delete versions from this page.", action="delete"
    )
    version = _version(ctx, page, "Page version not found")
    if version["is_approved"]:
        raise ApiError(401, "You may not delete the approved version of a page.")
    with ctx.store.transaction():
        versioning.delete_version(ctx.store, int(page["id"]), int(version["id"]))
    return envelope.deleted(ctx, ctx.params["versionID"], "page_versions")
