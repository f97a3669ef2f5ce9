"""Pages: list, children, read with includes, create, update, delete to trash (concrete-api.md §4, §7, §13)."""

from __future__ import annotations

import re

import httpx
import pytest

PAGE_KEYS = [
    "id",
    "path",
    "name",
    "date_added",
    "date_last_updated",
    "type",
    "template",
    "locale",
    "description",
    "version",
]
VERSION_KEYS = ["id", "is_approved", "date_created", "date_approved", "publish_end_date"]
ATOM = re.compile(r"^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\+00:00$")
DB_DATE = re.compile(r"^\d{4}-\d\d-\d\d \d\d:\d\d:\d\d$")


def _errors(response: httpx.Response) -> list[str]:
    body = response.json()
    assert body["error"] is True
    assert body["list"] == [{"message": m, "messageContainsHtml": False} for m in body["errors"]]
    errors: list[str] = body["errors"]
    return errors


def test_read_page_shape(api: httpx.Client) -> None:
    response = api.get("/pages/1")
    assert response.status_code == 200
    assert response.headers["content-type"] == "application/json"
    page = response.json()["data"]
    assert list(page) == PAGE_KEYS
    assert page["path"] is None
    assert ATOM.match(page["date_added"])
    version = page["version"]["data"]
    assert list(version) == VERSION_KEYS
    assert version["is_approved"] == 1
    assert DB_DATE.match(version["date_created"])


@pytest.mark.parametrize(
    ("includes", "keys"),
    [
        ("custom_attributes", ["custom_attributes"]),
        ("areas", ["areas"]),
        ("files", ["files"]),
        ("content", ["content"]),
        ("areas.content", ["areas"]),
        ("content,files,areas,custom_attributes", ["custom_attributes", "areas", "files", "content"]),
        ("nonsense", []),
    ],
)
def test_includes_are_wrapped_and_ordered(api: httpx.Client, includes: str, keys: list[str]) -> None:
    page = api.get("/pages/1", params={"includes": includes}).json()["data"]
    assert list(page) == PAGE_KEYS + keys
    for key in keys:
        assert set(page[key]) == {"data"}


def test_areas_hold_blocks_with_string_values(api: httpx.Client) -> None:
    areas = api.get("/pages/1", params={"includes": "areas.content"}).json()["data"]["areas"]["data"]
    assert [a["name"] for a in areas] == ["Main", "Sidebar"]
    block = areas[0]["blocks"]["data"][0]
    assert list(block) == ["id", "type", "value"]
    assert block["type"] == "content"
    assert all(isinstance(v, str) for v in block["value"].values())
    assert "{CCM:BASE_URL}/about" in block["value"]["content"]
    assert set(areas[0]["content"]["data"]) == {"raw", "content"}


def test_files_include_lists_files_the_page_links_to(api: httpx.Client) -> None:
    files = api.get("/pages/1", params={"includes": "files"}).json()["data"]["files"]["data"]
    assert [f["title"] for f in files] == ["Logo"]


def test_unknown_and_non_numeric_pages(api: httpx.Client) -> None:
    unknown = api.get("/pages/999999")
    assert unknown.status_code == 404
    assert _errors(unknown) == ["Page not found."]
    html = api.get("/pages/abc")
    assert html.status_code == 404
    assert html.headers["content-type"] == "text/html; charset=UTF-8"
    xhr = api.get("/pages/abc", headers={"X-Requested-With": "XMLHttpRequest"})
    assert xhr.json() == {"error": "Page not found", "errors": ["Page not found"]}


def test_list_has_a_cursor_whose_next_is_set_on_the_last_page(api: httpx.Client) -> None:
    body = api.get("/pages", params={"limit": "100"}).json()
    assert body["meta"]["cursor"]["next"] == body["data"][-1]["id"]
    assert body["meta"]["cursor"]["prev"] is None
    assert body["meta"]["cursor"]["current"] is None
    assert body["meta"]["cursor"]["count"] == len(body["data"]) == 7


