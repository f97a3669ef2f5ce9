"""Secrets never leak (design.md §7, issue 9): with a distinctive client secret, API password, user passwords and
tokens, every command's output (text, JSON, markdown, plan file), every log line (JSON and console, ``--debug``),
the state and its companions, and the reports hold none of them. The one place a token may be is the token store:
the rotated refresh token, in a file of mode 0600.

Access and refresh tokens are learned by watching the token source (a spy around ``OAuthTokens._request`` that
records what the site answered), so the test knows every token that existed during the run.
"""

from __future__ import annotations

import logging
import stat
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from cmssync.api.auth import DEFAULT_SCOPES, OAuthTokens
from cmssync.emulator.embedded import Sandbox
from tests.reliability.cli import CliResult, run_cli
from tests.support.reliability_report import ReliabilityReport
from tests.support.sites import copy_example

CLIENT_SECRET = "cs-Zq8vW3nTq1LkSECRET"
ADMIN_PASSWORD = "pw-Admin-Hx42uQpSECRET"
WRONG_PASSWORD = "pw-Wrong-Ry7tLmSECRET"
USER_PASSWORDS = {"JANE_EDITOR_PASSWORD": "pw-Jane-Kc9dNvSECRET", "SAM_WRITER_PASSWORD": "pw-Sam-Bq3sHwSECRET"}
NEW_JANE_PASSWORD = "pw-Jane2-Wm5eTzSECRET"


@pytest.fixture(scope="module")
def secret_sandbox() -> Iterator[Sandbox]:
    with Sandbox(client_secret=CLIENT_SECRET, admin_password=ADMIN_PASSWORD) as server:
        yield server


class TokenSpy:
    """Every access and refresh token the site handed out to cmssync."""

    def __init__(self) -> None:
        self.tokens: set[str] = set()

    def install(self, monkeypatch: pytest.MonkeyPatch) -> None:
        original = OAuthTokens._request
        spy = self

        async def request(self: OAuthTokens, post: Any, form: dict[str, str], *, persist_refresh: bool) -> str:
            token = await original(self, post, form, persist_refresh=persist_refresh)
            spy.tokens.add(token)
            if self._refresh_token:
                spy.tokens.add(self._refresh_token)
            return token

        monkeypatch.setattr(OAuthTokens, "_request", request)


class Outputs:
    """Everything cmssync wrote that a person or a log collector could read."""

    def __init__(self) -> None:
        self.texts: list[tuple[str, str]] = []

    def add(self, what: str, result: CliResult) -> None:
        self.texts += [(f"{what} stdout", result.out), (f"{what} stderr", result.err)]

    def add_files(self, directory: Path, *, skip: set[Path]) -> None:
        for path in sorted(directory.rglob("*")):
            if path.is_file() and path not in skip:
                self.texts.append((str(path), path.read_text(encoding="utf-8", errors="replace")))

    def add_records(self, caplog: pytest.LogCaptureFixture) -> None:
        """The log records as any handler would render them (cmssync's own handler redacts in its formatter)."""
        self.texts.append(("log records", "\n".join(f"{r.getMessage()} {r.__dict__}" for r in caplog.records)))

    def leaks(self, secrets: set[str]) -> list[str]:
        return [f"{secret!r} in {where}" for where, text in self.texts for secret in secrets if secret in text]


@pytest.fixture
def workdir(tmp_path: Path, secret_sandbox: Sandbox, monkeypatch: pytest.MonkeyPatch) -> tuple[Path, Path, TokenSpy]:
    secret_sandbox.reset(seed="default", dialect="concrete")
    root = tmp_path / "site"
    copy_example(root)
    state_dir = tmp_path / "state"
    for name, value in {
        "CMSSYNC_URL": secret_sandbox.url,
        "CMSSYNC_CLIENT_SECRET": CLIENT_SECRET,
        "CMSSYNC_PASSWORD": ADMIN_PASSWORD,
        "CMSSYNC_STATE": str(state_dir / "state.json"),
        **USER_PASSWORDS,
    }.items():
        monkeypatch.setenv(name, value)
    spy = TokenSpy()
    spy.install(monkeypatch)
    return root, state_dir, spy


def run_everything(root: Path, plan_file: Path, capsys: pytest.CaptureFixture[str], outputs: Outputs) -> None:
    """validate, plan in every format and to a file, apply that plan, then apply a password change."""
    for log_format in ("json", "console"):
        debug = ("--debug", "--log-format", log_format)
        for args in (
            ("validate", str(root)),
            ("plan", str(root)),
            ("plan", "--format", "json", str(root)),
            ("plan", "--format", "markdown", str(root)),
            ("plan", "--detailed-exitcode", str(root)),
        ):
            result = run_cli(capsys, *debug, *args)
            assert result.code in (0, 2), result.text
            outputs.add(" ".join((*debug, *args)), result)
    result = run_cli(capsys, "--debug", "--log-format", "json", "plan", "-o", str(plan_file), str(root))
    outputs.add("plan -o", result)
    result = run_cli(capsys, "--debug", "--log-format", "json", "apply", "--yes", str(root), str(plan_file))
    assert result.code == 0, result.text
    outputs.add("apply PLANFILE", result)


