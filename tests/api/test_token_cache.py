"""The access-token cache between processes (``auth.token_cache``): expiry, key separation, permissions, files that
are not ours or not tokens, a rejected cached token, and the settings that choose the directory."""

from __future__ import annotations

import json
import os
import stat
from pathlib import Path
from typing import Any

import httpx
import pytest

from cmssync.api import token_cache
from cmssync.api.token_cache import CachedToken, TokenCache, cache_key, default_cache_dir, token_cache_for
from cmssync.config import Settings
from cmssync.errors import ConfigError
from cmssync.secrets import mask_secrets
from tests.support.api_clients import BASE, FakeTokenEndpoint, data, mock_client, oauth

GROUP = {"id": 4, "name": "G"}
TOKEN_URL = BASE + "/oauth/2.0/token"
SCOPES = ["pages:read", "files:read"]


class Clock:
    """A settable wall clock (seconds since the epoch) shared by the cache and the token source."""

    def __init__(self, now: float = 1_800_000_000.0) -> None:
        self.now = now

    def __call__(self) -> float:
        return self.now


def key(**changes: Any) -> str:
    identity: dict[str, Any] = {
        "token_url": TOKEN_URL,
        "client_id": "cid",
        "username": "admin",
        "grant": "password",
        "scopes": SCOPES,
        "secrets": ("csecret", "pw-secret"),
    }
    identity.update(changes)
    return cache_key(**identity)


def cached_source(cache: TokenCache, clock: Clock, **kwargs: Any) -> Any:
    """A password-grant source on ``cache`` whose in-process clock follows ``clock``."""
    kwargs.setdefault("scopes", SCOPES)
    return oauth(cache=cache, clock=clock, **kwargs)


async def get_group(cache: TokenCache, clock: Clock, tokens: FakeTokenEndpoint, **kwargs: Any) -> list[str]:
    """One command's worth: a new client and token source on ``cache``; returns the bearer tokens the API saw."""
    seen: list[str] = []

    def api(request: httpx.Request) -> httpx.Response:
        seen.append(request.headers["Authorization"].removeprefix("Bearer "))
        return data(GROUP)

    async with mock_client(api, tokens=tokens, auth=cached_source(cache, clock, **kwargs)) as client:
        await client.get_group(4)
    return seen


# -- expiry ---------------------------------------------------------------------------------------------------------


async def test_a_second_client_uses_the_cached_token_until_shortly_before_it_expires(tmp_path: Path) -> None:
    clock = Clock()
    cache = TokenCache(tmp_path / "tokens", wall=clock)
    tokens = FakeTokenEndpoint(expires_in=3600)
    assert await get_group(cache, clock, tokens) == ["tok-1"]
    clock.now += 3600 - 61  # 61 s left, more than the 60 s leeway
    assert await get_group(cache, clock, tokens) == ["tok-1"]
    assert tokens.issued == 1
    clock.now += 2  # 59 s left: renewed, and the renewal cached
    assert await get_group(cache, clock, tokens) == ["tok-2"]
    assert await get_group(cache, clock, tokens) == ["tok-2"]
    assert tokens.issued == 2


async def test_an_expired_file_is_not_used(tmp_path: Path) -> None:
    clock = Clock()
    cache = TokenCache(tmp_path / "tokens", wall=clock)
    cache.save(key(), CachedToken("old-token", clock.now - 1))
    assert cache.load(key()) is None
    tokens = FakeTokenEndpoint()
    assert await get_group(cache, clock, tokens) == ["tok-1"]


# -- key separation -------------------------------------------------------------------------------------------------


def test_each_identity_has_its_own_key_and_no_secret_is_in_it() -> None:
    keys = {
        key(),
        key(token_url="http://other.test/oauth/2.0/token"),
        key(client_id="other"),
        key(username="editor"),
        key(grant="client_credentials", username=None),
        key(scopes=["pages:read"]),
        key(secrets=("csecret", "other-password")),
        key(secrets=("other-secret", "pw-secret")),
    }
    assert len(keys) == 8
    assert key(secrets=("csecret", "pw-secret")) != key(secrets=("csecretpw", "-secret"))
    assert key(scopes=list(reversed(SCOPES))) == key()  # the same scopes in another order: the same grant
    assert key(token_url=TOKEN_URL + "/") == key()


