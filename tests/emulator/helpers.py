"""Small helpers shared by the emulator tests: tokens and authenticated clients for a sandbox."""

from __future__ import annotations

import ssl
from typing import Any

import httpx

from cmssync.emulator.embedded import Sandbox

# Shared so that creating a client does not load the CA bundle again (~50 ms per httpx.Client otherwise).
TLS = ssl.create_default_context()

ALL_SCOPES = (
    "account:read system:info:read sites:read files:read files:add files:update files:delete pages:read pages:add "
    "pages:update pages:delete pages:areas:add_block pages:areas:delete_block pages:areas:update_block "
    "pages:versions:read pages:versions:update pages:versions:delete blocks:read blocks:update blocks:delete "
    "users:read users:add users:update users:delete groups:read groups:add"
)


def token_response(
    sandbox: Sandbox,
    *,
    grant: str = "password",
    scope: str | None = ALL_SCOPES,
    username: str | None = None,
    password: str | None = None,
    **extra: str,
) -> httpx.Response:
    form: dict[str, str] = {"grant_type": grant, "client_id": sandbox.client_id, "client_secret": sandbox.client_secret}
    if grant == "password":
        form["username"] = username or sandbox.admin_username
        form["password"] = password or sandbox.admin_password
    if scope is not None:
        form["scope"] = scope
    form.update(extra)
    with httpx.Client(verify=TLS) as http:
        return http.post(sandbox.token_url, data=form)


def token(sandbox: Sandbox, **kwargs: Any) -> str:
    response = token_response(sandbox, **kwargs)
    assert response.status_code == 200, response.text
    value: str = response.json()["access_token"]
    return value


def client(sandbox: Sandbox, bearer: str | None) -> httpx.Client:
    headers = {"Authorization": f"Bearer {bearer}"} if bearer else {}
    return httpx.Client(base_url=sandbox.api_url, headers=headers, timeout=30.0, verify=TLS)


def http_request(method: str, url: str, **kwargs: Any) -> httpx.Response:
    """A one-off request (like ``httpx.request``, without reloading the CA bundle)."""
    with httpx.Client(verify=TLS, timeout=30.0) as http:
        return http.request(method, url, **kwargs)


def http_get(url: str, **kwargs: Any) -> httpx.Response:
    return http_request("GET", url, **kwargs)


def http_post(url: str, **kwargs: Any) -> httpx.Response:
    return http_request("POST", url, **kwargs)
