"""The user list without id probes: a one-page list is complete; only a list spanning pages is completed id by id.

Issue 14: on a one-user real site, every ``pull`` and every plan naming a new user read ``/users/2`` … ``/users/21``
(twenty 404s) after the list, looking for users the list might have skipped. Skips only happen across a page
boundary (tied ``date_added``), so a list that fits on one page is trusted.
"""

from __future__ import annotations

import httpx

from tests.support.api_clients import mock_client


def user(ident: int) -> dict[str, object]:
    return {"id": ident, "username": f"user{ident}", "email": f"u{ident}@example.com", "date_added": "2026-01-01"}


class UserSite:
    """``GET /users`` (one page per ``limit``, keyset on id desc) and ``GET /users/{id}``; remembers every path."""

    def __init__(self, ids: list[int], *, hidden: tuple[int, ...] = (), repeat_first: bool = False) -> None:
        self.ids = sorted(ids, reverse=True)
        self.hidden = set(hidden)
        self.repeat_first = repeat_first
        self.paths: list[str] = []

    def __call__(self, request: httpx.Request) -> httpx.Response:
        path = request.url.path.removeprefix("/ccm/api/1.0")
        self.paths.append(path)
        if path.startswith("/users/"):
            ident = int(path.rsplit("/", 1)[1])
            if ident in self.ids:
                return httpx.Response(200, json={"data": user(ident)})
            return httpx.Response(404, json={"error": True, "errors": ["User not found."]})
        query = dict(request.url.params)
        limit = int(query["limit"])
        listed = [i for i in self.ids if i not in self.hidden]
        if "after" in query:
            after = int(query["after"])
            listed = [i for i in listed if i < after]
        chunk = listed[:limit]
        if self.repeat_first and chunk:
            chunk = [*chunk, chunk[0]]
        cursor = {"next": chunk[-1] if chunk else None, "count": len(chunk)}
        return httpx.Response(200, json={"data": [user(i) for i in chunk], "meta": {"cursor": cursor}})


async def test_a_one_user_site_costs_one_request() -> None:
    site = UserSite([1])
    async with mock_client(site) as client:
        users = await client.all_users()
        listed, complete = await client.list_users()
    assert [u.id for u in users] == [1]
    assert ([u.id for u in listed], complete) == ([1], True)
    assert site.paths == ["/users", "/users"]


async def test_a_short_list_is_trusted_gaps_are_deleted_users() -> None:
    site = UserSite([1, 2, 5, 9])
    async with mock_client(site) as client:
        users = await client.all_users()
    assert sorted(u.id for u in users) == [1, 2, 5, 9]
    assert site.paths == ["/users"]


async def test_a_list_with_a_repeated_id_is_not_trusted() -> None:
    site = UserSite([1, 2, 3], hidden=(2,), repeat_first=True)
    async with mock_client(site) as client:
        listed, complete = await client.list_users()
        users = await client.all_users()
    assert complete is False
    assert sorted(u.id for u in listed) == [1, 3]
    assert sorted(u.id for u in users) == [1, 2, 3], "the skipped user is found by its id"


async def test_a_list_spanning_pages_is_completed_by_id() -> None:
    ids = list(range(1, 131))
    site = UserSite(ids, hidden=(60,))
    async with mock_client(site) as client:
        users = await client.all_users()
    assert sorted(u.id for u in users) == ids
    probes = [p for p in site.paths if p.startswith("/users/")]
    assert "/users/60" in probes
    assert len(probes) == 1 + 20, "the skipped id, then twenty misses above the highest"
