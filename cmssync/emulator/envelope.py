"""Success envelopes and list paging, per dialect.

``concrete``: ``{"data": …}`` for items and lists, lists with a cursor carry
``meta.cursor = {current, prev: null, next, count}`` where ``next`` is the id of the last item *even on the last
page*. ``documented``: the bare object or array. Delete results are never wrapped.

``limit`` must be an integer 1..100 or the request dies with an uncaught exception (HTTP 500).
"""

from __future__ import annotations

import re
from typing import Any

from starlette.responses import Response

from cmssync.emulator import responses
from cmssync.emulator.context import Ctx
from cmssync.emulator.phperror import PhpError

_DIGITS = re.compile(r"^\d+$")


def invalid_limit() -> PhpError:
    return PhpError(
        "Concrete\\Core\\Api\\Exception\\InvalidLimitQueryParameterValueException",
        "Invalid limit query parameter found. Value must be between 1 and 100.",
    )


def limit(ctx: Ctx, default: int = 10) -> int:
    text = ctx.query("limit")
    if text is None:
        return default
    if not _DIGITS.match(text) or not 1 <= int(text) <= 100:
        raise invalid_limit()
    return int(text)


def item(ctx: Ctx, value: Any) -> Response:
    return responses.data(value if ctx.documented else {"data": value})


def collection(ctx: Ctx, values: list[Any], *, cursor_next: Any = None, with_cursor: bool = True) -> Response:
    if ctx.documented:
        return responses.data(values)
    body: dict[str, Any] = {"data": values}
    if with_cursor:
        body["meta"] = {
            "cursor": {
                "current": ctx.query("after"),
                "prev": None,
                "next": cursor_next if values else None,
                "count": len(values),
            }
        }
    return responses.data(body)


def deleted(ctx: Ctx, object_id: str, kind: str, version: dict[str, Any] | None = None) -> Response:
    body: dict[str, Any] = {"id": object_id, "object": kind, "deleted": True}
    if version is not None:
        body["version"] = version
    return responses.plain_json(body)
