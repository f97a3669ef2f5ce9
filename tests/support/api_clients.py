"""API clients for the tests: mock-transport clients (a fake token endpoint, canned answers) for unit tests, and
clients of the sandbox for integration tests."""

from __future__ import annotations

import base64
import json
from collections.abc import Callable
from typing import Any

import httpx

from cmssync.api.auth import OAuthTokens
from cmssync.api.client import ConcreteClient
from cmssync.api.retry import RetryPolicy

FAST = RetryPolicy(attempts=4, timeout=10.0, wait_initial=0.001, wait_max=0.005, wait_jitter=0.0, retry_after_max=0.02)
"""Retries without real waiting."""

BASE = "http://cms.test"
PREFIX = "/ccm/api/1.0"

Handler = Callable[[httpx.Request], httpx.Response]


def make_jwt(claims: dict[str, Any]) -> str:
    def part(data: dict[str, Any]) -> str:
        return base64.urlsafe_b64encode(json.dumps(data).encode()).rstrip(b"=").decode()

    return f"{part({'alg': 'RS256', 'typ': 'JWT'})}.{part(claims)}.c2lnbmF0dXJl"


class FakeTokenEndpoint:
    """Issues tokens ``tok-1``, ``tok-2``… (or JWTs) and remembers each form it received."""

    def __init__(self, *, expires_in: int = 3600, jwt_scopes: list[str] | None = None, refresh: bool = False) -> None:
        self.forms: list[dict[str, str]] = []
        self.expires_in = expires_in
        self.jwt_scopes = jwt_scopes
        self.refresh = refresh

    @property
    def issued(self) -> int:
        return len(self.forms)

    def current(self) -> str:
        n = self.issued
        return make_jwt({"scopes": self.jwt_scopes, "n": n}) if self.jwt_scopes is not None else f"tok-{n}"

    def __call__(self, request: httpx.Request) -> httpx.Response:
        form = dict(httpx.QueryParams(request.content.decode()))
        self.forms.append(form)
        body: dict[str, Any] = {"token_type": "Bearer", "expires_in": self.expires_in, "access_token": self.current()}
        if self.refresh:
            body["refresh_token"] = f"refresh-{self.issued}"
        return httpx.Response(200, json=body)


def oauth(token_endpoint: str = BASE + "/oauth/2.0/token", **kwargs: Any) -> OAuthTokens:
    options: dict[str, Any] = {
        "grant": "password",
        "client_id": "cid",
        "client_secret": "csecret",
        "username": "admin",
        "password": "pw-secret",
    }
    options.update(kwargs)
    return OAuthTokens(token_url=token_endpoint, **options)


def mock_client(
    api: Handler,
    *,
    tokens: FakeTokenEndpoint | None = None,
    auth: Any = "default",
    retry: RetryPolicy = FAST,
    concurrency: int = 8,
    prefix: str = PREFIX,
) -> ConcreteClient:
    """A client whose requests go to ``api`` (and to ``tokens`` for the token endpoint)."""
    endpoint = tokens or FakeTokenEndpoint()

    def route(request: httpx.Request) -> httpx.Response:
        if request.url.path == "/oauth/2.0/token":
            return endpoint(request)
        return api(request)

    return ConcreteClient(
        BASE,
        auth=oauth() if auth == "default" else auth,
        api_prefix=prefix,
        retry=retry,
        concurrency=concurrency,
        transport=httpx.MockTransport(route),
    )


def data(value: Any, status: int = 200, **headers: str) -> httpx.Response:
    return httpx.Response(status, json={"data": value}, headers=headers)


def error_list(status: int, *messages: str) -> httpx.Response:
    return httpx.Response(
        status,
        json={
            "error": True,
            "errors": list(messages),
            "list": [{"message": m, "messageContainsHtml": False} for m in messages],
        },
    )


HTML_404 = (
    '<!DOCTYPE html>\n<html lang="en">\n<head>\n<title>Page Not Found :: Concrete Real Test</title>\n</head>'
    "<body>" + "x" * 5000 + "</body></html>"
)
WHOOPS_500 = (
    "<!DOCTYPE html><!--\n\n\nRuntimeException: There is no user associated with request in file "
    "/site/concrete/src/Api/Controller/Account.php on line 30\nStack trace:\n" + "frame\n" * 500 + "-->"
)


# -- the sandbox (integration tests) ----------------------------------------------------------------------------

LIVE = RetryPolicy(attempts=4, timeout=20.0, wait_initial=0.001, wait_max=0.01, wait_jitter=0.0, retry_after_max=0.02)
"""Retries against the sandbox: ``Retry-After`` is honoured but capped, so fault tests stay fast."""


def sandbox_client(
    sandbox: Any, *, grant: str = "password", retry: RetryPolicy = LIVE, **options: Any
) -> ConcreteClient:
    """A client acting as the sandbox's super admin (or as ``options`` say), on the sandbox's API prefix."""
    auth = options.pop("auth", None)
    if auth is None:
        settings: dict[str, Any] = {
            "grant": grant,
            "client_id": sandbox.client_id,
            "client_secret": sandbox.client_secret,
        }
        if grant == "password":
            settings.update(username=sandbox.admin_username, password=sandbox.admin_password)
        settings.update(options.pop("auth_options", {}))
        auth = OAuthTokens(token_url=sandbox.url + "/oauth/2.0/token", **settings)
    prefix = httpx.URL(sandbox.api_url).path
    return ConcreteClient(sandbox.url, auth=auth, api_prefix=prefix, retry=retry, **options)
