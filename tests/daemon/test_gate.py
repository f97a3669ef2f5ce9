"""The daemon's request gate: runs share one connection pool, a closed gate sends nothing."""

from __future__ import annotations

import httpx
import pytest

from cmssync.daemon.gate import RequestGate, ShuttingDown
from cmssync.emulator.embedded import Sandbox


async def test_runs_share_one_pool_that_outlives_their_clients(sandbox: Sandbox) -> None:
    gate = RequestGate(shared_pool=True)
    url = sandbox.url + "/__emulator/stats"
    first, second = gate.transport(4), gate.transport(4)
    async with httpx.AsyncClient(transport=first) as client:
        assert (await client.get(url)).status_code == 200
    # The first run's client is closed; the second run's requests still go through the shared pool.
    async with httpx.AsyncClient(transport=second) as client:
        assert (await client.get(url)).status_code == 200
    assert len(gate._pools) == 1  # one pool for one concurrency, not one per run
    other = gate.transport(8)
    async with httpx.AsyncClient(transport=other) as client:
        assert (await client.get(url)).status_code == 200
    assert len(gate._pools) == 2
    await gate.aclose()
    assert gate._pools == {}
    async with httpx.AsyncClient(transport=gate.transport(4)) as client:  # a fresh pool after aclose
        assert (await client.get(url)).status_code == 200
    await gate.aclose()


async def test_without_a_shared_pool_each_client_owns_and_closes_its_own(sandbox: Sandbox) -> None:
    gate = RequestGate()
    async with httpx.AsyncClient(transport=gate.transport(4)) as client:
        assert (await client.get(sandbox.url + "/__emulator/stats")).status_code == 200
    assert gate._pools == {}


async def test_a_closed_gate_sends_nothing(sandbox: Sandbox) -> None:
    gate = RequestGate()
    gate.close()
    async with httpx.AsyncClient(transport=gate.transport(4)) as client:
        with pytest.raises(ShuttingDown, match="not sent, the daemon is shutting down"):
            await client.get(sandbox.url + "/__emulator/stats")
    await gate.aclose()
