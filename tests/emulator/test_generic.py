"""Routing, generic errors and the two dialects (concrete-api.md §1, §3, §10; api-as-documented.md)."""

from __future__ import annotations

import re

import httpx
import pytest

from cmssync.emulator.embedded import Sandbox
from tests.emulator.helpers import client, http_request, token

LIMIT_MESSAGE = "Invalid limit query parameter found. Value must be between 1 and 100."


@pytest.mark.parametrize(
    ("method", "path"),
    [
        ("GET", "/nope"),
        ("GET", ""),
        ("DELETE", "/system/info"),
        ("POST", "/sites"),
        ("PATCH", "/pages/2"),
        ("OPTIONS", "/pages"),
        ("GET", "/users/12abc"),
        ("GET", "//system/info"),
        ("PUT", "/blocks/1"),
    ],
)
def test_unrouted_requests_get_the_cms_404_page(api: httpx.Client, method: str, path: str) -> None:
    response = api.request(method, path)
    assert response.status_code == 404
    assert response.headers["content-type"] == "text/html; charset=UTF-8"
    assert "<title>Page Not Found :: Sandbox Site</title>" in response.text
    xhr = api.request(method, path, headers={"X-Requested-With": "XMLHttpRequest"})
    assert xhr.headers["content-type"] == "application/json"
    assert xhr.json() == {"error": "Page not found", "errors": ["Page not found"]}


def test_unrouted_requests_need_no_token(sandbox: Sandbox) -> None:
    assert http_request("GET", sandbox.api_url + "/nope").status_code == 404
    assert http_request("GET", sandbox.url + "/ccm/api/2.0/system/info").status_code == 404


@pytest.mark.parametrize(
    ("path", "limit"),
    [("/pages", "101"), ("/pages", "0"), ("/files", "-1"), ("/users", "abc"), ("/groups", "2.5")],
)
def test_limit_out_of_range_is_an_uncaught_500(api: httpx.Client, path: str, limit: str) -> None:
    response = api.get(path, params={"limit": limit})
    assert response.status_code == 500
    assert response.headers["content-type"] == "text/html;charset=UTF-8"
    assert LIMIT_MESSAGE in response.text
    xhr = api.get(path, params={"limit": limit}, headers={"X-Requested-With": "XMLHttpRequest"})
    assert xhr.headers["content-type"] == "application/json; charset=UTF-8"
    assert xhr.json()["errors"] == [LIMIT_MESSAGE]
    assert xhr.json()["error"]["message"] == LIMIT_MESSAGE


@pytest.mark.parametrize("limit", ["1", "100"])
def test_limit_bounds_are_inclusive(api: httpx.Client, limit: str) -> None:
    assert api.get("/groups", params={"limit": limit}).status_code == 200


def test_path_forms(api: httpx.Client, sandbox: Sandbox) -> None:
    assert api.get("/sites/").json()["data"][0]["handle"] == "default"
    headers = dict(api.headers)
    via_index = http_request("GET", sandbox.url + "/index.php/ccm/api/1.0/system/info", headers=headers)
    assert via_index.status_code == 200
    head = api.head("/system/info")
    assert (head.status_code, head.content) == (200, b"")
    assert api.get("/system/info", headers={"Accept": "application/xml"}).headers["content-type"] == "application/json"


def test_php_json_escaping(api: httpx.Client) -> None:
    raw = api.get("/pages/2").text
    assert '"path":"\\/about"' in raw
    error = api.post("/users", json={"username": "jane", "email": "x@example.com", "password": "secret1"}).text
    assert "\\u0022jane\\u0022" in error


def test_system_info_sites_and_account(api: httpx.Client) -> None:
    info = api.get("/system/info").json()["data"]
    assert all(isinstance(v, str) for v in info.values())
    assert info["version"] == "9.3.1"
    assert set(api.get("/sites").json()) == {"data"}  # no cursor meta
    default = api.get("/sites/default").json()["data"]
    assert list(default) == ["id", "handle", "name", "home_page_id", "default_locale"]
    by_id = api.get("/sites/1").json()["data"]
    assert by_id["locales"]["data"] == [{"id": 1, "country": "US", "language": "en", "home_page_id": 1}]
    assert by_id["custom_attributes"] == {"data": []}
    assert api.get("/sites/abc").json()["errors"] == ["Site not found."]
    assert api.get("/sites/1", params={"includes[]": "locales"}).status_code == 200
    assert api.get("/account", params={"includes": "groups"}).json()["data"]["groups"] == {"data": []}


