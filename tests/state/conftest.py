"""Fixtures of the state backend tests: a Terraform-style HTTP state server on loopback (``state_server.py``)."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from tests.state.state_server import StateServer


@pytest.fixture
def server() -> Iterator[StateServer]:
    with StateServer() as running:
        yield running
