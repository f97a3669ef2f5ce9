"""Fixtures of the emulator tests (the sandbox fixtures come from the ``tests.support.sandbox`` plugin)."""

from __future__ import annotations

from collections.abc import Iterator

import httpx
import pytest

from cmssync.emulator.embedded import Sandbox
from tests.emulator.helpers import Clock, client, token


@pytest.fixture
def api(sandbox: Sandbox) -> Iterator[httpx.Client]:
    """A client of the sandbox's API prefix, authenticated as the super admin with every scope."""
    with client(sandbox, token(sandbox)) as http:
        yield http


@pytest.fixture
def guest_api(sandbox: Sandbox) -> Iterator[httpx.Client]:
    """A client-credentials client: requests run as the anonymous Guest."""
    with client(sandbox, token(sandbox, grant="client_credentials")) as http:
        yield http


@pytest.fixture
def any_api(sandbox_any_dialect: Sandbox) -> Iterator[httpx.Client]:
    """Like ``api`` but once per dialect."""
    with client(sandbox_any_dialect, token(sandbox_any_dialect)) as http:
        yield http


@pytest.fixture
def clock(monkeypatch: pytest.MonkeyPatch) -> Clock:
    """The sandbox's clock moved on a second at a time by the test."""
    clock = Clock()
    monkeypatch.setattr("cmssync.emulator.routing.now", clock.now)
    return clock


def pytest_terminal_summary(terminalreporter: pytest.TerminalReporter) -> None:
    """Show the replay summary (share of recorded exchanges that match) whenever the replay ran."""
    from tests.emulator.replay_run import SUMMARIES

    for name, lines in SUMMARIES.items():
        terminalreporter.write_sep("-", f"replay of the recorded Concrete 9.3.1 exchanges: {name}")
        for line in lines:
            terminalreporter.write_line(line)
