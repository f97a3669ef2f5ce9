"""Grants, the refresh-token store, token endpoint oddities, JWT scopes, settings → token source."""

from __future__ import annotations

import json
import os
import stat
from pathlib import Path
from typing import Any

import httpx
import pytest

from cmssync.api import errors as e
from cmssync.api.auth import DEFAULT_SCOPES, OAuthTokens, StaticToken, granted_scopes, jwt_claims
from cmssync.api.client import ConcreteClient, token_source
from cmssync.config import Settings
from cmssync.errors import ConfigError
from tests.support.api_clients import BASE, HTML_404, FakeTokenEndpoint, data, make_jwt, mock_client, oauth

GROUP = {"id": 4, "name": "G"}


def refresh_tokens(store: Path, **kwargs: Any) -> OAuthTokens:
    return oauth(
        grant="refresh_token", refresh_token="refresh-0", username=None, password=None, token_store=store, **kwargs
    )


async def test_rotated_refresh_token_is_persisted_before_the_new_access_token_is_used(tmp_path: Path) -> None:
    store = tmp_path / "state" / "tokens.json"
    tokens = FakeTokenEndpoint(refresh=True)
    stored_when_used: list[str] = []

    def api(request: httpx.Request) -> httpx.Response:
        stored_when_used.append(json.loads(store.read_text())["refresh_token"])
        return data(GROUP)

    async with mock_client(api, tokens=tokens, auth=refresh_tokens(store)) as client:
        await client.get_group(4)
    assert tokens.forms[0]["grant_type"] == "refresh_token"
    assert tokens.forms[0]["refresh_token"] == "refresh-0"
    assert "scope" not in tokens.forms[0]  # asking for more than the original grant is invalid_scope
    assert stored_when_used == ["refresh-1"]
    assert stat.S_IMODE(os.stat(store).st_mode) == 0o600
    assert [p.name for p in store.parent.iterdir()] == ["tokens.json"]  # no temp files left


async def test_rotation_continues_from_the_store(tmp_path: Path) -> None:
    store = tmp_path / "tokens.json"
    tokens = FakeTokenEndpoint(refresh=True)
    denied = httpx.Response(401, json={"error": "access_denied", "hint": "Access token has been revoked"})
    answers = [denied, data(GROUP)]

    def api(request: httpx.Request) -> httpx.Response:
        return answers.pop(0) if answers else data(GROUP)

    async with mock_client(api, tokens=tokens, auth=refresh_tokens(store)) as client:
        await client.get_group(4)
    assert [f["refresh_token"] for f in tokens.forms] == ["refresh-0", "refresh-1"]
    # A new process starts from the stored token, not the (now revoked) configured one.
    later = FakeTokenEndpoint(refresh=True)
    async with mock_client(lambda r: data(GROUP), tokens=later, auth=refresh_tokens(store)) as client:
        await client.get_group(4)
    assert later.forms[0]["refresh_token"] == "refresh-2"


async def test_a_new_configured_refresh_token_wins_over_the_store(tmp_path: Path) -> None:
    store = tmp_path / "tokens.json"
    async with mock_client(
        lambda r: data(GROUP), tokens=FakeTokenEndpoint(refresh=True), auth=refresh_tokens(store)
    ) as c:
        await c.get_group(4)
    fresh = FakeTokenEndpoint(refresh=True)
    auth = oauth(grant="refresh_token", refresh_token="brand-new", token_store=store)
    async with mock_client(lambda r: data(GROUP), tokens=fresh, auth=auth) as client:
        await client.get_group(4)
    assert fresh.forms[0]["refresh_token"] == "brand-new"


async def test_refused_refresh_token(tmp_path: Path) -> None:
    def tokens(request: httpx.Request) -> httpx.Response:
        return httpx.Response(
            401,
            json={
                "error": "invalid_request",
                "error_description": "The refresh token is invalid.",
                "hint": "Token has been revoked",
            },
        )

    client = ConcreteClient(BASE, auth=refresh_tokens(tmp_path / "t.json"), transport=httpx.MockTransport(tokens))
    async with client:
        with pytest.raises(e.AuthenticationFailed) as caught:
            await client.get_group(4)
    assert "refresh token was refused" in str(caught.value)
    assert "refresh-0" not in str(caught.value)


async def test_password_grant_renews_with_its_refresh_token() -> None:
    now = [0.0]
    tokens = FakeTokenEndpoint(refresh=True, expires_in=100)
    auth = oauth(clock=lambda: now[0], leeway=10)
    async with mock_client(lambda r: data(GROUP), tokens=tokens, auth=auth) as client:
        await client.get_group(4)
        now[0] = 95
        await client.get_group(4)
    assert [f["grant_type"] for f in tokens.forms] == ["password", "refresh_token"]


def token_error(status: int, body: Any, content_type: str = "application/json") -> httpx.MockTransport:
    raw = body if isinstance(body, str) else json.dumps(body)
    return httpx.MockTransport(
        lambda r: httpx.Response(status, content=raw.encode(), headers={"content-type": content_type})
    )


