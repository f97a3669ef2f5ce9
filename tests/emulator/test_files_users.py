"""Files, users and groups (concrete-api.md §7 Files/Users/Groups, §13)."""

from __future__ import annotations

import re

import httpx
import pytest

from cmssync.emulator import imagesize
from cmssync.emulator.embedded import Sandbox
from tests.emulator.helpers import client, http_get, token

FILE_KEYS = [
    "id",
    "title",
    "description",
    "tags",
    "url",
    "file_type",
    "extension",
    "tracked_url",
    "folder",
    "date_added",
    "size",
]
USER_KEYS = [
    "id",
    "username",
    "email",
    "date_added",
    "status",
    "total_logins",
    "date_password_last_changed",
    "date_last_updated",
    "has_avatar",
    "avatar",
    "last_login",
    "previous_login",
    "timezone",
    "language",
]
UUID = re.compile(r"^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$")


def _errors(response: httpx.Response) -> list[str]:
    errors: list[str] = response.json()["errors"]
    return errors


def _upload(api: httpx.Client, name: str, content: bytes, folder: str | None = None) -> httpx.Response:
    return api.post(
        "/files",
        files={"file": (name, content, "application/octet-stream")},
        data={"folder": folder} if folder is not None else None,
    )


def test_upload_and_read_back(api: httpx.Client) -> None:
    response = _upload(api, "pixel.png", imagesize.png(2, 3), folder="10")
    assert response.status_code == 200
    uploaded = response.json()["data"]
    assert list(uploaded) == FILE_KEYS
    assert UUID.match(uploaded["id"])
    assert uploaded["size"] == {"description": "0.07 KB", "exact": 73}  # an int only in this answer
    assert uploaded["folder"] == 10
    assert uploaded["file_type"] == "PNG"
    read = api.get(f"/files/{uploaded['id'].upper()}", params={"includes": "custom_attributes"}).json()["data"]
    assert read["size"]["exact"] == "73"
    assert [(a["handle"], a["value"]) for a in read["custom_attributes"]["data"]] == [("width", 2), ("height", 3)]
    served = http_get(uploaded["url"])
    assert served.content == imagesize.png(2, 3)
    assert http_get(uploaded["tracked_url"]).content == served.content


@pytest.mark.parametrize(
    ("name", "folder", "status", "message"),
    [
        ("a.txt", "abc", 400, "Unable to find specified folder"),
        ("a.txt", "999999", 400, "Unable to find specified folder"),
        ("evil.php", None, 403, "Invalid file extension."),
        ("evil.exe", None, 403, "Invalid file extension."),
    ],
)
def test_upload_errors(api: httpx.Client, name: str, folder: str | None, status: int, message: str) -> None:
    response = _upload(api, name, b"x", folder)
    assert response.status_code == status
    assert _errors(response) == [message]


def test_upload_edge_cases(api: httpx.Client, guest_api: httpx.Client) -> None:
    assert _upload(api, "zero.txt", b"z", folder="0").json()["data"]["folder"] == 7
    assert _upload(api, "empty.txt", b"").json()["data"]["size"]["exact"] == 0
    no_extension = _upload(api, "noext", b"abc")
    assert no_extension.status_code == 500
    assert "The file extension &quot;&quot; is not valid." in no_extension.text
    missing = api.post("/files", files={"other": ("a.txt", b"a")})
    assert _errors(missing) == ["Invalid file."]
    assert _errors(api.post("/files", json={"file": "abc"})) == ["Invalid file."]
    assert _errors(_upload(guest_api, "a.txt", b"a")) == ["Invalid file extension."]


def test_list_files_with_uuid_cursor(api: httpx.Client) -> None:
    first = api.get("/files", params={"limit": "2"}).json()
    assert first["meta"]["cursor"]["next"] == first["data"][-1]["id"]
    unknown = api.get("/files", params={"limit": "2", "after": "00000000-0000-0000-0000-000000000000"}).json()
    assert [f["id"] for f in unknown["data"]] == [f["id"] for f in first["data"]]  # unknown cursor: first page
    assert unknown["meta"]["cursor"]["current"] == "00000000-0000-0000-0000-000000000000"


