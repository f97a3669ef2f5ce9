"""``/pages``: list, children, read, create, update, delete (``concrete/src/Api/Controller/Pages.php``).

The page list sorts by ``cDateModified`` only; rows whose dates tie come back in a fixed but arbitrary order and the
``after`` cursor filters on ``(date, id)``, so a walk over tied pages repeats some and skips others — exactly the
unreliability the recording shows. An ``after`` that is not a page gives an empty list.
"""

from __future__ import annotations

import sqlite3
from typing import Any

from starlette.requests import Request
from starlette.responses import Response
from starlette.types import Message

from cmssync.emulator import envelope, locales, pagetypes, sites, sitetree, slugs, versioning
from cmssync.emulator.catalog import PAGE_TEMPLATES
from cmssync.emulator.context import ApiError, Ctx, as_id, denied, missing_key, not_found
from cmssync.emulator.phperror import PhpError

PENDING_DELETION = "This page is pending deletion."
_VISIBLE = (
    f"in_trash = 0 AND {sitetree.NOT_SYSTEM}"
    " AND EXISTS (SELECT 1 FROM versions v WHERE v.page_id = pages.id AND v.is_approved = 1)"
    f" AND NOT {locales.OUTSIDE_DEFAULT_TREE}"  # the list shows the default locale's tree only (locales.jsonl)
)


def _page_or_404(ctx: Ctx, page_id: int) -> sqlite3.Row:
    page = sitetree.get_page(ctx.store, page_id)
    if page is None:
        raise not_found(404, "Page not found.")
    if page["in_trash"]:
        raise ApiError(403, PENDING_DELETION)
    return page


def _render_live(ctx: Ctx, page: sqlite3.Row) -> dict[str, Any]:
    return ctx.render.page(page, versioning.live_version(ctx.store, int(page["id"])), ctx.includes)


async def read(ctx: Ctx) -> Response:
    page = _page_or_404(ctx, ctx.int_param("pageID"))
    if ctx.query("version") == "recent":
        if not ctx.caller.is_super_admin:
            raise denied(401, "You do not have access to read the most recent unapproved version of page.", "access")
        version = versioning.recent_version(ctx.store, int(page["id"]))
    else:
        version = versioning.live_version(ctx.store, int(page["id"]))
    return envelope.item(ctx, ctx.render.page(page, version, ctx.includes))


async def list_pages(ctx: Ctx) -> Response:
    limit = envelope.limit(ctx)
    after = ctx.query("after")
    # the pages of the site the request's host names (sites.jsonl, list.second_host.*)
    where, params = sites.in_site(sites.for_host(ctx.store, ctx.request.headers.get("host", "")))
    where = f"{_VISIBLE} AND {where}"
    if after is not None:
        after_id = as_id(after)
        cursor = sitetree.get_page(ctx.store, after_id) if after_id is not None else None
        if cursor is None:
            # Page::getByID of an unknown id yields an empty object whose NULL keys filter everything out.
            return envelope.collection(ctx, [])
        where += " AND (date_modified < ? OR (date_modified = ? AND id < ?))"
        params += [cursor["date_modified"], cursor["date_modified"], cursor["id"]]
    rows = ctx.store.all(
        f"SELECT * FROM pages WHERE {where} ORDER BY date_modified DESC, tiebreak LIMIT ?",
        *params,
        limit,
    )
    items = [_render_live(ctx, row) for row in rows]
    return envelope.collection(ctx, items, cursor_next=int(rows[-1]["id"]) if rows else None)


async def children(ctx: Ctx) -> Response:
    raw = ctx.params["pageID"]
    parent_id = as_id(raw)
    parent = sitetree.get_page(ctx.store, parent_id) if parent_id is not None else None
    if parent is None:
        raise ApiError(401, "Invalid parent page specified.", documented=(404, "Page not found"))
    rows = sitetree.children(ctx.store, int(parent["id"]))
    items = [_render_live(ctx, row) for row in rows]
    return envelope.collection(ctx, items, cursor_next=int(rows[-1]["id"]) if rows else None)


def _is_numeric(value: Any) -> bool:
    if isinstance(value, bool):
        return False
    if isinstance(value, (int, float)):
        return True
    return isinstance(value, str) and value.strip().lstrip("-").replace(".", "", 1).isdigit()


