"""End-to-end fixtures: a copy of the example content pointed at the session sandbox, an editor changing the site
behind cmssync's back, and a raw HTTP view of it.

The classes live in ``tests.support``; this conftest only makes fixtures of them (``raw`` itself is defined once,
in ``tests.support.sandbox``).
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from pathlib import Path

import pytest

from cmssync.emulator.embedded import Sandbox
from tests.support.editors import Editor
from tests.support.rawsite import RawSite
from tests.support.sites import EXAMPLE, PASSWORDS, Site, copy_example

__all__ = ["EXAMPLE", "PASSWORDS", "RawSite", "Site"]


@pytest.fixture
def example(tmp_path: Path, sandbox: Sandbox, monkeypatch: pytest.MonkeyPatch) -> Site:
    root = copy_example(tmp_path / "site", monkeypatch)
    return Site(root, sandbox)


@pytest.fixture
def example_any_dialect(tmp_path: Path, sandbox_any_dialect: Sandbox, monkeypatch: pytest.MonkeyPatch) -> Site:
    root = copy_example(tmp_path / "site", monkeypatch)
    return Site(root, sandbox_any_dialect)


@pytest.fixture
def editor(sandbox: Sandbox) -> Iterator[Editor]:
    """Someone changing pages on the sandbox's live site through the REST API, as the dashboard would."""
    with contextlib.closing(Editor(sandbox)) as person:
        yield person