def test_default_limit_is_ten(api: httpx.Client) -> None:
    with_generated = api.get("/pages")
    assert len(with_generated.json()["data"]) <= 10


@pytest.mark.parametrize("after", ["999999", "abc"])
def test_list_after_an_unknown_page_is_empty(api: httpx.Client, after: str) -> None:
    body = api.get("/pages", params={"limit": "3", "after": after}).json()
    assert body == {"data": [], "meta": {"cursor": {"current": after, "prev": None, "next": None, "count": 0}}}


def test_walking_tied_pages_repeats_and_skips(api: httpx.Client) -> None:
    """Every seeded page has the same modification time: a walk does not see each page exactly once."""
    seen: list[int] = []
    after: str | None = None
    for _ in range(20):
        params = {"limit": "2"} | ({"after": after} if after else {})
        body = api.get("/pages", params=params).json()
        if not body["data"]:
            break
        seen += [p["id"] for p in body["data"]]
        after = str(body["meta"]["cursor"]["next"])
    assert sorted(set(seen)) != list(range(1, 8)) or len(seen) != len(set(seen))


def test_children_in_sitemap_order_ignore_limit(api: httpx.Client) -> None:
    body = api.get("/pages/1/children", params={"limit": "1"}).json()
    assert [p["path"] for p in body["data"]] == ["/about", "/services", "/blog", "/contact"]
    assert body["meta"]["cursor"] == {"current": None, "prev": None, "next": 7, "count": 4}


@pytest.mark.parametrize("parent", ["999999", "abc"])
def test_children_of_an_unknown_parent(api: httpx.Client, parent: str) -> None:
    response = api.get(f"/pages/{parent}/children")
    assert response.status_code == 401
    assert _errors(response) == ["Invalid parent page specified."]


def test_create_page(api: httpx.Client) -> None:
    response = api.post(
        "/pages",
        json={
            "parent": 2,
            "name": "Ünïcödé & <b>Team</b> / News",
            "type": "page",
            "template": "full",
            "description": "ignored",
            "attributes": {"meta_title": "T", "unknown": 1},
        },
    )
    assert response.status_code == 200
    page = response.json()["data"]
    assert page["name"] == "Ünïcödé & Team / News"
    assert page["path"] == "/about/unicode-and-b-team-b-news"
    assert page["description"] == ""  # POST /pages ignores the description
    assert page["version"]["data"]["is_approved"] == 1
    again = api.post(
        "/pages", json={"parent": 2, "name": "Ünïcödé & <b>Team</b> / News", "type": "page", "template": "full"}
    ).json()["data"]
    assert again["path"] == "/about/unicode-and-b-team-b-news-1"
    attributes = api.get(f"/pages/{page['id']}", params={"includes": "custom_attributes"}).json()["data"]
    assert attributes["custom_attributes"]["data"][0]["handle"] == "meta_title"


@pytest.mark.parametrize(
    ("body", "errors"),
    [
        ({"parent": 1, "name": "", "type": "page", "template": "full"}, ["You must give your page a name."]),
        ({"parent": 999999, "name": "x", "type": "page", "template": "full"}, ["Parent page not found."]),
        ({"parent": "abc", "name": "x", "type": "page", "template": "full"}, ["Invalid parent page"]),
        ({"parent": 1, "name": "x", "type": "nope", "template": "full"}, ["Invalid page type"]),
        ({"parent": 1, "name": "x", "type": "page", "template": "nope"}, ["Invalid page template"]),
        (
            {"parent": 999999, "name": "", "type": "nope", "template": "nope"},
            ["You must give your page a name.", "Parent page not found.", "Invalid page type", "Invalid page template"],
        ),
    ],
)
def test_create_validation_is_401(api: httpx.Client, body: dict[str, object], errors: list[str]) -> None:
    response = api.post("/pages", json=body)
    assert response.status_code == 401
    assert _errors(response) == errors