def test_openapi_url_without_session_is_a_500(sandbox: Sandbox) -> None:
    response = http_request("GET", sandbox.url + "/ccm/system/api/openapi.json")
    assert response.status_code == 500
    assert "UserMessageException" in response.text


# --- dialects ------------------------------------------------------------------------------------------------------


def test_both_dialects_serve_the_same_data(any_api: httpx.Client, sandbox_any_dialect: Sandbox) -> None:
    page = any_api.get("/pages/2", params={"includes": "areas,custom_attributes"}).json()
    documented = sandbox_any_dialect.dialect == "documented"
    data = page if documented else page["data"]
    assert data["name"] == "About"
    version = data["version"] if documented else data["version"]["data"]
    areas = data["areas"] if documented else data["areas"]["data"]
    blocks = areas[0]["blocks"] if documented else areas[0]["blocks"]["data"]
    assert blocks[0]["type"] == "content"
    if documented:
        assert version["is_approved"] is True
        assert re.match(r"^\d{4}-\d\d-\d\d$", version["date_created"])
        assert re.match(r"^\d{4}-\d\d-\d\d$", data["date_added"])
    else:
        assert version["is_approved"] == 1
    listed = any_api.get("/pages", params={"limit": "2"}).json()
    assert isinstance(listed, list) if documented else set(listed) == {"data", "meta"}


@pytest.mark.parametrize(
    ("method", "path", "status", "text"),
    [
        ("GET", "/blocks/999999", 404, "Block not found"),
        ("GET", "/files/00000000-0000-0000-0000-000000000000", 404, "File not found"),
        ("GET", "/groups/999999", 404, "Group not found"),
        ("GET", "/users/999999", 404, "User not found"),
        ("GET", "/page_versions/2/99", 404, "Page version not found"),
        ("PUT", "/page_versions/2/99", 404, "Version not found"),
        ("GET", "/pages/999999", 404, "Page not found"),
    ],
)
def test_documented_dialect_errors_are_plain_text(
    sandbox: Sandbox, method: str, path: str, status: int, text: str
) -> None:
    sandbox.reset(dialect="documented")
    with client(sandbox, token(sandbox)) as api:
        response = api.request(method, path, json={} if method == "PUT" else None)
    assert response.status_code == status
    assert response.headers["content-type"].startswith("text/plain")
    assert response.text == text


def test_documented_dialect_permission_errors_and_prefixes(sandbox: Sandbox) -> None:
    sandbox.reset(dialect="documented")
    assert sandbox.api_url.endswith("/cms/api/1.0")
    with client(sandbox, token(sandbox, grant="client_credentials")) as guest:
        refused = guest.get("/blocks/1")
    assert (refused.status_code, refused.text) == (
        401,
        "You do not have the proper permissions to access this resource",
    )
    with client(sandbox, token(sandbox)) as api:
        also = http_request("GET", sandbox.url + "/ccm/api/1.0/pages/1", headers=dict(api.headers))
        assert also.status_code == 200
        assert set(also.json()) >= {"id", "version"}


def test_documented_dialect_takes_a_form_encoded_page_update(sandbox: Sandbox) -> None:
    sandbox.reset(dialect="documented")
    with client(sandbox, token(sandbox)) as api:
        response = api.put("/pages/2", data={"name": "Form Name", "attributes[meta_title]": "Form Title"})
        assert response.status_code == 200
        recent = api.get("/pages/2", params={"version": "recent", "includes": "custom_attributes"}).json()
    assert recent["name"] == "Form Name"
    assert recent["custom_attributes"][0]["value"] == "Form Title"


def test_live_pages_are_shown_at_their_paths(api: httpx.Client, sandbox: Sandbox) -> None:
    home = http_request("GET", sandbox.url + "/")
    assert home.status_code == 200
    assert "<title>Home :: Sandbox Site</title>" in home.text
    assert f'src="{sandbox.url}/application/files/1001/2002/3003/logo.png"' in home.text
    about = http_request("GET", sandbox.url + "/about/")
    assert "A small team." in about.text
    api.put("/pages/2", json={"name": "Draft name"})
    assert "<title>About :: Sandbox Site</title>" in http_request("GET", sandbox.url + "/about").text
    api.delete("/pages/3")
    assert http_request("GET", sandbox.url + "/about/team").status_code == 404
    assert http_request("GET", sandbox.url + "/no/such/page").status_code == 404