@pytest.mark.parametrize("identifier", ["1", "999999", "00000000-0000-0000-0000-000000000000", "not-a-file"])
def test_files_by_numeric_or_unknown_id_are_not_found(api: httpx.Client, identifier: str) -> None:
    response = api.get(f"/files/{identifier}")
    assert response.status_code == 404
    assert _errors(response) == ["File not found."]
    assert _errors(api.put(f"/files/{identifier}", json={})) == ["File not found"]
    assert _errors(api.delete(f"/files/{identifier}")) == ["File not found"]


def test_update_move_and_delete_a_file(api: httpx.Client, guest_api: httpx.Client) -> None:
    file_id = _upload(api, "doc.txt", b"hello").json()["data"]["id"]
    updated = api.put(
        f"/files/{file_id}",
        json={
            "title": "Doc",
            "description": "D",
            "tags": "alpha, beta\ngamma",
            "attributes": {"width": 5, "unknown": 1},
        },
    ).json()["data"]
    assert (updated["title"], updated["description"], updated["tags"]) == ("Doc", "D", "\nalpha\nbeta\ngamma\n")
    assert updated["size"]["exact"] == "5"
    assert guest_api.put(f"/files/{file_id}", json={}).status_code == 500  # permission key edit_file is missing
    moved = api.post(f"/files/{file_id}/move", data={"folder": "11"}).json()["data"]
    assert moved["folder"] == 11
    assert _errors(api.post(f"/files/{file_id}/move", json={"folder": 10})) == ["Unable to find specified folder"]
    assert api.get(f"/files/{file_id}/move").status_code == 404
    assert api.delete(f"/files/{file_id}").json() == {"id": file_id, "object": "files", "deleted": True}
    assert _errors(api.get(f"/files/{file_id}")) == ["File not found."]


# --- users ---------------------------------------------------------------------------------------------------------


def test_create_and_read_a_user(api: httpx.Client) -> None:
    response = api.post(
        "/users",
        json={"username": "newbie", "email": "newbie@example.com", "password": "secret-1", "language": "de_DE"},
    )
    assert response.status_code == 200
    user = response.json()["data"]
    assert list(user) == USER_KEYS
    assert (user["status"], user["total_logins"], user["last_login"], user["language"]) == ("active", 0, 0, "de_DE")
    read = api.get(f"/users/{user['id']}").json()["data"]
    assert list(read) == [*USER_KEYS, "groups"]
    assert read["groups"] == {"data": []}
    jane = api.get("/users/2").json()["data"]
    assert jane["groups"]["data"] == [{"id": 4, "name": "Editors"}]


@pytest.mark.parametrize(
    ("body", "errors"),
    [
        ({"username": "ab"}, ["A username must be between 3 and 64 characters long."]),
        (
            {"username": "bad name!"},
            [
                "A username may only contain letters, numbers, dots (not at the beginning/end), "
                "and underscores (not at the beginning/end)."
            ],
        ),
        ({"email": "nope"}, ["Invalid email address."]),
        ({"username": "jane"}, ['The username "jane" is already taken.']),
        ({"email": "jane@example.com"}, ['The email address "jane@example.com" is already in use.']),
        ({"password": "abc"}, ["A password must be between 5 and 128 characters long."]),
        (
            {"username": "x", "email": "nope", "password": "1"},
            [
                "A username must be between 3 and 64 characters long.",
                "Invalid email address.",
                "A password must be between 5 and 128 characters long.",
            ],
        ),
    ],
)
def test_user_validation_is_401(api: httpx.Client, body: dict[str, str], errors: list[str]) -> None:
    payload = {"username": "valid_name", "email": "valid@example.com", "password": "secret-1"} | body
    response = api.post("/users", json=payload)
    assert response.status_code == 401
    assert _errors(response) == errors