@pytest.mark.parametrize(
    ("content", "message"),
    [
        ('{"parent": 1, "type": "page", "template": "full"}', 'Undefined array key "name"'),
        ("", "Trying to access array offset on value of type null"),
        ("{not json", "Trying to access array offset on value of type null"),
    ],
)
def test_create_with_a_missing_key_is_a_500(api: httpx.Client, content: str, message: str) -> None:
    response = api.post("/pages", content=content, headers={"content-type": "application/json"})
    assert response.status_code == 500
    assert response.headers["content-type"] == "text/html;charset=UTF-8"
    assert message.replace('"', "&quot;") in response.text


def test_update_writes_a_draft_and_leaves_the_live_version(api: httpx.Client) -> None:
    draft = api.put("/pages/2", json={"name": "About Us", "description": "New"}).json()["data"]
    assert draft["name"] == "About Us"
    assert draft["version"]["data"] == draft["version"]["data"] | {"id": 2, "is_approved": 0}
    assert draft["path"] == "/about"
    live = api.get("/pages/2").json()["data"]
    assert live["name"] == "About"
    recent = api.get("/pages/2", params={"version": "recent"}).json()["data"]
    assert recent["name"] == "About Us"
    again = api.put("/pages/2", json={}).json()["data"]
    assert again["version"]["data"]["id"] == 2  # the same draft


def test_update_attributes_types(api: httpx.Client) -> None:
    api.put(
        "/pages/3",
        json={
            "attributes": {
                "meta_title": "M",
                "exclude_nav": True,
                "is_featured": "yes",
                "desktop_priority": "7",
                "tags": [999],
                "thumbnail": 1,
            }
        },
    )
    listed = api.get("/pages/3", params={"version": "recent", "includes": "custom_attributes"}).json()
    attributes = {a["handle"]: a for a in listed["data"]["custom_attributes"]["data"]}
    assert list(attributes) == ["meta_title", "desktop_priority", "exclude_nav"]
    assert attributes["desktop_priority"]["value"] == 7
    assert attributes["exclude_nav"]["value"] is True
    assert attributes["meta_title"]["type"] == "text"


@pytest.mark.parametrize(
    ("body", "errors"), [({"type": "x"}, ["Invalid page type"]), ({"template": "x"}, ["Invalid page template"])]
)
def test_update_validation(api: httpx.Client, body: dict[str, str], errors: list[str]) -> None:
    response = api.put("/pages/2", json=body)
    assert response.status_code == 401
    assert _errors(response) == errors


@pytest.mark.parametrize("page", ["999999", "abc"])
def test_update_of_an_unknown_page(api: httpx.Client, page: str) -> None:
    response = api.put(f"/pages/{page}", json={"name": "x"})
    assert response.status_code == 404
    assert _errors(response) == ["Page not found"]


def test_delete_moves_to_the_trash(api: httpx.Client) -> None:
    response = api.delete("/pages/3")
    assert response.status_code == 200
    assert response.json() == {"id": "3", "object": "pages", "deleted": True}
    read = api.get("/pages/3")
    assert read.status_code == 403
    assert _errors(read) == ["This page is pending deletion."]
    assert api.delete("/pages/3").status_code == 403
    trashed = api.put("/pages/3", json={"name": "Still editable"}).json()["data"]
    assert trashed["path"] == "/!trash/about/team"
    assert 3 not in [p["id"] for p in api.get("/pages", params={"limit": "100"}).json()["data"]]
    assert api.post("/pages/3/Main", json={"type": "html", "value": {"content": "x"}}).status_code == 200


def test_deleting_the_home_page_says_deleted_and_does_nothing(api: httpx.Client) -> None:
    assert api.delete("/pages/1").json() == {"id": "1", "object": "pages", "deleted": True}
    assert api.get("/pages/1").status_code == 200


def test_delete_unknown_page(api: httpx.Client) -> None:
    response = api.delete("/pages/999999")
    assert response.status_code == 404
    assert _errors(response) == ["Page not found."]
