"""Blocks in areas, blocks by id, and page versions (concrete-api.md §5, §7 Areas/Blocks/Versions, §8, §13)."""

from __future__ import annotations

from typing import Any

import httpx
import pytest

from cmssync.emulator.embedded import Sandbox


def _errors(response: httpx.Response) -> list[str]:
    errors: list[str] = response.json()["errors"]
    return errors


def _recent_blocks(api: httpx.Client, page: int, area: str = "Main") -> list[dict[str, Any]]:
    areas = api.get(f"/pages/{page}", params={"includes": "areas", "version": "recent"}).json()["data"]["areas"]["data"]
    for entry in areas:
        if entry["name"] == area:
            blocks: list[dict[str, Any]] = entry["blocks"]["data"]
            return blocks
    return []


def _new_page(api: httpx.Client, name: str = "Blocks") -> int:
    page_id: int = api.post("/pages", json={"parent": 1, "name": name, "type": "page", "template": "full"}).json()[
        "data"
    ]["id"]
    return page_id


def test_add_block_answers_the_block_with_its_draft_page(api: httpx.Client, sandbox: Sandbox) -> None:
    page = _new_page(api)
    response = api.post(
        f"/pages/{page}/Main",
        json={"type": "content", "value": {"content": f'<a href="{sandbox.url}/about">x</a>', "junk": 1}},
    )
    assert response.status_code == 200
    block = response.json()["data"]
    assert list(block) == ["id", "type", "value", "page"]
    assert block["value"] == {"content": '<a href="{CCM:BASE_URL}/about">x</a>'}
    assert block["page"]["data"]["version"]["data"]["id"] == 2
    assert block["page"]["data"]["version"]["data"]["is_approved"] == 0


def test_consecutive_changes_share_one_draft(api: httpx.Client) -> None:
    page = _new_page(api)
    versions = [
        api.post(f"/pages/{page}/Main", json={"type": "html", "value": {"content": str(n)}}).json()["data"]["page"][
            "data"
        ]["version"]["data"]["id"]
        for n in range(3)
    ]
    assert versions == [2, 2, 2]
    api.put(f"/pages/{page}", json={"name": "Renamed"})
    listed = api.get(f"/page_versions/{page}").json()["data"]
    assert [(v["id"], v["is_approved"]) for v in listed] == [(2, 0), (1, 1)]
    assert [b["value"]["content"] for b in _recent_blocks(api, page)] == ["0", "1", "2"]
    live = api.get(f"/pages/{page}", params={"includes": "areas"}).json()["data"]
    assert live["areas"]["data"] == []


def test_first_update_after_approval_gives_the_block_a_new_id(api: httpx.Client) -> None:
    page = _new_page(api)
    old = api.post(f"/pages/{page}/Main", json={"type": "content", "value": {"content": "<p>a</p>"}}).json()["data"]
    api.put(f"/page_versions/{page}/2", json={"is_approved": True})
    first = api.put(f"/pages/{page}/Main/{old['id']}", json={"value": {"content": "<p>b</p>"}}).json()["data"]
    assert first["id"] != old["id"]
    assert first["page"]["data"]["version"]["data"]["id"] == 3
    second = api.put(f"/pages/{page}/Main/{first['id']}", json={"value": {"content": "<p>c</p>"}}).json()["data"]
    assert second["id"] == first["id"]
    stale = api.put(f"/pages/{page}/Main/{old['id']}", json={"value": {"content": "<p>d</p>"}})
    assert stale.status_code == 400
    assert _errors(stale) == ["Block not found."]
    # The live version still shows the old block; GET /blocks/{old} still finds it.
    assert api.get(f"/blocks/{old['id']}").json()["data"]["value"] == {"content": "<p>a</p>"}


