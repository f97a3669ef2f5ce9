"""Small helpers shared by the emulator tests: tokens and authenticated clients for a sandbox."""

from __future__ import annotations

import contextlib
import ssl
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any, TypeVar

import httpx

from cmssync.emulator.embedded import Sandbox
from tests.realsite.record_lists import Recorder
from tests.support.tokens import sandbox_token

R = TypeVar("R", bound=Recorder)

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


LIST_SCOPES = "pages:read pages:update pages:areas:update_block pages:versions:read pages:versions:update files:read "
LIST_SCOPES += "files:update users:read users:update"


@contextlib.contextmanager
def connected(sandbox: Sandbox, seed: str, generate: str | None = None) -> Iterator[httpx.Client]:
    """The sandbox reset to ``seed`` (a reset drops tokens), and a client with a fresh token."""
    sandbox.reset(seed=seed, generate=generate)
    token = sandbox_token(sandbox, LIST_SCOPES)
    with httpx.Client(base_url=sandbox.api_url, headers={"Authorization": f"Bearer {token}"}) as client:
        yield client


class Clock:
    """The sandbox's clock for its request handlers, moved on a second by the test instead of waiting for one (the
    lists are dated to the second); never behind the real clock, which dates what a reset seeds."""

    def __init__(self) -> None:
        self.offset = 0
        self.frozen: int | None = None

    def now(self) -> int:
        return (int(time.time()) if self.frozen is None else self.frozen) + self.offset

    def freeze(self) -> None:
        """Stop the clock in the second it is in (``next_second`` still moves it): several requests in one second."""
        self.frozen = int(time.time())

    def next_second(self) -> None:
        self.offset += 1


def replay_recorder(sandbox: Sandbox, recorder: type[R], out: Path, run: Callable[[R], None]) -> None:
    """Run a real-site recorder of ``tests/realsite/`` against the sandbox (its admin's credentials), writing its
    exchanges to ``out`` as it writes a recording of the real site."""
    env = {
        "CONCRETE_BASE": sandbox.url,
        "CONCRETE_CLIENT_ID": sandbox.client_id,
        "CONCRETE_CLIENT_SECRET": sandbox.client_secret,
        "CONCRETE_ADMIN_USER": sandbox.admin_username,
        "CONCRETE_ADMIN_PASSWORD": sandbox.admin_password,
    }
    replaying = recorder(env, out)
    try:
        replaying.login()
        run(replaying)
    finally:
        replaying.out.close()
        replaying.http.close()


def blocks_of(body: Any, types: frozenset[str]) -> list[tuple[str, Any]]:
    """``(type, value)`` of every block of ``types`` anywhere in an answer's JSON body (nested pages and areas)."""
    found: list[tuple[str, Any]] = []
    if isinstance(body, dict):
        if body.get("type") in types:
            found.append((str(body["type"]), body.get("value")))
        for value in body.values():
            found += blocks_of(value, types)
    elif isinstance(body, list):
        for item in body:
            found += blocks_of(item, types)
    return found
