"""Secrets are masked by value, not only by pattern (issue 15, item 5).

A server may echo a credential bare — league/oauth2-server's ``hint`` and ``error_description``, a validation
message that quotes the password it refused — where no ``password=…`` pattern can see it. Each case here makes the
site (through the corrupting proxy) or the process itself put a configured secret into text, and checks every place
that text leaves the process: the command's output, the JSON log lines, the daemon's ``/healthz``.
"""

from __future__ import annotations

import asyncio
import io
import json
import logging
from pathlib import Path

import httpx
import pytest
import structlog
from starlette.applications import Starlette

from cmssync.daemon.health import Readiness, build_app
from cmssync.daemon.metrics import DaemonMetrics
from cmssync.daemon.modes import ModeControl, control_routes
from cmssync.emulator.embedded import Sandbox
from cmssync.errors import ApiError
from cmssync.logs import configure_logging
from cmssync.secrets import register_secret
from tests.reliability.cli import run_cli
from tests.reliability.proxy import CorruptingProxy, Corruption, through
from tests.reliability.sites import ReliabilitySite, cli_environment
from tests.support.reliability_report import ReliabilityReport
from tests.support.sites import copy_example

CLIENT_SECRET = "cs-Echo-Kq7Lm2vSECRET"
PASSWORD = "pw-Echo-Rt5Nx8zSECRET"
USER_PASSWORD = "pw-User-Gh3Wq9sSECRET"


@pytest.fixture
def site(tmp_path: Path, sandbox: Sandbox, monkeypatch: pytest.MonkeyPatch) -> ReliabilitySite:
    """content-example; the CLI reads distinctive credentials from the environment (the proxy answers for the
    token endpoint where they would be wrong)."""
    root = tmp_path / "site"
    copy_example(root)
    monkeypatch.setenv("JANE_EDITOR_PASSWORD", USER_PASSWORD)
    site = ReliabilitySite(root, sandbox)
    return cli_environment(site, monkeypatch, client_secret=CLIENT_SECRET, password=PASSWORD)


def oauth_echo(code: str) -> Corruption:
    """A token endpoint that quotes the credentials it was sent, bare, as a careless server might."""
    body = {
        "error": code,
        "error_description": f"The request was refused for client secret {CLIENT_SECRET}.",
        "hint": f"Check the password {PASSWORD} (sent with secret {CLIENT_SECRET})",
        "message": "The request was refused.",
    }
    return Corruption(
        f"token {code} echoing credentials", "POST", "/oauth/2.0/token$", status=400, body=json.dumps(body).encode()
    )


@pytest.mark.parametrize("code", ["invalid_request", "access_denied", "server_error"])
def test_credentials_echoed_by_the_token_endpoint_are_masked(
    code: str, site: ReliabilitySite, capsys: pytest.CaptureFixture[str], reliability_report: ReliabilityReport
) -> None:
    proxy = CorruptingProxy(oauth_echo(code))
    with through(proxy):
        result = run_cli(capsys, "--log-format", "json", "plan", str(site.root))
    leaks = [secret for secret in (CLIENT_SECRET, PASSWORD) if secret in result.text]
    reliability_report.add(cases_tried=1, faults_injected=proxy.corrupted, secrets_leaked=len(leaks))
    assert proxy.corrupted > 0
    assert result.code == 1, result.text
    assert "error:" in result.err, result.text
    assert "(sensitive)" in result.err, result.text
    assert leaks == [], result.text


