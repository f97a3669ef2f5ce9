"""The answers read at once share one memory budget: the cap of one answer times the number of concurrent requests
would bound nothing (a hostile server answering every request of a plan with a huge body)."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator

import httpx
import pytest

from cmssync.api import errors as e
from cmssync.api.client import ConcreteClient
from cmssync.api.transport import MAX_BODY_BYTES, MAX_BUFFERED_BYTES
from tests.support.api_clients import FAST, FakeTokenEndpoint, oauth

CHUNK = 1 << 20


class SlowBody(httpx.AsyncByteStream):
    """``size`` bytes in 1 MiB chunks, yielding to the loop between chunks so concurrent answers interleave."""

    def __init__(self, size: int) -> None:
        self.size = size

    async def __aiter__(self) -> AsyncIterator[bytes]:
        sent = 0
        while sent < self.size:
            await asyncio.sleep(0)
            chunk = min(CHUNK, self.size - sent)
            sent += chunk
            yield b" " * chunk


def client_answering(size: int, concurrency: int) -> ConcreteClient:
    async def api(request: httpx.Request) -> httpx.Response:
        if request.url.path.startswith("/oauth"):
            return FakeTokenEndpoint()(request)
        return httpx.Response(200, headers={"content-type": "application/json"}, stream=SlowBody(size))

    return ConcreteClient(
        "http://cms.test", auth=oauth(), retry=FAST, concurrency=concurrency, transport=httpx.MockTransport(api)
    )


async def test_answers_read_together_are_refused_beyond_the_shared_budget() -> None:
    size = MAX_BODY_BYTES * 3 // 4  # each under the cap of one answer
    assert size * 4 > MAX_BUFFERED_BYTES
    async with client_answering(size, concurrency=4) as client:
        results = await asyncio.gather(*(client.get_group(n) for n in range(4)), return_exceptions=True)
    refused = [r for r in results if isinstance(r, e.ResponseTooLarge)]
    assert refused, results
    assert "with the other answers being read" in str(refused[0])
    assert client.transport.exchange.buffered == 0  # every read gave its bytes back


@pytest.mark.parametrize("count", [1, 2])
async def test_answers_within_the_budget_are_read(count: int) -> None:
    """Below the budget nothing is refused for being read at the same time as others (the JSON is invalid:
    the read itself succeeds and the model rejects the body)."""
    async with client_answering(MAX_BODY_BYTES // 4, concurrency=count) as client:
        results = await asyncio.gather(*(client.get_group(n) for n in range(count)), return_exceptions=True)
    assert not any(isinstance(r, e.ResponseTooLarge) for r in results), results
