"""Integration: the access-token cache against the sandbox — a second client, and a second ``cmssync`` process,
send no token request; a token the site no longer knows is dropped and fetched again once."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import httpx
import pytest
from pydantic import SecretStr

from cmssync.api.client import ConcreteClient
from cmssync.api.errors import AuthenticationFailed
from cmssync.config import Settings
from cmssync.emulator.embedded import Sandbox
from tests.support.api_clients import LIVE
from tests.support.sites import sandbox_environment

TOKEN_ROUTE = "POST /oauth/2.0/token"


def settings(sandbox: Sandbox, cache: Path, state: Path) -> Settings:
    return Settings.model_validate(
        {
            "site": {"url": sandbox.url, "api_prefix": httpx.URL(sandbox.api_url).path},
            "auth": {
                "grant": "password",
                "client_id": sandbox.client_id,
                "client_secret": sandbox.client_secret,
                "username": sandbox.admin_username,
                "password": sandbox.admin_password,
                "token_cache": str(cache),
            },
            "state": str(state),
        }
    )


async def read_home(sandbox: Sandbox, tmp_path: Path, **auth: str) -> ConcreteClient:
    chosen = settings(sandbox, tmp_path / "cache", tmp_path / "state" / "state.json")
    secrets = {name: SecretStr(value) for name, value in auth.items()}
    client = ConcreteClient.from_settings(
        chosen.model_copy(update={"auth": chosen.auth.model_copy(update=secrets)}),
        base_dir=tmp_path / "content",
        retry=LIVE,
    )
    async with client:
        assert (await client.get_page(1)).id == 1
    return client


def token_requests(sandbox: Sandbox) -> int:
    stats: dict[str, Any] = sandbox.stats()
    return int(stats["by_route"].get(TOKEN_ROUTE, 0))


async def test_a_second_client_sends_no_token_request(sandbox: Sandbox, tmp_path: Path) -> None:
    first = await read_home(sandbox, tmp_path)
    assert first.stats.token_requests == 1
    second = await read_home(sandbox, tmp_path)
    assert second.stats.token_requests == 0
    assert token_requests(sandbox) == 1
    assert second.stats.reauthentications == 0


async def test_a_token_the_site_forgot_is_fetched_again_once(sandbox: Sandbox, tmp_path: Path) -> None:
    await read_home(sandbox, tmp_path)
    sandbox.reset()  # revokes every token the sandbox issued, the cached one included
    third = await read_home(sandbox, tmp_path)
    assert third.stats.reauthentications == 1
    assert token_requests(sandbox) == 1
    assert sandbox.stats()["by_status"].get("401") == 1
    fourth = await read_home(sandbox, tmp_path)  # the new token was cached in place of the rejected one
    assert fourth.stats.token_requests == 0
    assert token_requests(sandbox) == 1


async def test_a_wrong_password_or_secret_is_refused_despite_a_cached_token(sandbox: Sandbox, tmp_path: Path) -> None:
    await read_home(sandbox, tmp_path)
    for wrong in ({"password": "not-the-password"}, {"client_secret": "not-the-secret"}):
        with pytest.raises(AuthenticationFailed):
            await read_home(sandbox, tmp_path, **wrong)
    assert token_requests(sandbox) == 3  # each wrong credential went to the site, which refused it
    right = await read_home(sandbox, tmp_path)
    assert right.stats.token_requests == 0


def test_a_second_process_sends_no_token_request(sandbox: Sandbox, tmp_path: Path) -> None:
    content = tmp_path / "content"
    (content / "pages").mkdir(parents=True)
    (content / "pages" / "token-cache-probe.yaml").write_text("name: Token cache probe\n", encoding="utf-8")
    env = {
        **os.environ,
        **sandbox_environment(sandbox, tmp_path / "state" / "state.json"),
        "CMSSYNC_TOKEN_CACHE": str(tmp_path / "cache"),
        "NO_COLOR": "1",
    }
    counts = []
    for _ in range(2):
        done = subprocess.run(
            [sys.executable, "-m", "cmssync", "--quiet", "plan", str(content)],
            env=env,
            capture_output=True,
            text=True,
            timeout=120,
            check=False,
        )
        assert done.returncode == 0, done.stderr
        assert "+ page /token-cache-probe: create" in done.stdout
        counts.append(token_requests(sandbox))
    assert counts == [1, 1]  # the second process took the first one's token
    [cached] = list((tmp_path / "cache").iterdir())
    assert sandbox.admin_password not in cached.read_text()
    assert sandbox.client_secret not in cached.read_text()
