"""Walking the API's lists, and what the endpoint modules share (parsing answers into models).

Cursor lists (``/pages``, ``/files``, ``/users``, ``/groups``) are walked with ``limit=100`` and ``after=<cursor>``.
A real server sets ``meta.cursor.next`` even on the last page, repeats and skips items when sort keys tie
(concrete-api.md §13) and, for files, answers an unknown ``after`` with the first page again. So a walk stops when a
page is empty, shorter than the limit, brings nothing new, or offers a cursor already used, and it yields each id
once. Even so a walk of ``/pages`` can miss pages on a real site: the page tree (``walk_page_tree``) is the reliable
way to enumerate pages. Without ``meta`` (the documented dialect) the cursor is the id of the last item.

Version lists use the older ``limit`` + ``resultsPage`` paging and carry no meta.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable, Mapping, Sequence
from typing import Any, TypeVar

from pydantic import BaseModel, ValidationError

from cmssync.api.errors import UnexpectedResponse, short
from cmssync.api.models import DeleteResult
from cmssync.api.retry import Kind
from cmssync.api.transport import DELETED_ON_RETRY, Transport

MAX_LIMIT = 100
M = TypeVar("M", bound=BaseModel)


def split_list(body: Any, *, method: str = "GET", path: str = "") -> tuple[list[Any], Any]:
    """``(items, next_cursor)`` of a list answer, enveloped (``{"data": [...], "meta": …}``) or a bare array."""
    if isinstance(body, list):
        return body, None
    if isinstance(body, dict) and isinstance(body.get("data"), list):
        meta = body.get("meta")
        cursor = meta.get("cursor") if isinstance(meta, dict) else None
        following = cursor.get("next") if isinstance(cursor, dict) else None
        return body["data"], following
    if isinstance(body, dict) and body.get("data") is None and "data" in body:
        return [], None
    raise UnexpectedResponse(f"expected a list, got {short(repr(body), 80)}", method=method, path=path, status=200)


class Endpoints:
    """Base of the endpoint groups: holds the transport and turns answers into models."""

    def __init__(self, transport: Transport) -> None:
        self._t = transport

    def _model(self, model: type[M], body: Any, *, method: str, route: str) -> M:
        data = body
        if isinstance(data, dict) and "data" in data and set(data) <= {"data", "meta"}:
            data = data["data"]
        try:
            return model.model_validate(data)
        except ValidationError as exc:
            raise _shape_error(model, exc, method, self._t.api_prefix + route) from None

    async def _one(self, model: type[M], method: str, route: str, *, kind: Kind, **call: Any) -> M:
        """The one object ``method route`` answers (``call``: the body and the route's ``{name}`` parts)."""
        body = await self._t.call(method, route, kind=kind, **call)
        return self._model(model, body, method=method, route=route)

    async def _get(
        self, model: type[M], route: str, *, params: Mapping[str, Any] | None = None, **path_params: Any
    ) -> M:
        """The one object ``GET route`` answers (the route's ``{name}`` parts from ``path_params``)."""
        return await self._one(model, "GET", route, kind=Kind.READ, params=params, **path_params)

    def _deleted(self, body: Any, ident: object, kind: str, route: str) -> DeleteResult:
        """A delete's answer; a retried delete that found the object gone (:data:`DELETED_ON_RETRY`) succeeded."""
        if body is DELETED_ON_RETRY:
            return DeleteResult(id=str(ident), object=kind, deleted=True, confirmed_by_retry=True)
        return self._model(DeleteResult, body, method="DELETE", route=route)

    def _models(self, model: type[M], body: Any, *, method: str, route: str) -> list[M]:
        items, _ = split_list(body, method=method, path=self._t.api_prefix + route)
        return [self._model(model, item, method=method, route=route) for item in items]

    async def _walk(
        self,
        model: type[M],
        route: str,
        *,
        params: Mapping[str, str] | None = None,
        limit: int = MAX_LIMIT,
        sort_key: Callable[[M], object] | None = None,
        **path_params: Any,
    ) -> AsyncIterator[M]:
        """Every item of a cursor list once (see :func:`next_cursor` for ``sort_key``)."""
        limit = max(1, min(MAX_LIMIT, limit))
        seen: set[str] = set()
        used: set[str] = set()
        after: Any = None
        fallback: Any = None
        """The last item of the page before, when the cursor was the item before its trailing tie run."""
        while True:
            query = {**(params or {}), "limit": str(limit)}
            if after is not None:
                query["after"] = str(after)
            body = await self._t.call("GET", route, kind=Kind.READ, params=query, **path_params)
            items, following = split_list(body, path=self._t.api_prefix + route)
            page = [self._model(model, item, method="GET", route=route) for item in items]
            fresh = 0
            for parsed in page:
                key = str(getattr(parsed, "id", id(parsed))).lower()
                if key in seen:
                    continue
                seen.add(key)
                fresh += 1
                yield parsed
            if not items or len(items) < limit:
                return
            if fresh == 0:
                # A tie group longer than a page comes back as the same items whatever cursor lies before it:
                # go on from the last item, as the server suggests (the group's other members stay unreachable).
                if fallback is None or str(fallback) in used:
                    return
                following, fallback = fallback, None
            elif sort_key is not None:
                following = next_cursor(page, sort_key, limit=limit, used=used)
                last_id = getattr(page[-1], "id", None)
                fallback = last_id if following != last_id else None
            elif following is None:
                last = items[-1]
                following = last.get("id") if isinstance(last, dict) else None
            if following is None or str(following) in used:
                return
            used.add(str(following))
            after = following

    async def _first_page(self, model: type[M], route: str, *, limit: int, after: object | None = None) -> list[M]:
        """One page of a cursor list, newest first: what the drift feed polls (``cmssync.daemon.feed``)."""
        query = {"limit": str(max(1, min(MAX_LIMIT, limit)))}
        if after is not None:
            query["after"] = str(after)
        body = await self._t.call("GET", route, kind=Kind.READ, params=query)
        return self._models(model, body, method="GET", route=route)

    async def _walk_results_pages(
        self, model: type[M], route: str, *, limit: int = MAX_LIMIT, **path_params: Any
    ) -> AsyncIterator[M]:
        limit = max(1, min(MAX_LIMIT, limit))
        seen: set[str] = set()
        number = 1
        while True:
            query = {"limit": str(limit), "resultsPage": str(number)}
            body = await self._t.call("GET", route, kind=Kind.READ, params=query, **path_params)
            items, _ = split_list(body, path=self._t.api_prefix + route)
            fresh = 0
            for item in items:
                parsed = self._model(model, item, method="GET", route=route)
                key = str(getattr(parsed, "id", id(parsed)))
                if key in seen:
                    continue
                seen.add(key)
                fresh += 1
                yield parsed
            if len(items) < limit or fresh == 0:
                return
            number += 1


def next_cursor(page: Sequence[M], sort_key: Callable[[M], object], *, limit: int, used: set[str]) -> object:
    """The ``after`` cursor for the page following ``page`` that skips no item.

    A real server filters ``(sort column, id) < (cursor's sort column, cursor's id)`` but orders by the sort column
    alone (concrete-api.md §4, §13), so when a page ends inside a group of items with the same sort value, the
    group's members that fall after the cut and have a higher id than the last item are never returned. Taking as
    cursor the last item *before* that trailing group makes the next page start with the whole group (its members
    seen already are dropped by id): one request reads a group that fits a page (recorded on a real site:
    ``ties.*`` in ``tests/conformance/concrete-9.3.1/lists.jsonl``). A page that is all one group is cut at its last
    item, and when the page after a cursor before the group brings nothing new (the group is longer than a page and
    the server returns the same members first), the walk goes on from the last item (:meth:`Endpoints._walk`):
    members of a group longer than a page beyond what the server returns first cannot be listed at all.
    """
    last = page[-1]
    tail = sort_key(last)
    run = 1
    while run < len(page) and sort_key(page[-run - 1]) == tail:
        run += 1
    if run < len(page):
        cursor = getattr(page[-run - 1], "id", None)
        if cursor is not None and str(cursor) not in used:
            return cursor
    return getattr(last, "id", None)


def _shape_error(model: type[BaseModel], exc: ValidationError, method: str, path: str) -> UnexpectedResponse:
    first = exc.errors()[0] if exc.errors() else None
    where = ".".join(str(p) for p in first["loc"]) if first else "?"
    what = first["msg"] if first else str(exc)
    return UnexpectedResponse(
        f"the answer is not a {model.__name__}: {short(where, 60)}: {short(what, 80)}",
        method=method,
        path=path,
        status=200,
    )


def includes_param(includes: tuple[str, ...] | list[str] | str | None) -> dict[str, str]:
    """``includes`` as the comma-separated string Fractal reads; empty when nothing is asked."""
    if not includes:
        return {}
    text = includes if isinstance(includes, str) else ",".join(includes)
    return {"includes": text}
