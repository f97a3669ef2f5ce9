"""Fixtures of the reliability suite (issue 9): sites on the session sandbox, raw reads, and the totals report.

Repeatable faults: the sandbox's dice are seeded, but which request meets which throw depends on the order the
requests arrive in. With ``concurrency: 1`` and the client's retry waits shrunk to zero (``_no_retry_waits``, which
changes how long cmssync waits, never whether it retries) that order is fixed, so a seed gives the same run every
time. Tests that use the default concurrency assert only what must hold for every order.

Totals: every test adds to one :class:`ReliabilityReport` (cases tried, faults injected, kills, duplicates found,
secrets leaked); with ``CMSSYNC_RELIABILITY_REPORT=PATH`` set, the session writes it there as JSON
(``bench/reliability_totals.py`` prints it).
"""

from __future__ import annotations

import functools
import json
import logging
import os
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
import structlog

import cmssync.api.transport
from cmssync.api.retry import RetryPolicy
from cmssync.emulator.embedded import Sandbox
from tests.reliability.sites import USER_PASSWORD, USER_PASSWORD_ENV, ReliabilitySite
from tests.support.rawsite import RawSite
from tests.support.reliability_report import REPORT_ENV, ReliabilityReport
from tests.support.sites import PASSWORDS, copy_example


@pytest.fixture(scope="session")
def reliability_report() -> Iterator[ReliabilityReport]:
    report = ReliabilityReport()
    yield report
    target = os.environ.get(REPORT_ENV)
    if target:
        Path(target).parent.mkdir(parents=True, exist_ok=True)
        Path(target).write_text(json.dumps(report.as_dict(), indent=2) + "\n", encoding="utf-8")


@pytest.fixture(autouse=True)
def _no_retry_waits(monkeypatch: pytest.MonkeyPatch) -> None:
    fast = functools.partial(
        RetryPolicy,
        wait_initial=0.0,
        wait_max=0.0,
        wait_jitter=0.0,
        retry_after_max=0.0,
        late_commit_polls=(0.0, 0.0, 0.0, 0.0),
    )
    monkeypatch.setattr(cmssync.api.transport, "RetryPolicy", fast)


@pytest.fixture(autouse=True)
def _environment(monkeypatch: pytest.MonkeyPatch) -> None:
    """The example's user passwords; no developer CMSSYNC_* variable may leak into these runs."""
    for name in list(os.environ):
        if name.upper().startswith("CMSSYNC_") and name != REPORT_ENV:
            monkeypatch.delenv(name)
    for name, value in {**PASSWORDS, USER_PASSWORD_ENV: USER_PASSWORD}.items():
        monkeypatch.setenv(name, value)


@pytest.fixture(autouse=True)
def _restore_logging() -> Iterator[None]:
    """``cmssync.cli.main`` configures logging for the process (a handler on the captured stderr): undo it."""
    loggers = [logging.getLogger(name) for name in ("", "httpx", "httpcore")]
    saved = [(logger, list(logger.handlers), logger.level) for logger in loggers]
    structlog_config = structlog.get_config()
    yield
    for logger, handlers, level in saved:
        for handler in list(logger.handlers):
            if handler not in handlers:
                logger.removeHandler(handler)
        logger.setLevel(level)
    structlog.configure(**structlog_config)


@pytest.fixture
def example_site(tmp_path: Path, sandbox: Sandbox) -> ReliabilitySite:
    """A copy of ``content-example/`` on the sandbox (default seed, concrete dialect), one request at a time."""
    root = tmp_path / "site"
    copy_example(root)
    return ReliabilitySite(root, sandbox, settings={"concurrency": 1})


@pytest.fixture
def raw_factory(sandbox_server: Sandbox) -> Iterator[Callable[[], RawSite]]:
    """Plain HTTP views of the sandbox; make one after the sandbox was reset (a reset revokes every token)."""
    made: list[RawSite] = []

    def make() -> RawSite:
        made.append(RawSite(sandbox_server))
        return made[-1]

    yield make
    for site in made:
        site.close()
