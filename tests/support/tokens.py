"""One way to get a bearer token in tests: the password grant, straight over HTTP (never through cmssync)."""

from __future__ import annotations

import httpx

from cmssync.emulator.embedded import Sandbox

RAW_SCOPES = "pages:read users:read groups:read files:read pages:versions:read"


def password_token(
    token_url: str, *, client_id: str, client_secret: str, username: str, password: str, scope: str
) -> str:
    """An access token from ``token_url``; fails the test with the server's answer when refused."""
    response = httpx.post(
        token_url,
        data={
            "grant_type": "password",
            "client_id": client_id,
            "client_secret": client_secret,
            "username": username,
            "password": password,
            "scope": scope,
        },
        timeout=30,
    )
    assert response.status_code == 200, f"token refused: {response.status_code} {response.text[:300]}"
    return str(response.json()["access_token"])


def sandbox_token(
    sandbox: Sandbox, scope: str = RAW_SCOPES, *, username: str | None = None, password: str | None = None
) -> str:
    """A token of the sandbox's super admin (or of ``username``) for ``scope``."""
    return password_token(
        sandbox.token_url,
        client_id=sandbox.client_id,
        client_secret=sandbox.client_secret,
        username=username or sandbox.admin_username,
        password=password or sandbox.admin_password,
        scope=scope,
    )
