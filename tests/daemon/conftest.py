"""Fixtures of the daemon tests: a copy of content-example the daemon runs on, and an editor changing the site
(the daemon process and its helpers: ``tests/support/daemon.py``)."""

from __future__ import annotations

import contextlib
import shutil
from collections.abc import Iterator
from pathlib import Path

import pytest

from cmssync.emulator.embedded import Sandbox
from tests.support.daemon import EXAMPLE, PASSWORDS, DaemonSite, DriftMaker


@pytest.fixture
def daemon_site(tmp_path: Path, sandbox: Sandbox, monkeypatch: pytest.MonkeyPatch) -> Iterator[DaemonSite]:
    for name, value in PASSWORDS.items():
        monkeypatch.setenv(name, value)
    root = tmp_path / "site"
    shutil.copytree(EXAMPLE, root, ignore=shutil.ignore_patterns(".cmssync", "content-example"))
    site = DaemonSite(root, sandbox)
    try:
        yield site
    finally:
        for process in site.processes:
            process.kill()
        sandbox.clear_faults()


@pytest.fixture
def drift(sandbox: Sandbox) -> Iterator[DriftMaker]:
    with contextlib.closing(DriftMaker(sandbox)) as maker:
        yield maker
