"""The OAuth2 token endpoint and bearer validation (concrete-api.md §2 and §13)."""

from __future__ import annotations

import base64
import json
import time

import httpx
import pytest

from cmssync.emulator.embedded import Sandbox
from tests.emulator.helpers import ALL_SCOPES, client, http_get, http_post, token, token_response

DENIED = "The resource owner or authorization server denied the request."


def _claims(jwt: str) -> dict[str, object]:
    body = jwt.split(".")[1]
    decoded: dict[str, object] = json.loads(base64.urlsafe_b64decode(body + "=" * (-len(body) % 4)))
    return decoded


def test_password_grant_issues_access_and_refresh_tokens(sandbox: Sandbox) -> None:
    response = token_response(sandbox)
    assert response.status_code == 200
    assert response.headers["content-type"] == "application/json; charset=UTF-8"
    assert response.headers["cache-control"] == "no-store, private"
    assert response.headers["pragma"] == "no-cache"
    body = response.json()
    assert list(body) == ["token_type", "expires_in", "access_token", "refresh_token"]
    assert body["token_type"] == "Bearer"
    assert body["expires_in"] == 3600
    claims = _claims(body["access_token"])
    assert {"aud", "jti", "iat", "nbf", "exp", "sub", "scopes"} <= set(claims)
    assert claims["sub"] == "1"
    assert claims["scopes"] == ALL_SCOPES.split()


def test_client_credentials_token_has_no_user_and_no_refresh_token(sandbox: Sandbox) -> None:
    body = token_response(sandbox, grant="client_credentials").json()
    assert "refresh_token" not in body
    assert _claims(body["access_token"])["sub"] == ""


def test_openid_scope_adds_an_id_token_first(sandbox: Sandbox) -> None:
    body = token_response(sandbox, scope="openid account:read").json()
    assert list(body) == ["id_token", "token_type", "expires_in", "access_token", "refresh_token"]


def test_http_basic_client_authentication(sandbox: Sandbox) -> None:
    basic = base64.b64encode(f"{sandbox.client_id}:{sandbox.client_secret}".encode()).decode()
    response = http_post(
        sandbox.token_url,
        data={"grant_type": "client_credentials", "scope": "system:info:read"},
        headers={"Authorization": f"Basic {basic}"},
    )
    assert response.status_code == 200
    assert _claims(response.json()["access_token"])["scopes"] == ["system:info:read"]


@pytest.mark.parametrize(
    ("form", "status", "error", "hint"),
    [
        (
            {"grant_type": "magic"},
            400,
            "unsupported_grant_type",
            "Check that all required parameters have been provided",
        ),
        ({}, 400, "unsupported_grant_type", "Check that all required parameters have been provided"),
        (
            {"grant_type": "client_credentials", "client_id": None},
            400,
            "invalid_request",
            "Check the `client_id` parameter",
        ),
        ({"grant_type": "client_credentials", "client_id": "nope"}, 400, "invalid_grant", None),
        ({"grant_type": "client_credentials", "client_secret": "wrong"}, 401, "invalid_client", None),
        ({"grant_type": "client_credentials", "client_secret": None}, 401, "invalid_client", None),
        (
            {"grant_type": "password", "scope": "pages:read nonsense:scope"},
            400,
            "invalid_scope",
            "Check the `nonsense:scope` scope",
        ),
        ({"grant_type": "client_credentials", "scope": "pages:read,system:info:read"}, 400, "invalid_scope", None),
        ({"grant_type": "password", "password": "wrong-password"}, 400, "invalid_grant", None),
        ({"grant_type": "password", "username": "nobody"}, 400, "invalid_grant", None),
        ({"grant_type": "password", "username": None}, 400, "invalid_request", "Check the `username` parameter"),
        ({"grant_type": "password", "password": None}, 400, "invalid_request", "Check the `password` parameter"),
        (
            {"grant_type": "authorization_code", "code": "bogus"},
            400,
            "invalid_request",
            "Cannot decrypt the authorization code",
        ),
        (
            {"grant_type": "refresh_token", "refresh_token": "not-a-token"},
            401,
            "invalid_request",
            "Cannot decrypt the refresh token",
        ),
    ],
)
def test_token_endpoint_errors(
    sandbox: Sandbox, form: dict[str, str | None], status: int, error: str, hint: str | None
) -> None:
    data: dict[str, str | None] = {
        "client_id": sandbox.client_id,
        "client_secret": sandbox.client_secret,
        "username": sandbox.admin_username,
        "password": sandbox.admin_password,
        **form,
    }
    response = http_post(sandbox.token_url, data={k: v for k, v in data.items() if v is not None})
    assert response.status_code == status
    assert response.headers["content-type"] == "application/json"
    body = response.json()
    assert body["error"] == error
    assert body["message"] == body["error_description"]
    if hint is not None:
        assert body["hint"] == hint
    assert "www-authenticate" not in response.headers


