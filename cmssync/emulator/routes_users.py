"""``/users`` and ``/groups`` (``Users.php``, ``Groups.php``).

Quirks kept: ``POST /users`` has no permission check besides the scope (a Guest can create users); validation
failures are HTTP 401; ``PUT /users/{id}`` answers the user as it was *before* the update and refuses the user's own
current username or email as taken; ``change_password`` reads a form field (a JSON body counts as an empty
password); ``DELETE /users/1`` says "deleted" and keeps the super admin. Group lists leave out Guest (1) and
Registered Users (2); reading one group asks for a permission key that does not exist (500 for all but user 1).
"""

from __future__ import annotations

import sqlite3
from typing import Any

from starlette.responses import Response

from cmssync.emulator import envelope, userstore
from cmssync.emulator.blocktypes.model import php_string
from cmssync.emulator.catalog import SUPER_ADMIN_ID, USER_ATTRIBUTE_KEYS
from cmssync.emulator.context import ApiError, Ctx, as_id, denied, missing_key, not_found, php_type
from cmssync.emulator.phperror import PhpError
from cmssync.emulator.store import dumps

_FORM_TYPES = ("application/x-www-form-urlencoded", "multipart/form-data")


def _user(ctx: Ctx, message: str) -> sqlite3.Row:
    row = userstore.get(ctx.store, ctx.int_param("uID"))
    if row is None:
        raise not_found(404, message, "User not found")
    return row


def _fresh_user(ctx: Ctx, user_id: int) -> Response:
    """The answer of a user route: the user as stored now."""
    row = userstore.get(ctx.store, user_id)
    assert row is not None
    return envelope.item(ctx, ctx.render.user(row, ctx.includes))


async def list_users(ctx: Ctx) -> Response:
    limit = envelope.limit(ctx)
    if not ctx.caller.is_super_admin:
        return envelope.collection(ctx, [])  # filtered by permissions after the query
    after = as_id(ctx.query("after") or "")
    cursor = userstore.get(ctx.store, after) if after is not None else None
    where, params = "1 = 1", []
    if cursor is not None:
        where = "(date_added < ? OR (date_added = ? AND id < ?))"
        params = [cursor["date_added"], cursor["date_added"], cursor["id"]]
    rows = ctx.store.all(
        f"SELECT * FROM users WHERE {where} ORDER BY date_added DESC, (id * 2654435761) % 4294967296 LIMIT ?",
        *params,
        limit,
    )
    items = [ctx.render.user(r, ctx.includes) for r in rows]
    return envelope.collection(ctx, items, cursor_next=int(rows[-1]["id"]) if rows else None)


async def read(ctx: Ctx) -> Response:
    row = _user(ctx, "User not found.")
    if not ctx.caller.is_super_admin and ctx.caller.user_id != row["id"]:
        raise denied(401, "You do not have access to read properties about this user.", "access")
    return envelope.item(ctx, ctx.render.user(row, {"groups", *ctx.includes}))


async def account(ctx: Ctx) -> Response:
    if ctx.caller.user_id is None:
        raise PhpError("RuntimeException", "There is no user associated with request")
    return _fresh_user(ctx, ctx.caller.user_id)


def _string(data: dict[str, Any], key: str) -> str:
    value = data[key]
    if not isinstance(value, str):
        raise PhpError("TypeError", f"Argument #1 (${key}) must be of type string, {php_type(value)} given")
    return value


async def create(ctx: Ctx) -> Response:
    data = ctx.json_object()
    for key in ("username", "email", "password"):
        if key not in data:
            raise missing_key(key)
    username, email, password = _string(data, "username"), str(data["email"]), str(data["password"])
    errors = [
        *userstore.username_errors(ctx.store, username),
        *userstore.email_errors(ctx.store, email),
        *userstore.password_errors(password),
    ]
    if errors:
        raise ApiError(401, *errors)
    language = data.get("language") if isinstance(data.get("language"), str) else None
    with ctx.store.transaction():
        user_id = userstore.create(
            ctx.store, username=username, email=email, password=password, ts=ctx.now, language=language or None
        )
    return _fresh_user(ctx, user_id)