def test_a_user_password_quoted_by_the_server_is_masked(
    site: ReliabilitySite,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
    reliability_report: ReliabilityReport,
) -> None:
    """The user create fails with a message that quotes the password cmssync sent (from JANE_EDITOR_PASSWORD)."""
    monkeypatch.setenv("CMSSYNC_CLIENT_SECRET", site.sandbox.client_secret)
    monkeypatch.setenv("CMSSYNC_PASSWORD", site.sandbox.admin_password)
    body = {"error": True, "errors": [f"The password {USER_PASSWORD} does not meet the password policy."]}
    proxy = CorruptingProxy(
        Corruption("user create quoting the password", "POST", "/users$", status=400, body=json.dumps(body).encode())
    )
    with through(proxy):
        result = run_cli(capsys, "--log-format", "json", "--debug", "apply", "--yes", str(site.root))
    leaks = [USER_PASSWORD] if USER_PASSWORD in result.text else []
    reliability_report.add(cases_tried=1, faults_injected=proxy.corrupted, secrets_leaked=len(leaks))
    assert proxy.corrupted > 0
    assert result.code == 1, result.text
    assert "does not meet the password policy" in result.text
    assert leaks == [], result.text


def test_readyz_masks_a_secret_in_a_failure_reason(reliability_report: ReliabilityReport) -> None:
    """Whatever put it into the reason (an error from another library, a run summary), /healthz serves it masked."""
    secret = "tok-Ready-Vb6Cx1pSECRET"
    register_secret(secret)
    readiness = Readiness()
    readiness.failing(
        f"OSError: cannot connect with token {secret}",
        [f"failed page /about (update): quoted {secret}"],
        {"trigger": "schedule", "error": f"{secret}\u2028"},
    )
    answer = asyncio.run(_get(build_app(readiness, DaemonMetrics()), "/healthz"))
    leaks = int(secret in answer.text)
    reliability_report.add(cases_tried=1, secrets_leaked=leaks)
    assert answer.status_code == 503
    assert answer.json()["status"] == "failing"
    assert "(sensitive)" in answer.json()["reason"]
    assert leaks == 0, answer.text


def test_status_masks_a_secret_in_the_run_going_on(reliability_report: ReliabilityReport) -> None:
    secret = "tok-Status-Qe8Ls3vSECRET"
    register_secret(secret)
    metrics = DaemonMetrics()
    routes = control_routes(ModeControl("apply", metrics), lambda: {"running": {"reason": f"echoed {secret}"}})
    app = Starlette(routes=routes)
    answer = asyncio.run(_get(app, "/status"))
    leaks = int(secret in answer.text)
    reliability_report.add(cases_tried=1, secrets_leaked=leaks)
    assert answer.status_code == 200
    assert answer.json() == {"running": {"reason": "echoed (sensitive)"}}


def test_a_log_line_masks_a_bare_secret(reliability_report: ReliabilityReport) -> None:
    """No key names it and no ``secret=`` pattern surrounds it: only its value can mask it."""
    secret = "tok-Log-Pz4Hn7wSECRET"
    register_secret(secret)
    stream = io.StringIO()
    configure_logging(level=logging.DEBUG, json_lines=True, stream=stream)
    structlog.get_logger("cmssync.test").warning("server said %s", secret, detail=[f"echo {secret}"])
    logging.getLogger("httpx").warning("foreign library line with %s", secret)
    try:
        raise ValueError(f"raised with {secret}")
    except ValueError:
        structlog.get_logger("cmssync.test").exception("failed")
    text = stream.getvalue()
    leaks = text.count(secret)
    reliability_report.add(cases_tried=1, secrets_leaked=leaks)
    assert text.count("(sensitive)") >= 4, text
    assert leaks == 0, text


def test_a_secret_in_an_error_is_masked_when_the_error_is_made() -> None:
    secret = "tok-Error-Jm2Rd8kSECRET"
    register_secret(secret)
    error = ApiError(f"refused {secret}", method="POST", path="/oauth/2.0/token", status=400)
    assert secret not in str(error)
    assert secret not in error.reason
    assert "refused (sensitive)" in str(error)


async def _get(app: object, path: str) -> httpx.Response:
    transport = httpx.ASGITransport(app=app)  # type: ignore[arg-type]
    async with httpx.AsyncClient(transport=transport, base_url="http://health") as client:
        return await client.get(path)