def test_wrong_secret_with_basic_auth_sends_www_authenticate(sandbox: Sandbox) -> None:
    basic = base64.b64encode(f"{sandbox.client_id}:wrong".encode()).decode()
    response = http_post(
        sandbox.token_url, data={"grant_type": "client_credentials"}, headers={"Authorization": f"Basic {basic}"}
    )
    assert response.status_code == 401
    assert response.headers["www-authenticate"] == 'Basic realm="OAuth"'


def test_json_body_is_not_read(sandbox: Sandbox) -> None:
    payload = {
        "grant_type": "client_credentials",
        "client_id": sandbox.client_id,
        "client_secret": sandbox.client_secret,
    }
    response = http_post(sandbox.token_url, json=payload)
    assert response.status_code == 400
    assert response.json()["error"] == "unsupported_grant_type"


def test_unknown_client_with_password_grant_is_an_html_500(sandbox: Sandbox) -> None:
    response = token_response(sandbox, client_id="0" * 64)
    assert response.status_code == 500
    assert response.headers["content-type"] == "text/html;charset=UTF-8"
    assert "getClientSecret() on null" in response.text


def test_get_on_the_token_url_is_the_cms_404_page(sandbox: Sandbox) -> None:
    response = http_get(sandbox.token_url, params={"grant_type": "client_credentials"})
    assert response.status_code == 404
    assert response.headers["content-type"] == "text/html; charset=UTF-8"


def test_limited_client_drops_scopes_it_may_not_have(sandbox: Sandbox) -> None:
    body = token_response(
        sandbox, client_id=f"{sandbox.client_id}-limited", client_secret=f"{sandbox.client_secret}-limited"
    ).json()
    assert _claims(body["access_token"])["scopes"] == ["system:info:read", "pages:read"]


def test_refresh_rotates_and_revokes_the_paired_access_token(sandbox: Sandbox) -> None:
    first = token_response(sandbox).json()
    refreshed = token_response(sandbox, grant="refresh_token", scope=None, refresh_token=first["refresh_token"])
    assert refreshed.status_code == 200
    reused = token_response(sandbox, grant="refresh_token", scope=None, refresh_token=first["refresh_token"])
    assert reused.status_code == 401
    assert reused.json()["hint"] == "Token has been revoked"
    with client(sandbox, first["access_token"]) as old, client(sandbox, refreshed.json()["access_token"]) as new:
        revoked = old.get("/system/info")
        assert revoked.status_code == 401
        assert revoked.json()["hint"] == "Access token has been revoked"
        assert new.get("/system/info").status_code == 200


def test_refresh_may_narrow_but_not_widen_the_scope(sandbox: Sandbox) -> None:
    first = token_response(sandbox, scope="pages:read system:info:read").json()
    narrow = token_response(sandbox, grant="refresh_token", scope="pages:read", refresh_token=first["refresh_token"])
    assert _claims(narrow.json()["access_token"])["scopes"] == ["pages:read"]
    wide = token_response(
        sandbox, grant="refresh_token", scope="pages:read users:read", refresh_token=narrow.json()["refresh_token"]
    )
    assert wide.status_code == 400
    assert wide.json()["hint"] == "Check the `users:read` scope"


def test_password_grant_counts_as_a_login(sandbox: Sandbox) -> None:
    with client(sandbox, token(sandbox)) as api:
        before = api.get("/account").json()["data"]["total_logins"]
    with client(sandbox, token(sandbox)) as api:
        after = api.get("/account").json()["data"]
    assert after["total_logins"] == before + 1
    assert after["last_login"] > 0


