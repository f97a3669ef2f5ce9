"""Fixtures of the API client tests (the clients themselves: ``tests/support/api_clients.py``)."""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Any

import pytest

from cmssync.api.client import ConcreteClient
from tests.support.api_clients import sandbox_client


@pytest.fixture
async def closing() -> AsyncIterator[list[ConcreteClient]]:
    """Append clients here to have them closed after the test."""
    clients: list[ConcreteClient] = []
    yield clients
    for client in clients:
        await client.aclose()


@pytest.fixture
async def live(sandbox_any_dialect: Any) -> AsyncIterator[ConcreteClient]:
    """A super-admin client of the sandbox, once per dialect."""
    async with sandbox_client(sandbox_any_dialect) as client:
        yield client


@pytest.fixture
async def real(sandbox: Any) -> AsyncIterator[ConcreteClient]:
    """A super-admin client of the sandbox in the concrete dialect."""
    async with sandbox_client(sandbox) as client:
        yield client
