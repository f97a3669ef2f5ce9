"""Walking lists: cursors, duplicates, repeated ``next``, bare arrays, results pages, the page tree."""

from __future__ import annotations

import httpx

from tests.support.api_clients import data, mock_client


def page(ident: int, path: str = "") -> dict[str, object]:
    return {"id": ident, "path": path or f"/p{ident}", "name": f"P{ident}"}


class Lister:
    """A cursor list like the real server's: ``next`` = last id even on the last page, keyset on id desc."""

    def __init__(self, ids: list[int], *, enveloped: bool = True, duplicate_every: int = 0) -> None:
        self.ids = ids
        self.enveloped = enveloped
        self.duplicate_every = duplicate_every
        self.queries: list[dict[str, str]] = []

    def __call__(self, request: httpx.Request) -> httpx.Response:
        query = dict(request.url.params)
        self.queries.append(query)
        limit = int(query.get("limit", "10"))
        assert 1 <= limit <= 100
        ids = self.ids
        if "after" in query:
            after = int(query["after"])
            ids = ids[ids.index(after) + 1 :] if after in ids else []
        chunk = ids[:limit]
        if self.duplicate_every and len(chunk) > 2:
            chunk = [chunk[i - 1] if i % self.duplicate_every == 0 else c for i, c in enumerate(chunk)]
        items = [page(i) for i in chunk]
        if not self.enveloped:
            return httpx.Response(200, json=items)
        cursor = {
            "current": query.get("after"),
            "prev": None,
            "next": chunk[-1] if chunk else None,
            "count": len(chunk),
        }
        return httpx.Response(200, json={"data": items, "meta": {"cursor": cursor}})


async def test_walk_stops_on_short_page_and_uses_limit_100() -> None:
    lister = Lister(list(range(250, 0, -1)))
    async with mock_client(lister) as client:
        found = [p.id async for p in client.iter_pages()]
    assert found == list(range(250, 0, -1))
    assert [q.get("after") for q in lister.queries] == [None, "151", "51"]
    assert {q["limit"] for q in lister.queries} == {"100"}


async def test_walk_with_exact_multiple_stops_on_empty_page() -> None:
    lister = Lister(list(range(200, 0, -1)))
    async with mock_client(lister) as client:
        found = [p.id async for p in client.iter_pages()]
    assert len(found) == 200
    assert len(lister.queries) == 3


async def test_walk_never_asks_more_than_100() -> None:
    lister = Lister(list(range(30, 0, -1)))
    async with mock_client(lister) as client:
        found = [p.id async for p in client.iter_users(limit=1000)]
    assert len(found) == 30
    assert lister.queries[0]["limit"] == "100"


async def test_walk_deduplicates() -> None:
    lister = Lister(list(range(25, 0, -1)), duplicate_every=3)
    async with mock_client(lister) as client:
        found = [p.id async for p in client.iter_pages(limit=10)]
    assert len(found) == len(set(found))


async def test_walk_stops_when_next_repeats() -> None:
    def same_page(request: httpx.Request) -> httpx.Response:
        items = [page(i) for i in range(10, 0, -1)]
        return httpx.Response(200, json={"data": items, "meta": {"cursor": {"next": 1, "count": 10}}})

    async with mock_client(same_page) as client:
        found = [p.id async for p in client.iter_pages(limit=10)]
    assert found == list(range(10, 0, -1))


async def test_walk_stops_when_an_unknown_cursor_restarts_the_list() -> None:
    # Files: an unknown ``after`` answers the first page again.
    calls = []

    def files(request: httpx.Request) -> httpx.Response:
        calls.append(request)
        items = [{"id": f"uuid-{i}"} for i in range(3)]
        return httpx.Response(200, json={"data": items, "meta": {"cursor": {"next": "uuid-2", "count": 3}}})

    async with mock_client(files) as client:
        found = [f.id async for f in client.iter_files(limit=3)]
    assert found == ["uuid-0", "uuid-1", "uuid-2"]
    assert len(calls) == 2


async def test_walk_bare_arrays_use_last_id() -> None:
    lister = Lister(list(range(120, 0, -1)), enveloped=False)
    async with mock_client(lister) as client:
        found = [p.id async for p in client.iter_groups()]
    assert len(found) == 120
    assert lister.queries[1]["after"] == "21"


async def test_versions_use_results_pages() -> None:
    queries = []

    def versions(request: httpx.Request) -> httpx.Response:
        query = dict(request.url.params)
        queries.append(query)
        number, limit = int(query["resultsPage"]), int(query["limit"])
        ids = list(range(150, 0, -1))[(number - 1) * limit : number * limit]
        return data([{"id": i, "is_approved": int(i == 150)} for i in ids])

    async with mock_client(versions) as client:
        found = await client.list_page_versions(7)
    assert [v.id for v in found] == list(range(150, 0, -1))
    assert found[0].is_approved
    assert not found[1].is_approved
    assert [q["resultsPage"] for q in queries] == ["1", "2"]


async def test_page_tree() -> None:
    tree = {1: [2, 3], 2: [4], 3: [5, 2], 4: [], 5: []}

    def api(request: httpx.Request) -> httpx.Response:
        parts = request.url.path.split("/")
        if parts[-1] == "children":
            return data([page(c) for c in tree[int(parts[-2])]])
        return data(page(int(parts[-1]), "/"))

    async with mock_client(api) as client:
        nodes = [n async for n in client.walk_page_tree()]
    assert [(n.page.id, n.parent_id, n.depth) for n in nodes] == [
        (1, None, 0),
        (2, 1, 1),
        (3, 1, 1),
        (4, 2, 2),
        (5, 3, 2),
    ]
    async with mock_client(api) as client:
        shallow = [n.page.id async for n in client.walk_page_tree(max_depth=1, include_root=False)]
    assert shallow == [2, 3]
