"""A secret is masked in every form it travels in (issue 29 item 5): the HTTP state password as the base64 of the
basic-auth pair, and as a URL's userinfo, quoted back by a state server (or a proxy) in an error page, never reaches
a CLI line in either log format, nor the text of an error the daemon's webhooks carry.
"""

from __future__ import annotations

import base64
import json
from pathlib import Path
from typing import Any

import pytest

from cmssync.emulator.embedded import Sandbox
from cmssync.errors import StateError
from cmssync.secrets import register_credentials
from tests.reliability.cli import run_cli
from tests.reliability.sites import state_server_site
from tests.state.state_server import Scripted, StateServer
from tests.support.reliability_report import ReliabilityReport

USERNAME = "gitlab-ci-token"
PASSWORD = "glpat-Forms-Vb7Tq2SECRET"


def quoting(authorization: str) -> Scripted:
    """A proxy's error page that quotes the request headers it saw."""
    return Scripted("GET", 502, f"Bad gateway. Request headers: Authorization: {authorization}; Accept: */*".encode())


def forms() -> set[str]:
    pair = f"{USERNAME}:{PASSWORD}"
    return {PASSWORD, pair, base64.b64encode(pair.encode()).decode()}


@pytest.mark.parametrize("where", ["basic-auth", "userinfo"])
@pytest.mark.parametrize("log_format", ["json", "console"])
def test_the_state_password_quoted_as_basic_auth_is_masked_in_cli_lines(
    where: str,
    log_format: str,
    tmp_path: Path,
    sandbox: Sandbox,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
    reliability_report: ReliabilityReport,
) -> None:
    header = "Basic " + base64.b64encode(f"{USERNAME}:{PASSWORD}".encode()).decode()
    monkeypatch.setenv("STATE_PASSWORD", PASSWORD)
    with StateServer() as server:
        server.script += [quoting(header)] * 3
        state: dict[str, Any] = server.settings()
        if where == "basic-auth":
            state |= {"username": USERNAME, "password": "${env:STATE_PASSWORD}"}
        else:
            state |= {"address": state["address"].replace("http://", f"http://{USERNAME}:${{env:STATE_PASSWORD}}@")}
        root = state_server_site(tmp_path / "site", sandbox, state, monkeypatch)

        result = run_cli(capsys, "--log-format", log_format, "plan", str(root))

    assert any(seen.authorization == header for seen in server.seen), "the test's server saw no basic auth"
    leaks = [form for form in forms() if form in result.text]
    reliability_report.add(cases_tried=1, secrets_leaked=len(leaks))
    assert result.code == 1, result.text
    assert "502" in result.text
    assert leaks == [], result.text


def test_an_error_quoting_the_basic_auth_header_is_masked_when_made() -> None:
    """Errors are masked when made, so the text a webhook, ``/readyz`` or a report carries holds no form either."""
    register_credentials(USERNAME, PASSWORD)
    pair = base64.b64encode(f"{USERNAME}:{PASSWORD}".encode()).decode()
    error = StateError(f"GET http://state/x: the state server answered 502 (Authorization: Basic {pair}; {PASSWORD})")
    assert [form for form in forms() if form in str(error)] == []


def test_a_password_in_the_site_url_never_reaches_the_state_document(tmp_path: Path) -> None:
    from cmssync.state.records import State
    from cmssync.state.store import StateStore

    state = State()
    state.bind_site(f"https://{USERNAME}:{PASSWORD}@CMS.example.org:8443/base/?token=x", "/ccm/api/1.0")
    store = StateStore(tmp_path / "state.json")
    store.save(state)
    store.compact(state)
    document = (tmp_path / "state.json").read_text(encoding="utf-8")
    assert json.loads(document)["site"]["url"] == "https://cms.example.org:8443/base"
    assert [form for form in forms() if form in document] == []