def status(capsys: pytest.CaptureFixture[str], root: Path, outputs: Outputs) -> None:
    for log_format in ("json", "console"):
        result = run_cli(capsys, "--debug", "--log-format", log_format, "status", str(root))
        assert "Traceback" not in result.text
        assert "auth:" in result.out, result.text
        outputs.add(f"status ({log_format} logs)", result)


def test_no_secret_in_any_output_with_the_password_grant(
    workdir: tuple[Path, Path, TokenSpy],
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
    caplog: pytest.LogCaptureFixture,
    reliability_report: ReliabilityReport,
) -> None:
    caplog.set_level(logging.DEBUG)
    root, state_dir, spy = workdir
    outputs = Outputs()
    plan_file = tmp_path / "plans" / "site.plan.json"
    run_everything(root, plan_file, capsys, outputs)
    monkeypatch.setenv("JANE_EDITOR_PASSWORD", NEW_JANE_PASSWORD)
    result = run_cli(capsys, "--debug", "--log-format", "json", "apply", "--yes", str(root))
    assert result.code == 0, result.text
    assert "password: (sensitive)" in result.out
    outputs.add("apply with a new password", result)
    status(capsys, root, outputs)
    monkeypatch.setenv("CMSSYNC_PASSWORD", WRONG_PASSWORD)
    result = run_cli(capsys, "--log-format", "json", "plan", str(root))
    assert result.code == 1
    outputs.add("plan with a wrong password", result)
    outputs.add_files(state_dir, skip=set())
    outputs.add_files(plan_file.parent, skip=set())
    if (root / ".cmssync").exists():
        outputs.add_files(root / ".cmssync", skip=set())

    outputs.add_records(caplog)

    secrets = {CLIENT_SECRET, ADMIN_PASSWORD, WRONG_PASSWORD, NEW_JANE_PASSWORD, *USER_PASSWORDS.values(), *spy.tokens}
    assert any('"api.request"' in text for _, text in outputs.texts), "no debug log line was captured"
    leaks = outputs.leaks(secrets)
    reliability_report.add(cases_tried=len(outputs.texts), secrets_leaked=len(leaks))
    assert spy.tokens, "the spy saw no token"
    assert leaks == []


def test_the_token_store_is_the_only_place_a_token_is_kept(
    workdir: tuple[Path, Path, TokenSpy],
    secret_sandbox: Sandbox,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
    caplog: pytest.LogCaptureFixture,
    reliability_report: ReliabilityReport,
) -> None:
    caplog.set_level(logging.DEBUG)
    root, state_dir, spy = workdir
    answer = httpx.post(
        secret_sandbox.token_url,
        data={
            "grant_type": "password",
            "client_id": secret_sandbox.client_id,
            "client_secret": CLIENT_SECRET,
            "username": secret_sandbox.admin_username,
            "password": ADMIN_PASSWORD,
            "scope": " ".join(DEFAULT_SCOPES),
        },
    ).json()
    first_refresh = answer["refresh_token"]
    token_store = state_dir / "tokens.json"
    monkeypatch.delenv("CMSSYNC_PASSWORD")
    monkeypatch.setenv("CMSSYNC_GRANT", "refresh_token")
    monkeypatch.setenv("CMSSYNC_REFRESH_TOKEN", first_refresh)
    settings = (root / "cmssync.yaml").read_text(encoding="utf-8")
    (root / "cmssync.yaml").write_text(
        settings.replace("  username: admin\n", f"  username: admin\n  token_store: {token_store}\n")
    )
    outputs = Outputs()
    plan_file = tmp_path / "plans" / "site.plan.json"
    run_everything(root, plan_file, capsys, outputs)
    status(capsys, root, outputs)
    outputs.add_files(state_dir, skip={token_store})
    outputs.add_files(plan_file.parent, skip=set())
    outputs.add_records(caplog)

    assert token_store.is_file()
    assert stat.S_IMODE(token_store.stat().st_mode) == 0o600
    stored = token_store.read_text(encoding="utf-8")
    rotated = spy.tokens - {answer["access_token"]}
    assert any(token in stored for token in rotated), "the rotated refresh token is kept in the token store"
    secrets = {CLIENT_SECRET, ADMIN_PASSWORD, *USER_PASSWORDS.values(), first_refresh, *spy.tokens}
    leaks = outputs.leaks(secrets)
    leaks += [f"{s!r} in the token store" for s in (CLIENT_SECRET, ADMIN_PASSWORD, first_refresh) if s in stored]
    reliability_report.add(cases_tried=len(outputs.texts), secrets_leaked=len(leaks))
    assert leaks == []