async def update(ctx: Ctx) -> Response:
    before = _user(ctx, "User not found")
    if not ctx.caller.is_super_admin:
        raise denied(400, "You do not have access to edit this user.", "update")
    data = ctx.json()
    data = data if isinstance(data, dict) else {}
    errors: list[str] = []
    # The validators run without the user as subject: the user's own username/email count as taken.
    if data.get("username") is not None:
        errors += userstore.username_errors(ctx.store, str(data["username"]))
    if data.get("email") is not None:
        errors += userstore.email_errors(ctx.store, str(data["email"]))
    if errors:
        raise ApiError(401, *errors)
    with ctx.store.transaction():
        for column in ("username", "email", "language"):
            if data.get(column) is not None:
                ctx.store.db.execute(f"UPDATE users SET {column} = ? WHERE id = ?", (str(data[column]), before["id"]))
        if isinstance(data.get("attributes"), dict):
            for handle, value in data["attributes"].items():
                if handle in USER_ATTRIBUTE_KEYS:
                    ctx.store.db.execute(
                        "INSERT OR REPLACE INTO user_attributes (user_id, handle, av_id, value) VALUES (?, ?, ?, ?)",
                        (
                            before["id"],
                            handle,
                            ctx.store.next_counter("next_av_id", 300),
                            dumps(value in (True, 1, "1")),
                        ),
                    )
    # The answer is the user object loaded before the update (recorded: users.update.email).
    return envelope.item(ctx, ctx.render.user(before, ctx.includes))


async def change_password(ctx: Ctx) -> Response:
    row = _user(ctx, "User not found")
    if not ctx.caller.is_super_admin:
        raise denied(400, "You do not have access to change this user's password.", "update")
    password = ""
    if ctx.request.headers.get("content-type", "").split(";")[0].strip().lower() in _FORM_TYPES:
        try:
            form = await ctx.request.form()
        except Exception:
            form = None
        if form is not None:
            value = form.get("password")
            password = value if isinstance(value, str) else ""
            await form.close()
    errors = userstore.password_errors(password)
    if errors:
        raise ApiError(401, *errors)
    with ctx.store.transaction():
        ctx.store.db.execute(
            "UPDATE users SET password = ?, date_password_last_changed = ? WHERE id = ?",
            (userstore.hash_password(password), ctx.now, row["id"]),
        )
    return _fresh_user(ctx, int(row["id"]))


async def delete(ctx: Ctx) -> Response:
    row = _user(ctx, "User not found")
    if not ctx.caller.is_super_admin:
        raise denied(400, "You do not have access to delete this user.", "delete")
    if row["id"] != SUPER_ADMIN_ID:
        # UserInfo::delete() silently refuses the super admin; the answer still says "deleted".
        with ctx.store.transaction():
            for table, column in (("users", "id"), ("user_groups", "user_id"), ("user_attributes", "user_id")):
                ctx.store.db.execute(f"DELETE FROM {table} WHERE {column} = ?", (row["id"],))
        ctx.emu.forget_tokens()  # the user's tokens stop working
    return envelope.deleted(ctx, ctx.params["uID"], "users")


# --- groups ------------------------------------------------------------------------------------------------------


async def list_groups(ctx: Ctx) -> Response:
    limit = envelope.limit(ctx)
    after = as_id(ctx.query("after") or "")
    where, params = "id NOT IN (1, 2)", []
    if after is not None and ctx.store.one("SELECT 1 FROM groups WHERE id = ?", after) is not None:
        where += " AND id > ?"
        params.append(after)
    rows = ctx.store.all(f"SELECT * FROM groups WHERE {where} ORDER BY id LIMIT ?", *params, limit)
    return envelope.collection(
        ctx, [ctx.render.group(r) for r in rows], cursor_next=int(rows[-1]["id"]) if rows else None
    )


async def read_group(ctx: Ctx) -> Response:
    row = ctx.store.one("SELECT * FROM groups WHERE id = ?", ctx.int_param("gID"))
    if row is None:
        raise not_found(404, "Group not found.")
    if not ctx.caller.is_super_admin:
        raise PhpError("Exception", "Unable to get permission key for search_user_group")
    return envelope.item(ctx, ctx.render.group(row))


async def create_group(ctx: Ctx) -> Response:
    data = ctx.json_object()
    if "name" not in data:
        raise missing_key("name")
    if not ctx.caller.is_super_admin:
        raise denied(401, "You do not have permission to add a group beneath All Groups", "update")
    with ctx.store.transaction():
        cursor = ctx.store.db.execute("INSERT INTO groups (name) VALUES (?)", (php_string(data["name"]),))
    row = ctx.store.one("SELECT * FROM groups WHERE id = ?", cursor.lastrowid)
    assert row is not None
    return envelope.item(ctx, ctx.render.group(row))
