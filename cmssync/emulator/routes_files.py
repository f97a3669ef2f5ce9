"""``/files``: list, read, upload (multipart), update, move (form field), delete; plus the public file URLs.

Uploads and moves read PHP form fields, not JSON. The folder of an upload defaults to the file-manager root; a
folder that is not a number or not a folder is "Unable to find specified folder". A Guest (client credentials) is
refused with 403 "Invalid file extension." — the permission check is the file-type check. Update and move ask for the
permission key ``edit_file``, which does not exist on 9.3, so anyone but the super admin gets a 500.
"""

from __future__ import annotations

import sqlite3
from typing import Any

from starlette.datastructures import UploadFile
from starlette.requests import Request
from starlette.responses import Response

from cmssync.emulator import envelope, filestore, responses
from cmssync.emulator.catalog import MIME_TYPES, POST_MAX_BYTES, UPLOAD_EXTENSIONS, UPLOAD_MAX_BYTES
from cmssync.emulator.context import ApiError, Ctx, denied, not_found
from cmssync.emulator.phperror import PhpError

FOLDER_NOT_FOUND = "Unable to find specified folder"
_FORM_TYPES = ("application/x-www-form-urlencoded", "multipart/form-data")


def _edit_file_key() -> PhpError:
    # 9.3 asks for the permission key "edit_file", which does not exist: a 500 for all but the super admin.
    return PhpError("Exception", "Unable to get permission key for edit_file")


def _file_or_404(ctx: Ctx, message: str) -> sqlite3.Row:
    row = filestore.find(ctx.store, ctx.params["fID"])
    if row is None:
        raise not_found(404, message, "File not found")
    return row


def _fresh_file(ctx: Ctx, num_id: int) -> Response:
    """The answer to a change of a file: the file as stored after it."""
    fresh = ctx.store.one("SELECT * FROM files WHERE num_id = ?", num_id)
    assert fresh is not None
    return envelope.item(ctx, ctx.render.file(fresh, includes=ctx.includes))


def _is_form(request: Request) -> bool:
    return request.headers.get("content-type", "").split(";")[0].strip().lower() in _FORM_TYPES


def _folder(ctx: Ctx, value: Any, *, default_root: bool) -> int:
    text = value.strip() if isinstance(value, str) else ""
    if default_root and text in ("", "0"):
        return filestore.root_folder(ctx.store)
    if not text.isdigit() or len(text) > 18 or not filestore.folder_exists(ctx.store, int(text)):
        raise ApiError(400, FOLDER_NOT_FOUND)
    return int(text)


async def upload(ctx: Ctx) -> Response:
    length = ctx.request.headers.get("content-length", "")
    if length.isdigit() and int(length) > POST_MAX_BYTES:
        # Over post_max_size PHP drops every field and file.
        raise ApiError(400, "Invalid file.")
    if not _is_form(ctx.request):
        raise ApiError(400, "Invalid file.")
    try:
        form = await ctx.request.form(max_files=20, max_fields=1000)
    except Exception:  # a malformed multipart body is an empty $_FILES to PHP
        raise ApiError(400, "Invalid file.") from None
    try:
        folder_id = _folder(ctx, form.get("folder"), default_root=True)
        upload = form.get("file")
        if not isinstance(upload, UploadFile):
            raise ApiError(400, "Invalid file.")
        content = await upload.read(UPLOAD_MAX_BYTES + 1)
        if len(content) > UPLOAD_MAX_BYTES:
            raise ApiError(400, "The uploaded file exceeds the upload_max_filesize directive in php.ini.")
        filename = (upload.filename or "").replace("\\", "/").rsplit("/", 1)[-1]
    finally:
        await form.close()
    extension = filename.rsplit(".", 1)[-1].lower() if "." in filename else ""
    if ctx.caller.is_guest or not ctx.caller.is_super_admin or (extension and extension not in UPLOAD_EXTENSIONS):
        raise ApiError(
            403,
            "Invalid file extension.",
            documented=(401, "You do not have the proper permissions to update this resource"),
        )
    if not extension:
        return responses.unexpected_error_page(f'The file extension "{extension}" is not valid.')
    with ctx.store.transaction():
        row = filestore.add(
            ctx.store, filename=filename, content=content, folder_id=folder_id, ts=ctx.now, rng=ctx.emu.upload_rng
        )
    # size.exact is an int only here (recorded).
    return envelope.item(ctx, ctx.render.file(row, exact_as_int=True, includes=ctx.includes))


