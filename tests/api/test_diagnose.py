"""``cmssync status`` diagnoses: each broken setup gets one actionable sentence."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import httpx
import pytest

from cmssync.api.client import PROBE_WAITS, ConcreteClient
from cmssync.config import Settings
from cmssync.sync.diagnose import StatusReport, diagnose
from tests.support.api_clients import FAST, HTML_404, WHOOPS_500, make_jwt

URL = "http://cms.test"
ALL = ["account:read", "system:info:read", "sites:read", "pages:read"]


def settings(grant: str = "password") -> Settings:
    auth: dict[str, Any] = {"grant": grant, "client_id": "c", "client_secret": "s"}
    if grant == "password":
        auth.update(username="admin", password="pw")
    return Settings.model_validate({"site": {"url": URL}, "auth": auth})


def site(
    *,
    api_disabled: bool = False,
    token: Callable[[httpx.Request], httpx.Response] | None = None,
    account: httpx.Response | None = None,
    scopes: list[str] | None = ALL,
) -> httpx.MockTransport:
    def handle(request: httpx.Request) -> httpx.Response:
        path = request.url.path
        if api_disabled:
            return httpx.Response(404, html=HTML_404)
        if path == "/oauth/2.0/token":
            if token is not None:
                return token(request)
            access = make_jwt({"scopes": scopes}) if scopes is not None else "opaque"
            return httpx.Response(200, json={"access_token": access, "expires_in": 3600})
        if "authorization" not in request.headers:
            return httpx.Response(401, json={"error": "access_denied", "hint": 'Missing "Authorization" header'})
        if path.endswith("/system/info"):
            return httpx.Response(200, json={"data": {"version": "9.3.1"}})
        if path.endswith("/account"):
            return account or httpx.Response(200, json={"data": {"id": 1, "username": "admin"}})
        if path.endswith("/sites/default"):
            return httpx.Response(
                200,
                json={
                    "data": {
                        "id": 1,
                        "name": "Example",
                        "home_page_id": 1,
                        "default_locale": "en_US",
                        "locales": {"data": [{"id": 1, "country": "US", "language": "en", "home_page_id": 1}]},
                    }
                },
            )
        return httpx.Response(404, html=HTML_404)

    return httpx.MockTransport(handle)


async def run(config: Settings, transport: httpx.MockTransport, tmp_path: Path) -> StatusReport:
    client = ConcreteClient.from_settings(config, base_dir=tmp_path, retry=FAST, transport=transport)
    return await diagnose(config, base_dir=tmp_path, client=client)


async def test_all_good(tmp_path: Path) -> None:
    report = await run(settings(), site(), tmp_path)
    text = "\n".join(report.lines())
    assert report.ok, text
    assert report.account == "admin (user 1)"
    assert report.version == "9.3.1"
    assert report.site_name == "Example"
    assert report.locales == ["en_US"]
    assert report.home_page_id == 1
    assert "scopes:    4 granted" in text
    assert "missing: " in text
    assert text.endswith("status:    ok")


async def test_api_disabled(tmp_path: Path) -> None:
    report = await run(settings(), site(api_disabled=True), tmp_path)
    assert not report.ok
    assert "not enabled" in report.problems[0]
    assert "concrete.api.enabled" in report.problems[0]


async def test_wrong_secret(tmp_path: Path) -> None:
    def refuse(request: httpx.Request) -> httpx.Response:
        return httpx.Response(
            401, json={"error": "invalid_client", "error_description": "Client authentication failed"}
        )

    report = await run(settings(), site(token=refuse), tmp_path)
    assert not report.ok
    assert "client_secret" in report.problems[0]


async def test_password_grant_not_enabled(tmp_path: Path) -> None:
    def refuse(request: httpx.Request) -> httpx.Response:
        return httpx.Response(400, json={"error": "unsupported_grant_type", "error_description": "not supported"})

    report = await run(settings(), site(token=refuse), tmp_path)
    assert "password_credentials" in report.problems[0]


async def test_client_credentials_act_as_guest(tmp_path: Path) -> None:
    report = await run(settings("client_credentials"), site(account=httpx.Response(500, html=WHOOPS_500)), tmp_path)
    assert report.ok
    assert report.account is not None
    assert "Guest" in report.account
    assert any("Guest" in note for note in report.notes)


async def test_the_guest_500_is_asked_once(tmp_path: Path) -> None:
    """Under client credentials the 500 of ``/account`` is the site's answer, not a fault: tried once (status took
    ~20 s on a real site when it was tried 15 times); the password grant still tries it again."""
    asked: dict[str, int] = {}

    def counting(transport: httpx.MockTransport) -> httpx.MockTransport:
        def handle(request: httpx.Request) -> httpx.Response:
            endpoint = request.url.path.rsplit("/", 1)[-1]
            asked[endpoint] = asked.get(endpoint, 0) + 1
            return transport.handle_request(request)

        return httpx.MockTransport(handle)

    report = await run(
        settings("client_credentials"), counting(site(account=httpx.Response(500, html=WHOOPS_500))), tmp_path
    )
    assert report.ok
    assert asked["account"] == 1
    asked.clear()
    await run(settings(), counting(site(account=httpx.Response(500, html=WHOOPS_500))), tmp_path)
    assert asked["account"] == FAST.attempts


async def test_account_500_with_password_grant_is_a_problem(tmp_path: Path) -> None:
    report = await run(settings(), site(account=httpx.Response(500, html=WHOOPS_500)), tmp_path)
    assert not report.ok
    assert "account" in report.problems[0]


async def test_scopes_unknown_for_opaque_tokens(tmp_path: Path) -> None:
    report = await run(settings(), site(scopes=None), tmp_path)
    assert report.scopes is None
    assert any("unknown" in line for line in report.lines())


async def test_unreachable(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    def refuse(request: httpx.Request) -> httpx.Response:
        raise httpx.ConnectError("connection refused")

    monkeypatch.setattr("cmssync.api.client.PROBE_WAITS", (0.0,) * len(PROBE_WAITS))  # every try, without the ~9 s
    report = await run(settings(), httpx.MockTransport(refuse), tmp_path)
    assert not report.ok
    assert "cannot reach" in report.problems[0]


async def test_missing_settings_is_a_problem_not_a_crash(tmp_path: Path) -> None:
    report = await diagnose(Settings(), base_dir=tmp_path)
    assert not report.ok
    assert "site.url" in report.problems[0]
    assert report.lines()[0] == "site:      (not set)"


@pytest.mark.parametrize("grant", ["password", "client_credentials"])
async def test_report_never_shows_secrets(tmp_path: Path, grant: str) -> None:
    report = await run(settings(grant), site(), tmp_path)
    text = "\n".join(report.lines())
    assert "pw" not in text.split()
    assert " s " not in text