async def test_another_user_or_site_does_not_get_the_token(tmp_path: Path) -> None:
    clock = Clock()
    cache = TokenCache(tmp_path / "tokens", wall=clock)
    tokens = FakeTokenEndpoint()
    assert await get_group(cache, clock, tokens) == ["tok-1"]
    assert await get_group(cache, clock, tokens, username="editor") == ["tok-2"]
    assert await get_group(cache, clock, tokens, client_id="other-client") == ["tok-3"]
    assert await get_group(cache, clock, tokens, scopes=["pages:read"]) == ["tok-4"]
    assert await get_group(cache, clock, tokens) == ["tok-1"]
    names = sorted(p.name for p in (tmp_path / "tokens").iterdir())
    assert len(names) == 4
    for name in names:
        text = (tmp_path / "tokens" / name).read_text()
        assert "pw-secret" not in name + text
        assert "csecret" not in name + text
        assert set(json.loads(text)) == {"format", "key", "access_token", "expires_at", "saved_at"}


async def test_a_changed_password_or_secret_never_rides_on_the_cached_token(tmp_path: Path) -> None:
    clock = Clock()
    cache = TokenCache(tmp_path / "tokens", wall=clock)
    tokens = FakeTokenEndpoint()
    assert await get_group(cache, clock, tokens) == ["tok-1"]
    assert await get_group(cache, clock, tokens, password="wrong") == ["tok-2"]
    assert tokens.forms[-1]["password"] == "wrong"  # the site, not the cache, judges the new password
    assert await get_group(cache, clock, tokens, client_secret="other") == ["tok-3"]
    assert tokens.forms[-1]["client_secret"] == "other"
    assert await get_group(cache, clock, tokens) == ["tok-1"]


async def test_refresh_token_and_static_grants_are_not_cached(tmp_path: Path) -> None:
    clock = Clock()
    cache = TokenCache(tmp_path / "tokens", wall=clock)
    tokens = FakeTokenEndpoint(refresh=True)
    store = tmp_path / "store.json"
    refresh = {"grant": "refresh_token", "refresh_token": "refresh-0", "token_store": store}
    await get_group(cache, clock, tokens, **refresh)
    assert not (tmp_path / "tokens").exists()


# -- permissions, files that are not ours ---------------------------------------------------------------------------


async def test_directory_0700_and_file_0600(tmp_path: Path) -> None:
    clock = Clock()
    cache = TokenCache(tmp_path / "cache" / "tokens", wall=clock)
    await get_group(cache, clock, FakeTokenEndpoint())
    assert stat.S_IMODE((tmp_path / "cache" / "tokens").stat().st_mode) == 0o700
    [file] = list((tmp_path / "cache" / "tokens").iterdir())
    assert stat.S_IMODE(file.stat().st_mode) == 0o600
    assert file.name == key() + ".json"


def test_a_loose_directory_of_ours_is_tightened_on_save(tmp_path: Path) -> None:
    directory = tmp_path / "tokens"
    directory.mkdir(mode=0o777)
    os.chmod(directory, 0o777)
    cache = TokenCache(directory)
    assert cache.load(key()) is None  # nobody else may have written into it: its files prove nothing
    cache.save(key(), CachedToken("t-1", cache.now() + 3600))
    assert stat.S_IMODE(directory.stat().st_mode) == 0o700
    assert cache.load(key()) == CachedToken("t-1", pytest.approx(cache.now() + 3600, abs=5))


@pytest.mark.parametrize("mode", [0o640, 0o604, 0o666])
def test_a_file_others_may_read_or_write_is_ignored(tmp_path: Path, mode: int) -> None:
    cache = TokenCache(tmp_path / "tokens")
    cache.save(key(), CachedToken("t-1", cache.now() + 3600))
    os.chmod(cache.path(key()), mode)
    assert cache.load(key()) is None