@pytest.mark.parametrize(
    ("authorization", "hint"),
    [
        (None, 'Missing "Authorization" header'),
        ("Bearer garbage", "The JWT string must have two dots"),
        ("Bearer aaaa.bbbb.cccc", "Error while decoding from JSON"),
        ("Bearer", "The JWT string must have two dots"),
        ("Basic YWRtaW46eA==", "The JWT string must have two dots"),
    ],
)
def test_bearer_errors(sandbox: Sandbox, authorization: str | None, hint: str) -> None:
    headers = {"Authorization": authorization} if authorization else {}
    response = http_get(sandbox.api_url + "/system/info", headers=headers)
    assert response.status_code == 401
    assert response.json() == {"error": "access_denied", "error_description": DENIED, "hint": hint, "message": DENIED}
    assert "www-authenticate" not in response.headers


def test_tampered_and_lowercase_tokens(sandbox: Sandbox) -> None:
    good = token(sandbox)
    head, body, signature = good.split(".")
    tampered = http_get(
        sandbox.api_url + "/system/info", headers={"Authorization": f"Bearer {head}.{body}.{signature[::-1]}"}
    )
    assert tampered.json()["hint"] == "Access token could not be verified"
    lower = http_get(sandbox.api_url + "/system/info", headers={"Authorization": f"bearer {good}"})
    assert lower.json()["hint"] == "Error while decoding from JSON"
    in_query = http_get(sandbox.api_url + "/system/info", params={"access_token": good})
    assert in_query.json()["hint"] == 'Missing "Authorization" header'


@pytest.mark.parametrize("scope", [None, "pages:read"])
def test_missing_scope_is_endpoint_out_of_scope(sandbox: Sandbox, scope: str | None) -> None:
    with client(sandbox, token(sandbox, scope=scope)) as api:
        response = api.get("/system/info")
    assert response.status_code == 400
    assert response.json() == {
        "error": "invalid_request",
        "error_description": "Endpoint out of scope.",
        "hint": "Try reauthorizing with the proper scope.",
        "message": "Endpoint out of scope.",
    }


def test_expired_tokens_cannot_be_verified() -> None:
    with Sandbox(seed="empty", token_ttl=1) as short:
        body = token_response(short).json()
        assert body["expires_in"] == 1
        expires = _claims(body["access_token"])["exp"]
        assert isinstance(expires, int)
        time.sleep(max(0.0, expires - time.time()) + 0.05)  # waiting for the clock is the point of this test
        response = http_get(short.api_url + "/system/info", headers={"Authorization": f"Bearer {body['access_token']}"})
    assert response.status_code == 401
    assert response.json()["hint"] == "Access token could not be verified"


def test_client_credentials_run_as_guest(sandbox: Sandbox, guest_api: httpx.Client) -> None:
    account = guest_api.get("/account")
    assert account.status_code == 500
    assert "There is no user associated with request" in account.text
    xhr = guest_api.get("/account", headers={"X-Requested-With": "XMLHttpRequest"})
    assert xhr.headers["content-type"] == "application/json; charset=UTF-8"
    assert xhr.json()["errors"] == ["There is no user associated with request"]
    assert guest_api.get("/files").json()["data"] == []
    assert guest_api.get("/users").json()["data"] == []
    assert guest_api.get("/pages").json()["data"] != []
    assert guest_api.get("/groups").json()["data"] == [
        {"id": 3, "name": "Administrators"},
        {"id": 4, "name": "Editors"},
    ]
    create = guest_api.post("/pages", json={"parent": 1, "name": "x", "type": "page", "template": "full"})
    assert create.status_code == 403
    assert create.json()["errors"] == [
        "You do not have permission to add pages of the type Page beneath this parent page"
    ]
    user = guest_api.post(
        "/users", json={"username": "guestmade", "email": "guestmade@example.com", "password": "secret1"}
    )
    assert user.status_code == 200  # POST /users has no permission check
    assert guest_api.get("/groups/3").status_code == 500
    assert guest_api.get("/page_versions/1").status_code == 401
