"""Kind modules a test installs: each directory here holds one module that, on the kinds package's path, is a kind
like the built-in ones (``cmssync.sync.kinds.discover`` lists it). :func:`install` puts one on the path for a test,
so a new kind is shown to be one module and nothing else."""

from __future__ import annotations

from pathlib import Path

import pytest

import cmssync.sync.kinds

HERE = Path(__file__).parent


def install(monkeypatch: pytest.MonkeyPatch, name: str) -> None:
    """Put the kind module ``name`` (``tests/support/added_kinds/<name>/<name>.py``) on the kinds package's path for
    this test: every run of the test finds it."""
    paths = list(cmssync.sync.kinds.__path__)
    monkeypatch.setattr(cmssync.sync.kinds, "__path__", [*paths, str(HERE / name)])