@pytest.mark.parametrize(
    ("grant", "status", "body", "content_type", "expected", "words"),
    [
        (
            "password",
            400,
            {"error": "unsupported_grant_type", "error_description": "x"},
            "application/json",
            e.AuthenticationFailed,
            "password_credentials",
        ),
        (
            "password",
            401,
            {"error": "invalid_client", "error_description": "Client authentication failed"},
            "application/json",
            e.AuthenticationFailed,
            "client_secret",
        ),
        (
            "password",
            400,
            {"error": "invalid_grant", "error_description": "The user credentials were incorrect."},
            "application/json",
            e.AuthenticationFailed,
            "user credentials",
        ),
        (
            "client_credentials",
            400,
            {"error": "invalid_grant", "error_description": "x"},
            "application/json",
            e.AuthenticationFailed,
            "client_id",
        ),
        (
            "password",
            400,
            {"error": "invalid_scope", "hint": "Check the `x` scope"},
            "application/json",
            e.AuthenticationFailed,
            "scope",
        ),
        ("password", 404, HTML_404, "text/html", e.ApiDisabled, "not enabled"),
        (
            "password",
            500,
            "<!DOCTYPE html><!--\n\n\nError: Call to a member function getClientSecret() on null",
            "text/html",
            e.AuthenticationFailed,
            "client_id",
        ),
        ("password", 200, "<html><title>Welcome</title></html>", "text/html", e.UnexpectedResponse, "HTML"),
        ("password", 200, {"token_type": "Bearer"}, "application/json", e.UnexpectedResponse, "access_token"),
    ],
)
async def test_token_endpoint_answers(
    grant: str, status: int, body: Any, content_type: str, expected: type[e.ApiError], words: str
) -> None:
    auth = oauth(grant=grant)
    async with ConcreteClient(BASE, auth=auth, transport=token_error(status, body, content_type)) as client:
        with pytest.raises(expected) as caught:
            await client.get_group(4)
    assert words in str(caught.value)
    assert "csecret" not in str(caught.value)
    assert "pw-secret" not in str(caught.value)


async def test_token_without_expiry_is_assumed_to_last_an_hour() -> None:
    def tokens(request: httpx.Request) -> httpx.Response:
        return httpx.Response(200, json={"access_token": "t"})

    auth = oauth()
    client = ConcreteClient(
        BASE, auth=auth, transport=httpx.MockTransport(lambda r: tokens(r) if "oauth" in r.url.path else data(GROUP))
    )
    async with client:
        await client.get_group(4)
        await client.get_group(4)
    assert auth.fetches == 1


def test_jwt_scopes() -> None:
    token = make_jwt({"scopes": ["pages:read", "files:read"], "sub": "1"})
    assert granted_scopes(token) == ["pages:read", "files:read"]
    assert jwt_claims(token) == {"scopes": ["pages:read", "files:read"], "sub": "1"}
    assert granted_scopes("opaque-token") is None
    assert granted_scopes("a.!!!.c") is None


def test_default_scopes_are_what_routes_need() -> None:
    assert "blocks:update" not in DEFAULT_SCOPES
    assert "openid" not in DEFAULT_SCOPES
    assert len(set(DEFAULT_SCOPES)) == len(DEFAULT_SCOPES) == 25


def _settings(**auth: Any) -> Settings:
    return Settings.model_validate({"site": {"url": "https://cms.example"}, "auth": auth})


def test_token_source_from_settings(tmp_path: Path) -> None:
    source = token_source(
        _settings(grant="refresh_token", client_id="c", client_secret="s", refresh_token="r"), base_dir=tmp_path
    )
    assert isinstance(source, OAuthTokens)
    assert source.token_url == "https://cms.example/oauth/2.0/token"
    assert source._store == tmp_path / ".cmssync/tokens.json"
    assert isinstance(token_source(_settings(grant="token", token="abc"), base_dir=tmp_path), StaticToken)
    scoped = token_source(
        _settings(grant="client_credentials", client_id="c", client_secret="s", scopes=["pages:read"]),
        base_dir=tmp_path,
    )
    assert isinstance(scoped, OAuthTokens)
    assert scoped._scopes == ["pages:read"]


@pytest.mark.parametrize(
    ("auth", "words"),
    [
        ({"grant": "token"}, "CMSSYNC_TOKEN"),
        ({"grant": "password", "client_secret": "s"}, "client_id"),
        ({"grant": "password", "client_id": "c", "client_secret": "s"}, "auth.username"),
        ({"grant": "client_credentials", "client_id": "c"}, "client_secret"),
    ],
)
def test_missing_credentials(tmp_path: Path, auth: dict[str, Any], words: str) -> None:
    with pytest.raises(ConfigError, match=words):
        token_source(_settings(**auth), base_dir=tmp_path)


def test_from_settings_needs_a_url(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match=r"site\.url"):
        ConcreteClient.from_settings(Settings(), base_dir=tmp_path)


async def test_from_settings_uses_prefix_and_concurrency(tmp_path: Path) -> None:
    settings = Settings.model_validate(
        {
            "site": {"url": "https://cms.example/", "api_prefix": "/cms/api/1.0"},
            "auth": {"grant": "token", "token": "abc"},
            "concurrency": 3,
        }
    )
    async with ConcreteClient.from_settings(settings, base_dir=tmp_path) as client:
        assert client.api_url == "https://cms.example/cms/api/1.0"
        assert client.transport.concurrency == 3
