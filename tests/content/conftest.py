from __future__ import annotations

from pathlib import Path

import pytest

EXAMPLE = Path(__file__).resolve().parents[2] / "content-example"


@pytest.fixture(autouse=True)
def _no_cmssync_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    """Settings come from the environment too; keep the developer's CMSSYNC_* variables out of these tests."""
    import os

    for name in list(os.environ):
        if name.upper().startswith("CMSSYNC_"):
            monkeypatch.delenv(name)


@pytest.fixture
def example() -> Path:
    return EXAMPLE