def test_files_and_directories_of_another_user_are_ignored(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    cache = TokenCache(tmp_path / "tokens")
    cache.save(key(), CachedToken("t-1", cache.now() + 3600))
    assert cache.load(key()) is not None
    me = os.getuid()
    monkeypatch.setattr(os, "getuid", lambda: me + 1)  # the same files, seen by another user
    assert cache.load(key()) is None
    cache.save(key(), CachedToken("t-2", cache.now() + 3600))  # nor written into someone else's directory
    monkeypatch.setattr(os, "getuid", lambda: me)
    assert cache.load(key()) == CachedToken("t-1", pytest.approx(cache.now() + 3600, abs=5))


@pytest.mark.skipif(os.getuid() != 0, reason="giving a file away needs root")
def test_a_file_given_to_another_user_is_ignored(tmp_path: Path) -> None:
    cache = TokenCache(tmp_path / "tokens")
    cache.save(key(), CachedToken("t-1", cache.now() + 3600))
    os.chown(cache.path(key()), 4242, 4242)
    assert cache.load(key()) is None


@pytest.mark.parametrize(
    "content",
    [
        "not json",
        "[]",
        '{"format": 1, "key": "someone-else", "access_token": "t", "expires_at": 9999999999}',
        '{"format": 99, "key": "KEY", "access_token": "t", "expires_at": 9999999999}',
        '{"format": 1, "key": "KEY", "access_token": "", "expires_at": 9999999999}',
        '{"format": 1, "key": "KEY", "access_token": "t", "expires_at": "tomorrow"}',
        "\udcff",
    ],
)
async def test_a_corrupt_or_foreign_file_is_ignored_and_replaced(tmp_path: Path, content: str) -> None:
    clock = Clock()
    cache = TokenCache(tmp_path / "tokens", wall=clock)
    cache.directory.mkdir(mode=0o700)
    path = cache.path(key())
    path.write_bytes(content.replace("KEY", key()).encode("utf-8", "surrogateescape"))
    os.chmod(path, 0o600)
    tokens = FakeTokenEndpoint()
    assert await get_group(cache, clock, tokens) == ["tok-1"]
    assert json.loads(path.read_text())["access_token"] == "tok-1"


def test_links_fifos_and_huge_files_are_not_read(tmp_path: Path) -> None:
    cache = TokenCache(tmp_path / "tokens")
    cache.save(key(), CachedToken("t-1", cache.now() + 3600))
    elsewhere = tmp_path / "elsewhere.json"
    cache.path(key()).rename(elsewhere)
    cache.path(key()).symlink_to(elsewhere)
    assert cache.load(key()) is None
    cache.path(key()).unlink()
    os.mkfifo(cache.path(key()), 0o600)
    assert cache.load(key()) is None  # and does not hang waiting for a writer
    cache.path(key()).unlink()
    cache.path(key()).write_text(" " * 70_000 + json.dumps({"format": 1}))
    os.chmod(cache.path(key()), 0o600)
    assert cache.load(key()) is None


def test_an_unwritable_cache_is_not_an_error(tmp_path: Path) -> None:
    blocker = tmp_path / "file"
    blocker.write_text("")
    cache = TokenCache(blocker / "tokens")
    cache.save(key(), CachedToken("t-1", cache.now() + 3600))  # logs at debug level, raises nothing
    assert cache.load(key()) is None


def test_a_cached_token_is_a_registered_secret(tmp_path: Path) -> None:
    writer = TokenCache(tmp_path / "tokens")
    secret = "cached-AbC123-never-printed-" + os.urandom(4).hex()
    writer.save(key(), CachedToken(secret, writer.now() + 3600))
    reader = TokenCache(tmp_path / "tokens")
    assert reader.load(key()) is not None
    assert secret not in mask_secrets(f"the site echoed {secret}")


# -- a rejected cached token ----------------------------------------------------------------------------------------


async def test_a_rejected_cached_token_is_dropped_and_fetched_again_once(tmp_path: Path) -> None:
    clock = Clock()
    cache = TokenCache(tmp_path / "tokens", wall=clock)
    cache.save(key(), CachedToken("revoked-token", clock.now + 3000))
    tokens = FakeTokenEndpoint()
    seen: list[str] = []

    def api(request: httpx.Request) -> httpx.Response:
        token = request.headers["Authorization"].removeprefix("Bearer ")
        seen.append(token)
        if token == "revoked-token":
            return httpx.Response(401, json={"error": "access_denied", "hint": "Access token has been revoked"})
        return data(GROUP)

    async with mock_client(api, tokens=tokens, auth=cached_source(cache, clock)) as client:
        await client.get_group(4)
        assert client.stats.reauthentications == 1
    assert seen == ["revoked-token", "tok-1"]
    assert tokens.issued == 1
    assert cache.load(key()) == CachedToken("tok-1", clock.now + 3600)


async def test_discard_leaves_a_token_another_process_renewed(tmp_path: Path) -> None:
    cache = TokenCache(tmp_path / "tokens")
    cache.save(key(), CachedToken("renewed-elsewhere", cache.now() + 3600))
    cache.discard(key(), "the-rejected-one")
    assert cache.load(key()) is not None
    cache.discard(key(), "renewed-elsewhere")
    assert not cache.path(key()).exists()


# -- settings -------------------------------------------------------------------------------------------------------


def _settings(tmp_path: Path, **auth: Any) -> Settings:
    values: dict[str, Any] = {"grant": "password", "client_id": "cid", "username": "admin"}
    values.update(auth)
    return Settings.model_validate(
        {"site": {"url": BASE}, "auth": values, "state": str(tmp_path / "state" / "state.json")}
    )


def test_the_default_is_the_per_user_cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(token_cache, "default_cache_dir", default_cache_dir)  # tests/conftest.py turns it off
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    assert default_cache_dir() == tmp_path / "xdg" / "cmssync" / "tokens"
    cache = token_cache_for(_settings(tmp_path), base_dir=tmp_path / "content")
    assert cache is not None
    assert cache.directory == tmp_path / "xdg" / "cmssync" / "tokens"
    monkeypatch.setenv("XDG_CACHE_HOME", "relative/is/ignored")
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    assert default_cache_dir() == tmp_path / "home" / ".cache" / "cmssync" / "tokens"


@pytest.mark.parametrize("off", [False, "off", "false", "0", "no"])
def test_off(tmp_path: Path, off: Any) -> None:
    assert _settings(tmp_path, token_cache=off).auth.token_cache is False
    assert token_cache_for(_settings(tmp_path, token_cache=off), base_dir=tmp_path) is None


def test_a_directory_and_the_variables(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from cmssync.config import load_settings

    cache = token_cache_for(_settings(tmp_path, token_cache=str(tmp_path / "mine")), base_dir=tmp_path / "content")
    assert cache is not None
    assert cache.directory == tmp_path / "mine"
    monkeypatch.setenv("CMSSYNC_TOKEN_CACHE", str(tmp_path / "from-env"))
    assert load_settings(None, secrets_dir=None).auth.token_cache == str(tmp_path / "from-env")
    monkeypatch.setenv("CMSSYNC_AUTH__TOKEN_CACHE", "on")
    assert load_settings(None, secrets_dir=None).auth.token_cache is True


def test_never_inside_the_content_or_beside_the_state(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(token_cache, "default_cache_dir", default_cache_dir)
    content = tmp_path / "content"
    # The per-user default falling inside (a home in the content, a container whose home is the state volume):
    # silently no cache.
    monkeypatch.setenv("XDG_CACHE_HOME", str(content / ".cache"))
    assert token_cache_for(_settings(tmp_path), base_dir=content) is None
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "state" / ".cache"))
    assert token_cache_for(_settings(tmp_path), base_dir=content) is None
    # Asked for explicitly: refused, with the reason.
    for inside in (".cmssync/tokens", str(tmp_path / "state" / "tokens")):
        with pytest.raises(ConfigError, match="may be committed to git"):
            token_cache_for(_settings(tmp_path, token_cache=inside), base_dir=content)


def _symlinked(root: Path) -> None:
    (root.parent / "elsewhere").mkdir(mode=0o700)
    root.symlink_to(root.parent / "elsewhere")


def _world_writable(root: Path) -> None:
    root.mkdir(mode=0o700)
    root.chmod(0o777)


def _other_owned(root: Path) -> None:
    if os.getuid() != 0:
        pytest.skip("making a directory of another user needs root")
    root.mkdir(mode=0o700)
    os.chown(root, 12345, 12345)


def _in_the_contents_repository(root: Path) -> None:
    (root.parent.parent / ".git").mkdir()


@pytest.mark.parametrize("make", [_symlinked, _world_writable, _other_owned, _in_the_contents_repository])
def test_the_per_user_root_must_be_private_and_outside_any_repository(
    make: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Issue 37 item 2: the token cache's root passes the parse cache's checks; nothing is written into it."""
    monkeypatch.setattr(token_cache, "default_cache_dir", default_cache_dir)
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    (tmp_path / "xdg").mkdir(mode=0o700)
    root = tmp_path / "xdg" / "cmssync"
    make(root)
    content = tmp_path / "content"
    assert token_cache_for(_settings(tmp_path), base_dir=content) is None
    assert not (root / "tokens").exists()


def test_an_explicit_directory_in_the_contents_repository_is_refused(tmp_path: Path) -> None:
    (tmp_path / ".git").mkdir()
    with pytest.raises(ConfigError, match="git work tree"):
        token_cache_for(_settings(tmp_path, token_cache=str(tmp_path / "ci-cache")), base_dir=tmp_path / "content")


def test_the_sandbox_option_turns_it_off(tmp_path: Path) -> None:
    from cmssync.cli.sandbox import site_overrides

    with site_overrides(tmp_path, sandbox=True) as overrides:
        assert overrides is not None
        assert overrides["auth"]["token_cache"] is False
