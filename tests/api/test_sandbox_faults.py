"""Integration: injected faults, revoked and rotated tokens, diagnosis, against the sandbox."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import httpx
import pytest

from cmssync.api import errors as e
from cmssync.api.auth import OAuthTokens
from cmssync.api.client import ConcreteClient
from cmssync.api.retry import RetryPolicy
from cmssync.config import Settings
from cmssync.sync.diagnose import diagnose
from tests.support.api_clients import LIVE, sandbox_client

pytestmark = pytest.mark.slow


async def test_rate_limited_with_retry_after(live: ConcreteClient, sandbox_any_dialect: Any) -> None:
    await live.get_page(1)  # the token first: faults apply to the token endpoint too
    sandbox_any_dialect.set_faults(["429:1:retry-after=1:times=2"])
    assert (await live.system_info()).version
    assert live.stats.count(status=429) == 2
    assert live.stats.retries == 2


async def test_service_unavailable(live: ConcreteClient, sandbox_any_dialect: Any) -> None:
    sandbox_any_dialect.set_faults(["503:1:times=2"])
    assert (await live.get_page(1)).id == 1
    sandbox_any_dialect.set_faults(["503:1"])
    with pytest.raises(e.ServerError) as caught:
        await live.get_page(1)
    assert caught.value.temporary


async def test_dropped_connections(sandbox_any_dialect: Any) -> None:
    sandbox_any_dialect.set_faults(["drop:0.3:method=GET"], seed=7)
    async with sandbox_client(
        sandbox_any_dialect, retry=RetryPolicy(attempts=8, wait_initial=0.001, wait_max=0.01)
    ) as client:
        nodes = [n async for n in client.walk_page_tree()]
        errors = client.stats.count(status="error")
    assert len(nodes) >= 7
    assert errors >= 1


async def test_create_is_not_repeated(live: ConcreteClient, sandbox_any_dialect: Any) -> None:
    sandbox_any_dialect.set_faults(["commit-then-500:1:times=1:method=POST:path=/groups"])
    with pytest.raises(e.OutcomeUnknown):
        await live.create_group("Maybe Group")
    sandbox_any_dialect.clear_faults()
    names = [g.name async for g in live.iter_groups()]
    assert names.count("Maybe Group") == 1  # it did happen, once


async def test_dropped_create(live: ConcreteClient, sandbox_any_dialect: Any) -> None:
    sandbox_any_dialect.set_faults(["drop:1:times=1:method=POST:path=/users"])
    with pytest.raises(e.OutcomeUnknown):
        await live.create_user(username="dropped_user", email="d@example.com", password="pass-word1")


async def test_delete_gone_on_retry_has_succeeded(live: ConcreteClient, sandbox_any_dialect: Any) -> None:
    user = await live.create_user(username="deleted_twice", email="dt@example.com", password="pass-word1")
    sandbox_any_dialect.set_faults(["commit-then-500:1:times=1:method=DELETE:path=/users"])
    result = await live.delete_user(user.id)
    assert result.deleted
    assert result.confirmed_by_retry


async def test_revoked_token_is_renewed_once(live: ConcreteClient, sandbox_any_dialect: Any) -> None:
    await live.system_info()
    sandbox_any_dialect.set_faults(["revoke-token:1:times=1"])
    assert (await live.system_info()).version
    assert live.stats.reauthentications == 1


async def test_token_renewed_before_expiry(sandbox_any_dialect: Any) -> None:
    now = [0.0]
    auth = OAuthTokens(
        token_url=sandbox_any_dialect.url + "/oauth/2.0/token",
        grant="client_credentials",
        client_id=sandbox_any_dialect.client_id,
        client_secret=sandbox_any_dialect.client_secret,
        clock=lambda: now[0],
    )
    async with sandbox_client(sandbox_any_dialect, auth=auth) as client:
        await client.system_info()
        now[0] = 3590.0  # within the leeway of a one-hour token
        await client.system_info()
    assert auth.fetches == 2


async def test_refresh_token_rotation(sandbox_any_dialect: Any, tmp_path: Path) -> None:
    sandbox = sandbox_any_dialect
    form = {
        "grant_type": "password",
        "client_id": sandbox.client_id,
        "client_secret": sandbox.client_secret,
        "username": sandbox.admin_username,
        "password": sandbox.admin_password,
        "scope": "system:info:read pages:read account:read",
    }
    async with httpx.AsyncClient() as http:
        first = (await http.post(sandbox.url + "/oauth/2.0/token", data=form)).json()
    store = tmp_path / "tokens.json"

    def tokens() -> OAuthTokens:
        return OAuthTokens(
            token_url=sandbox.url + "/oauth/2.0/token",
            grant="refresh_token",
            client_id=sandbox.client_id,
            client_secret=sandbox.client_secret,
            refresh_token=first["refresh_token"],
            token_store=store,
        )

    async with sandbox_client(sandbox, auth=tokens()) as client:
        assert (await client.account()).id == 1
    rotated = json.loads(store.read_text())["refresh_token"]
    assert rotated != first["refresh_token"]
    # A second process continues from the store: the configured (old) token was revoked by the rotation.
    async with sandbox_client(sandbox, auth=tokens()) as client:
        assert (await client.get_page(1)).id == 1
    assert json.loads(store.read_text())["refresh_token"] != rotated
    # Without the store the old refresh token is refused.
    stale = OAuthTokens(
        token_url=sandbox.url + "/oauth/2.0/token",
        grant="refresh_token",
        client_id=sandbox.client_id,
        client_secret=sandbox.client_secret,
        refresh_token=first["refresh_token"],
    )
    async with sandbox_client(sandbox, auth=stale) as client:
        with pytest.raises(e.AuthenticationFailed):
            await client.system_info()


async def test_wrong_secret(sandbox_any_dialect: Any) -> None:
    client = sandbox_client(sandbox_any_dialect, auth_options={"client_secret": "wrong"})
    async with client:
        with pytest.raises(e.AuthenticationFailed, match="client_secret"):
            await client.system_info()


async def test_out_of_scope(sandbox_any_dialect: Any) -> None:
    client = sandbox_client(sandbox_any_dialect, auth_options={"scopes": ["pages:read"]})
    async with client:
        assert (await client.get_page(1)).id == 1
        with pytest.raises(e.OutOfScope):
            await client.system_info()


async def test_client_credentials_cannot_read_account(sandbox_any_dialect: Any) -> None:
    async with sandbox_client(sandbox_any_dialect, grant="client_credentials", retry=RetryPolicy(attempts=1)) as client:
        assert (await client.system_info()).version
        with pytest.raises((e.ServerError, e.UnexpectedResponse)):
            await client.account()


async def test_wrong_prefix_is_api_disabled(sandbox: Any) -> None:
    async with ConcreteClient(sandbox.url, auth=None, api_prefix="/ccm/api/9.9", retry=LIVE) as client:
        with pytest.raises(e.ApiDisabled):
            await client.system_info()


def _settings(sandbox: Any, **auth: Any) -> Settings:
    prefix = httpx.URL(sandbox.api_url).path
    values: dict[str, Any] = {
        "grant": "password",
        "client_id": sandbox.client_id,
        "client_secret": sandbox.client_secret,
        "username": sandbox.admin_username,
        "password": sandbox.admin_password,
    }
    values.update(auth)
    return Settings.model_validate({"site": {"url": sandbox.url, "api_prefix": prefix}, "auth": values})


async def test_diagnose_ok(sandbox_any_dialect: Any, tmp_path: Path) -> None:
    report = await diagnose(_settings(sandbox_any_dialect), base_dir=tmp_path)
    assert report.ok, report.lines()
    assert report.account == "admin (user 1)"
    assert report.version
    assert report.site_name
    assert report.scopes is not None
    assert not report.missing_scopes


async def test_diagnose_problems(sandbox_any_dialect: Any, tmp_path: Path) -> None:
    wrong = await diagnose(_settings(sandbox_any_dialect, client_secret="nope"), base_dir=tmp_path)
    assert not wrong.ok
    assert "client_secret" in wrong.problems[0]
    # The Guest's /account answers 500: status's patient policy would try it 15 times over ~20 s.
    guest = await diagnose(_settings(sandbox_any_dialect, grant="client_credentials"), base_dir=tmp_path, retry=LIVE)
    assert guest.account is not None
    assert "Guest" in guest.account
    settings = _settings(sandbox_any_dialect)
    moved = settings.model_copy(update={"site": settings.site.model_copy(update={"api_prefix": "/nope/api"})})
    disabled = await diagnose(moved, base_dir=tmp_path)
    assert not disabled.ok
    assert "not enabled" in disabled.problems[0]


async def test_permission_denied_for_a_regular_user(sandbox_any_dialect: Any) -> None:
    jane = sandbox_client(sandbox_any_dialect, auth_options={"username": "jane", "password": "jane-password"})
    async with jane:
        assert (await jane.account()).username == "jane"
        with pytest.raises(e.PermissionDenied):
            await jane.delete_user(1)


async def test_rate_limited_when_retries_run_out(live: ConcreteClient, sandbox_any_dialect: Any) -> None:
    await live.get_page(1)
    sandbox_any_dialect.set_faults(["429:1:retry-after=1:path=/pages"])
    with pytest.raises(e.RateLimited) as caught:
        await live.get_page(1)
    assert caught.value.retry_after == 1
    assert caught.value.temporary
    assert live.stats.count("GET", "/pages/{page_id}", 429) == 4


async def test_transport_error_when_retries_run_out(live: ConcreteClient, sandbox_any_dialect: Any) -> None:
    await live.get_page(1)
    sandbox_any_dialect.set_faults(["drop:1:path=/pages"])
    with pytest.raises(e.TransportError) as caught:
        await live.get_page(1)
    assert caught.value.temporary


async def test_concurrent_requests_share_one_token(sandbox_any_dialect: Any) -> None:
    import asyncio

    async with sandbox_client(sandbox_any_dialect, concurrency=4) as client:
        pages = await asyncio.gather(*(client.get_page(1) for _ in range(24)))
    assert {p.id for p in pages} == {1}
    assert client.stats.token_requests == 1
    assert client.stats.count("GET", "/pages/{page_id}", 200) == 24
