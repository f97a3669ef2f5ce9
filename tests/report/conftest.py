"""Fixtures of the report tests: a headless Chromium (skipped where it is absent) and the example site."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from cmssync.emulator.embedded import Sandbox
from tests.report.browser import Browser, find_chromium
from tests.support.sites import PASSWORDS, copy_example


@pytest.fixture(scope="module")
def browser() -> Iterator[Browser]:
    executable = find_chromium()
    if executable is None:
        pytest.skip(
            "no Chromium: the browser tests need Debian's `chromium` package (apt-get install chromium) "
            "or CMSSYNC_TEST_CHROMIUM=/path/to/chromium"
        )
    pytest.importorskip("websockets", reason="the browser tests drive Chromium over CDP with `websockets` (dev extra)")
    with Browser(executable) as opened:
        yield opened


@pytest.fixture
def example_root(tmp_path: Path, sandbox: Sandbox, monkeypatch: pytest.MonkeyPatch) -> Path:
    for name, value in PASSWORDS.items():
        monkeypatch.setenv(name, value)
    return copy_example(tmp_path / "site")