def test_block_values_are_strings_and_typeless_blocks_are_empty_lists(api: httpx.Client) -> None:
    page = _new_page(api)
    title = api.post(
        f"/pages/{page}/Main", json={"type": "page_title", "value": {"useCustomTitle": True, "titleText": 5}}
    ).json()["data"]
    assert title["value"]["useCustomTitle"] == "1"
    assert title["value"]["titleText"] == "5"
    rule = api.post(f"/pages/{page}/Main", json={"type": "horizontal_rule", "value": {}}).json()["data"]
    assert rule["value"] == []
    file_block = api.post(f"/pages/{page}/Main", json={"type": "file", "value": {"fID": "0"}}).json()["data"]
    assert file_block["value"] == {"fID": "", "fileLinkText": "", "filePassword": "", "forceDownload": "0"}


def test_failed_block_validation_is_an_error_list_with_status_200(api: httpx.Client) -> None:
    page = _new_page(api)
    block = api.post(f"/pages/{page}/Main", json={"type": "file", "value": {"fID": "0"}}).json()["data"]
    response = api.put(f"/pages/{page}/Main/{block['id']}", json={"value": {"fID": "0", "fileLinkText": ""}})
    assert response.status_code == 200
    assert _errors(response) == ["You must select a file.", "You must enter the link text."]


@pytest.mark.parametrize(
    ("path", "body", "status", "errors"),
    [
        ("/pages/999999/Main", {"type": "content", "value": {}}, 400, ["Page not found."]),
        ("/pages/2/Main", {"type": "nope", "value": {}}, 400, ["Invalid block type handle."]),
        ("/pages/2/Main/999999", None, 400, ["Block not found."]),
        ("/pages/2/NoSuchArea/1", None, 400, ["Area not found."]),
        ("/pages/999999/Main/1", None, 400, ["Page not found."]),
    ],
)
def test_area_errors_are_400(
    api: httpx.Client, path: str, body: dict[str, object] | None, status: int, errors: list[str]
) -> None:
    response = api.post(path, json=body) if body is not None else api.put(path, json={"value": {"content": "x"}})
    assert response.status_code == status
    assert _errors(response) == errors
    if body is None:
        assert _errors(api.delete(path)) == errors


@pytest.mark.parametrize(
    ("body", "needle"),
    [
        ({"type": "content"}, "Undefined array key &quot;value&quot;"),
        ({"value": {}}, "Undefined array key &quot;type&quot;"),
        ({"type": "content", "value": "text"}, "must be of type array, string given"),
    ],
)
def test_add_block_with_a_bad_body_is_a_500(api: httpx.Client, body: dict[str, object], needle: str) -> None:
    response = api.post("/pages/2/Main", json=body)
    assert response.status_code == 500
    assert needle in response.text


def test_area_with_a_space_and_non_numeric_page(api: httpx.Client) -> None:
    added = api.post("/pages/2/Sidebar Area", json={"type": "html", "value": {"content": "x"}})
    assert added.status_code == 200
    assert api.post("/pages/abc/Main", json={"type": "html", "value": {}}).status_code == 404


def test_delete_block_in_area_answers_the_draft_version(api: httpx.Client) -> None:
    blocks = _recent_blocks(api, 2)
    response = api.delete(f"/pages/2/Main/{blocks[0]['id']}")
    assert response.status_code == 200
    body = response.json()
    assert list(body) == ["id", "object", "deleted", "version"]
    assert body["id"] == str(blocks[0]["id"])
    assert body["version"]["id"] == 2
    assert body["version"]["is_approved"] == 0
    assert _recent_blocks(api, 2) == []
    again = api.delete(f"/pages/2/Main/{blocks[0]['id']}")
    assert _errors(again) == ["Block not found."]