@pytest.mark.parametrize(("missing", "key"), [("password", "password"), ("username", "username")])
def test_create_user_with_a_missing_key_is_a_500(api: httpx.Client, missing: str, key: str) -> None:
    payload = {"username": "valid_name", "email": "valid@example.com", "password": "secret-1"}
    del payload[missing]
    response = api.post("/users", json=payload)
    assert response.status_code == 500
    assert f"Undefined array key &quot;{key}&quot;" in response.text


def test_update_answers_the_user_as_it_was(api: httpx.Client) -> None:
    answer = api.put("/users/3", json={"email": "john.new@example.com", "language": "fr_FR"}).json()["data"]
    assert answer["email"] == "john@example.com"
    fresh = api.get("/users/3").json()["data"]
    assert (fresh["email"], fresh["language"]) == ("john.new@example.com", "fr_FR")
    own = api.put("/users/3", json={"username": "john"})
    assert _errors(own) == ['The username "john" is already taken.']
    assert _errors(api.put("/users/999999", json={})) == ["User not found"]


def test_change_password_reads_a_form_field(api: httpx.Client, sandbox: Sandbox) -> None:
    as_json = api.post("/users/3/change_password", json={"password": "changed-pass"})
    assert as_json.status_code == 401
    assert _errors(as_json) == ["A password must be between 5 and 128 characters long."]
    assert api.post("/users/3/change_password", data={"password": "changed-pass"}).status_code == 200
    with client(sandbox, token(sandbox, username="john", password="changed-pass")) as john:
        account = john.get("/account").json()["data"]
        assert (account["username"], account["total_logins"]) == ("john", 1)
        assert john.get("/users").json()["data"] == []  # filtered: a plain user sees no users
        assert john.put("/pages/2", json={"name": "x"}).status_code == 500  # edit_page key missing on 9.3.1
        assert _errors(john.delete("/users/1")) == ["You do not have access to delete this user."]
    assert _errors(api.post("/users/999999/change_password", data={"password": "abcdef"})) == ["User not found"]


def test_delete_users(api: httpx.Client) -> None:
    assert api.delete("/users/4").json() == {"id": "4", "object": "users", "deleted": True}
    assert _errors(api.get("/users/4")) == ["User not found."]
    assert _errors(api.delete("/users/4")) == ["User not found"]
    assert api.delete("/users/1").json() == {"id": "1", "object": "users", "deleted": True}
    assert api.get("/users/1").status_code == 200  # the super admin is never deleted
    assert api.get("/users/abc").status_code == 404


def test_user_list_walk(api: httpx.Client) -> None:
    body = api.get("/users", params={"limit": "2", "includes": "groups,custom_attributes"}).json()
    assert len(body["data"]) == 2
    assert list(body["data"][0])[-2:] == ["groups", "custom_attributes"]
    assert body["meta"]["cursor"]["next"] == body["data"][-1]["id"]


# --- groups --------------------------------------------------------------------------------------------------------


def test_groups(api: httpx.Client, guest_api: httpx.Client) -> None:
    listed = api.get("/groups").json()
    assert [g["id"] for g in listed["data"]] == [3, 4]
    created = api.post("/groups", json={"name": "Editors"}).json()["data"]
    assert created == {"id": 5, "name": "Editors"}  # no uniqueness check
    assert api.post("/groups", json={"name": ""}).json()["data"]["name"] == ""
    assert api.post("/groups", json={}).status_code == 500
    walk = api.get("/groups", params={"limit": "1", "after": "4"}).json()
    assert walk["data"] == [{"id": 5, "name": "Editors"}]
    assert walk["meta"]["cursor"] == {"current": "4", "prev": None, "next": 5, "count": 1}
    assert api.get("/groups/1").json()["data"] == {"id": 1, "name": "Guest"}
    assert _errors(api.get("/groups/999999")) == ["Group not found."]
    assert guest_api.get("/groups/3").status_code == 500
    refused = guest_api.post("/groups", json={"name": "x"})
    assert refused.status_code == 401
    assert _errors(refused) == ["You do not have permission to add a group beneath All Groups"]