async def list_files(ctx: Ctx) -> Response:
    limit = envelope.limit(ctx)
    if not ctx.caller.is_super_admin:
        return envelope.collection(ctx, [])  # permission filtering hides every file from Guest and plain users
    after = ctx.query("after")
    cursor = filestore.find(ctx.store, after) if after else None
    where, params = "1 = 1", []
    if cursor is not None:
        # Unknown "after": the filter is skipped and the first page comes back (recorded).
        where = "(date_added < ? OR (date_added = ? AND num_id < ?))"
        params = [cursor["date_added"], cursor["date_added"], cursor["num_id"]]
    rows = ctx.store.all(
        f"SELECT * FROM files WHERE {where} ORDER BY date_added DESC, tiebreak LIMIT ?", *params, limit
    )
    items = [ctx.render.file(r, includes=ctx.includes) for r in rows]
    return envelope.collection(ctx, items, cursor_next=rows[-1]["uuid"] if rows else None)


async def read(ctx: Ctx) -> Response:
    row = _file_or_404(ctx, "File not found.")
    if not ctx.caller.is_super_admin:
        raise denied(401, "You do not have access to read properties about this file.", "access")
    return envelope.item(ctx, ctx.render.file(row, includes=ctx.includes))


async def update(ctx: Ctx) -> Response:
    row = _file_or_404(ctx, "File not found")
    if not ctx.caller.is_super_admin:
        raise _edit_file_key()
    data = ctx.json()
    data = data if isinstance(data, dict) else {}
    changes: dict[str, str] = {}
    for key in ("title", "description"):
        if key in data and data[key] is not None:
            changes[key] = str(data[key])
    if "tags" in data and data["tags"] is not None:
        changes["tags"] = filestore.normalize_tags(str(data["tags"]))
    with ctx.store.transaction():
        for column, value in changes.items():
            ctx.store.db.execute(f"UPDATE files SET {column} = ? WHERE num_id = ?", (value, row["num_id"]))
        if isinstance(data.get("attributes"), dict):
            filestore.set_attributes(ctx.store, int(row["num_id"]), data["attributes"])
        # An update makes a new file version, dated now: the file moves to the top of GET /files
        # (lists.jsonl, feed.files.after_file_update).
        ctx.store.db.execute("UPDATE files SET date_added = ? WHERE num_id = ?", (ctx.now, row["num_id"]))
    return _fresh_file(ctx, row["num_id"])


async def move(ctx: Ctx) -> Response:
    row = _file_or_404(ctx, "File not found")
    if not ctx.caller.is_super_admin:
        raise _edit_file_key()
    folder: Any = None
    if _is_form(ctx.request):
        try:
            form = await ctx.request.form(max_files=20, max_fields=1000)
        except Exception:
            form = None
        if form is not None:
            folder = form.get("folder")
            await form.close()
    folder_id = _folder(ctx, folder, default_root=False)
    with ctx.store.transaction():
        ctx.store.db.execute("UPDATE files SET folder_id = ? WHERE num_id = ?", (folder_id, row["num_id"]))
    return _fresh_file(ctx, row["num_id"])


async def delete(ctx: Ctx) -> Response:
    row = _file_or_404(ctx, "File not found")
    if not ctx.caller.is_super_admin:
        raise denied(400, "You do not have access to delete this file.", "delete")
    with ctx.store.transaction():
        ctx.store.db.execute("DELETE FROM files WHERE num_id = ?", (row["num_id"],))
        ctx.store.db.execute("DELETE FROM file_attributes WHERE file_id = ?", (row["num_id"],))
    return envelope.deleted(ctx, ctx.params["fID"], "files")


def serve_bytes(row: sqlite3.Row, *, download: bool) -> Response:
    """The bytes of a file at its public URL (or as a download at its tracked URL)."""
    extension = row["filename"].rsplit(".", 1)[-1].lower() if "." in row["filename"] else ""
    headers = {"content-type": MIME_TYPES.get(extension, "application/octet-stream")}
    if download:
        headers["content-disposition"] = f'attachment; filename="{row["filename"]}"'
    return Response(bytes(row["content"]), headers=headers)