def test_blocks_by_id(api: httpx.Client, guest_api: httpx.Client) -> None:
    block = _recent_blocks(api, 2)[0]
    read = api.get(f"/blocks/{block['id']}", params={"includes": "pages"}).json()["data"]
    assert list(read) == ["id", "type", "value", "pages"]
    assert [p["id"] for p in read["pages"]["data"]] == [2]
    assert api.get("/blocks/999999").status_code == 404
    assert _errors(api.get("/blocks/999999")) == ["Block not found"]
    assert api.get("/blocks/abc").status_code == 404
    assert _errors(guest_api.get(f"/blocks/{block['id']}")) == ["You do not have access to view this block."]
    assert api.put(f"/blocks/{block['id']}", json={}).status_code == 404  # no such route
    assert api.delete(f"/blocks/{block['id']}").json() == {"id": str(block["id"]), "object": "blocks", "deleted": True}
    assert api.get(f"/blocks/{block['id']}").status_code == 404
    # Blocks::delete bypasses versions: the block is gone from the live version too.
    live = api.get("/pages/2", params={"includes": "areas"}).json()["data"]["areas"]["data"]
    assert all(b["id"] != block["id"] for a in live for b in a["blocks"]["data"])


# --- page versions -------------------------------------------------------------------------------------------------


def test_version_list_paging(api: httpx.Client) -> None:
    page = _new_page(api)
    for n in range(3):
        api.put(f"/pages/{page}", json={"name": f"v{n}"})
        api.put(f"/page_versions/{page}/{n + 2}", json={"is_approved": True})
    everything = api.get(f"/page_versions/{page}").json()
    assert set(everything) == {"data"}
    assert [v["id"] for v in everything["data"]] == [4, 3, 2, 1]
    second = api.get(f"/page_versions/{page}", params={"limit": "2", "resultsPage": "2", "after": "4"}).json()
    assert [v["id"] for v in second["data"]] == [2, 1]
    assert api.get(f"/page_versions/{page}", params={"limit": "2", "resultsPage": "99"}).json() == {"data": []}


def test_approve_deny_and_publish_end_date(api: httpx.Client) -> None:
    page = _new_page(api)
    api.put(f"/pages/{page}", json={"name": "Draft"})
    approved = api.put(f"/page_versions/{page}/2", json={"is_approved": True}).json()["data"]
    assert approved["is_approved"] == 1
    assert approved["date_approved"] is not None
    ended = api.put(f"/page_versions/{page}/2", json={"publish_end_date": "2032-05-06T07:08:09+00:00"}).json()["data"]
    assert ended["publish_end_date"] == "2032-05-06 07:08:09"
    garbage = api.put(f"/page_versions/{page}/2", json={"publish_end_date": "not a date"})
    assert garbage.status_code == 500
    back = api.put(f"/page_versions/{page}/1", json={"is_approved": "1"}).json()["data"]
    assert back["is_approved"] == 1
    assert api.get(f"/page_versions/{page}/2").json()["data"]["is_approved"] == 0
    denied = api.put(f"/page_versions/{page}/1", json={"is_approved": False}).json()["data"]
    assert denied["is_approved"] == 1  # the answer is the object as it was before
    orphan = api.get(f"/pages/{page}").json()["data"]
    assert orphan["name"] is None
    assert orphan["template"] is False
    assert set(orphan["version"]["data"].values()) == {None}


def test_delete_versions(api: httpx.Client) -> None:
    page = _new_page(api)
    api.put(f"/pages/{page}", json={"name": "Draft"})
    live = api.delete(f"/page_versions/{page}/1")
    assert live.status_code == 401
    assert _errors(live) == ["You may not delete the approved version of a page."]
    assert api.delete(f"/page_versions/{page}/2").json() == {"id": "2", "object": "page_versions", "deleted": True}
    for method in ("get", "put", "delete"):
        response = api.request(method.upper(), f"/page_versions/{page}/2", json={} if method == "put" else None)
        assert response.status_code == 404
        assert _errors(response) == ["Version not found"]


def test_versions_of_an_unknown_page_are_500s(api: httpx.Client, guest_api: httpx.Client) -> None:
    assert api.get("/page_versions/999999").status_code == 500
    assert api.get("/page_versions/999999/1").status_code == 500
    assert api.get("/page_versions/abc").status_code == 404
    assert _errors(guest_api.get("/page_versions/999999")) == [
        "You do not have access to read versions about this page."
    ]