async def create(ctx: Ctx) -> Response:
    data = ctx.json_object()
    for key in ("parent", "name", "type", "template"):
        if key not in data:
            raise missing_key(key)
    errors: list[str] = []
    raw_name = data["name"]
    name = slugs.strip_tags(raw_name if isinstance(raw_name, str) else str(raw_name or "")).strip()
    if not name:
        errors.append("You must give your page a name.")
    parent = None
    if not _is_numeric(data["parent"]):
        errors.append("Invalid parent page")
    else:
        parent = sitetree.get_page(ctx.store, as_id(str(int(float(data["parent"])))) or -1)
        if parent is None:
            errors.append("Parent page not found.")
    page_type, template = data["type"], data["template"]
    types = pagetypes.creatable(ctx.store)
    if not isinstance(page_type, str) or page_type not in types:
        errors.append("Invalid page type")
    if not isinstance(template, str) or template not in PAGE_TEMPLATES:
        errors.append("Invalid page template")
    if errors:
        raise ApiError(401, *errors)
    assert parent is not None
    if not ctx.caller.is_super_admin:
        raise denied(
            403,
            f"You do not have permission to add pages of the type {types[page_type]} beneath this parent page",
            "update",
        )
    attributes = data.get("attributes") if isinstance(data.get("attributes"), dict) else None
    with ctx.store.transaction():
        # POST /pages ignores "description" (recorded); set it with a following PUT.
        page_id = sitetree.create_page(
            ctx.store,
            parent_id=int(parent["id"]),
            name=name,
            handle_source=str(raw_name),
            page_type=page_type,
            template=template,
            ts=ctx.now,
            attributes=attributes,
        )
        sitetree.place_type_defaults(ctx.store, page_id, page_type, template)
    page = sitetree.get_page(ctx.store, page_id)
    assert page is not None
    return envelope.item(ctx, _render_live(ctx, page))


async def update(ctx: Ctx) -> Response:
    raw = ctx.params["cID"]
    page_id = as_id(raw)
    page = sitetree.get_page(ctx.store, page_id) if page_id is not None else None
    if page is None:
        raise not_found(404, "Page not found")
    if not ctx.caller.is_super_admin:
        # 9.3.1 asks for the permission key "edit_page", which does not exist (issue #12234).
        raise PhpError("Exception", "Unable to get permission key for edit_page")
    data = await _update_fields(ctx)
    errors = []
    if "type" in data and not (isinstance(data["type"], str) and data["type"] in pagetypes.creatable(ctx.store)):
        errors.append("Invalid page type")
    if "template" in data and not (isinstance(data["template"], str) and data["template"] in PAGE_TEMPLATES):
        errors.append("Invalid page template")
    if errors:
        raise ApiError(401, *errors)
    page_id = int(page["id"])
    with ctx.store.transaction():
        version = versioning.version_to_modify(ctx.store, page_id, ctx.now)
        if isinstance(data.get("attributes"), dict):
            versioning.set_attributes(ctx.store, page_id, int(version["id"]), data["attributes"])
        changes = {k: data[k] for k in ("name", "description", "template") if k in data and data[k] is not None}
        for column, value in changes.items():
            ctx.store.db.execute(
                f"UPDATE versions SET {column} = ? WHERE page_id = ? AND id = ?",
                (str(value), page_id, version["id"]),
            )
        if "type" in data:
            ctx.store.db.execute("UPDATE pages SET type = ? WHERE id = ?", (data["type"], page_id))
        sitetree.touch(ctx.store, page_id, ctx.now)
    fresh = sitetree.get_page(ctx.store, page_id)
    assert fresh is not None
    draft = versioning.get_version(ctx.store, page_id, int(version["id"]))
    out = ctx.render.page(fresh, draft, ctx.includes)
    # The answer shows the draft but the date from before the update (blocks.jsonl, batch.op.put_page_name_*).
    out["date_last_updated"] = ctx.render.date(page["date_modified"])
    return envelope.item(ctx, out)


async def _update_fields(ctx: Ctx) -> dict[str, Any]:
    """The update body: JSON; the documented dialect also takes the form fields its documentation describes
    (``name``, ``description``, ``type``, ``template``, ``attributes[handle]``)."""
    content_type = ctx.request.headers.get("content-type", "").split(";")[0].strip().lower()
    if ctx.documented and content_type in ("application/x-www-form-urlencoded", "multipart/form-data"):
        fields: dict[str, Any] = {}
        body = ctx.body

        async def replay() -> Message:
            return {"type": "http.request", "body": body, "more_body": False}

        # The dispatcher has already read the body; a second Request parses it as a form.
        async with Request(ctx.request.scope, replay).form() as form:
            for key, value in form.multi_items():
                if not isinstance(value, str):
                    continue
                if key.startswith("attributes[") and key.endswith("]"):
                    fields.setdefault("attributes", {})[key[len("attributes[") : -1]] = value
                else:
                    fields[key] = value
        return fields
    data = ctx.json()
    return data if isinstance(data, dict) else {}


async def delete(ctx: Ctx) -> Response:
    page = _page_or_404(ctx, ctx.int_param("pageID"))
    if not ctx.caller.is_super_admin:
        raise denied(401, "You do not have access to delete this page.", "delete")
    if page["id"] != sitetree.HOME_PAGE_ID:
        # The home page is silently kept, but the answer still says "deleted".
        with ctx.store.transaction():
            sitetree.move_to_trash(ctx.store, int(page["id"]), ctx.now)
    return envelope.deleted(ctx, ctx.params["pageID"], "pages")
