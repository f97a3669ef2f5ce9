"""The concurrency limiters: a fixed bound, and the adaptive (Vegas-style) limit finding a site's knee.

The adaptive limit is driven here with a simulated site (round trips computed from the requests in flight, no
clock), so its decisions are checked exactly; ``tests/emulator/test_capacity.py`` and
``bench/concurrency_bench.py`` run it against the sandbox's worker pool.
"""

from __future__ import annotations

import asyncio
import contextlib
import statistics

import httpx
import pytest

from cmssync.api.limiter import MAX_LIMIT, AdaptiveLimit, FixedLimit, Slot, deferred, make_limiter
from tests.support.api_clients import data, mock_client


def php_pool(workers: int, service: float, network: float = 0.0):  # type: ignore[no-untyped-def]
    """Round trip with ``in_flight`` requests at a pool of ``workers`` (closed loop, steady state: throughput is
    ``min(in_flight / (network + service), workers / service)`` and the round trip ``in_flight / throughput``)."""

    def rtt(in_flight: int) -> float:
        return max(network + service, in_flight * service / workers)

    return rtt


def drive(limiter: AdaptiveLimit, rtt, samples: int) -> list[int]:  # type: ignore[no-untyped-def]
    """Complete ``samples`` requests, each started with the limiter full; the limits seen along the way."""
    seen = []
    for _ in range(samples):
        limiter.record(Slot(in_flight=limiter.limit), rtt(limiter.limit))
        seen.append(limiter.limit)
    return seen


def test_an_unqueued_site_lets_the_limit_double_up_to_its_ceiling() -> None:
    limiter = AdaptiveLimit(initial=4)
    seen = drive(limiter, lambda in_flight: 0.05, 400)
    assert seen[3] == 8
    assert seen[11] == 16
    assert limiter.limit == MAX_LIMIT


@pytest.mark.parametrize(("workers", "network"), [(4, 0.0), (4, 0.02), (16, 0.02)])
def test_the_limit_settles_at_the_knee(workers: int, network: float) -> None:
    rtt = php_pool(workers, 0.05, network)
    limiter = AdaptiveLimit()
    tail = drive(limiter, rtt, 5000)[-2000:]  # after settling; includes probe windows (the limit halved)
    # Each request at limit L occupies rtt(L) / L of the run: throughput = requests / time.
    throughput = len(tail) / sum(rtt(limit) / limit for limit in tail)
    assert throughput >= 0.9 * workers / 0.05  # >= 90% of the pool's saturation throughput
    assert statistics.median(rtt(limit) for limit in tail) <= 2 * rtt(1)  # latency within 2x the unloaded one
    assert max(tail) <= workers * (network + 0.05) / 0.05 + 6  # never far beyond the knee


def test_a_refusal_halves_the_limit_once_per_window() -> None:
    limiter = AdaptiveLimit(initial=16)
    limiter.record(Slot(in_flight=16, dropped=True), 0.01)
    limiter.record(Slot(in_flight=16, dropped=True), 0.01)
    assert limiter.limit == 8
    assert limiter.drops == 2
    drive(limiter, lambda in_flight: 0.05, 8)  # a window passes without queue: additive growth (no slow start)
    assert limiter.limit == 9


def test_an_idle_caller_does_not_grow_the_limit() -> None:
    limiter = AdaptiveLimit(initial=8)
    for _ in range(100):
        limiter.record(Slot(in_flight=1), 0.05)  # one request at a time: says nothing about the site
    assert limiter.limit == 8


def test_ignored_requests_are_not_samples() -> None:
    limiter = AdaptiveLimit(initial=4)
    for _ in range(100):
        limiter.record(Slot(in_flight=4, ignored=True), 5.0)
    assert limiter.limit == 4
    assert limiter.describe()["rtt_min_ms"] is None


async def test_a_fixed_limit_bounds_the_requests_in_flight_in_arrival_order() -> None:
    limiter = FixedLimit(2)
    peak = 0
    order: list[int] = []

    async def request(n: int) -> None:
        nonlocal peak
        async with limiter.slot() as slot:
            peak = max(peak, slot.in_flight)
            order.append(n)
            await asyncio.sleep(0.01)

    await asyncio.gather(*(request(n) for n in range(8)))
    assert peak == 2
    assert order == list(range(8))


@pytest.mark.parametrize("deferred_waiter", [False, True])
async def test_a_cancelled_waiter_gives_its_place_away(deferred_waiter: bool) -> None:
    limiter = FixedLimit(1)
    release = asyncio.Event()

    async def holder() -> None:
        async with limiter.slot():
            await release.wait()

    async def waiter() -> None:
        with deferred() if deferred_waiter else contextlib.nullcontext():
            await holder()

    first = asyncio.create_task(holder())
    await asyncio.sleep(0)
    waiting = asyncio.create_task(waiter())
    await asyncio.sleep(0)
    waiting.cancel()
    release.set()
    await first
    with pytest.raises(asyncio.CancelledError):
        await waiting
    async with asyncio.timeout(1):
        async with limiter.slot() as slot:
            assert slot.in_flight == 1


@pytest.mark.parametrize("make", [lambda: FixedLimit(2), lambda: AdaptiveLimit(initial=2, maximum=2)])
async def test_deferred_requests_wait_behind_every_other_caller(make) -> None:  # type: ignore[no-untyped-def]
    limiter = make()
    order: list[str] = []
    release = asyncio.Event()

    async def request(name: str) -> None:
        async with limiter.slot():
            order.append(name)
            await release.wait()

    async def sweep() -> None:
        with deferred():
            await asyncio.gather(*(request(f"sweep-{n}") for n in range(4)))

    holders = [asyncio.create_task(request(f"first-{n}")) for n in range(2)]
    await asyncio.sleep(0)
    swept = asyncio.create_task(sweep())
    await asyncio.sleep(0)
    walk = [asyncio.create_task(request(f"walk-{n}")) for n in range(2)]  # arrive after the sweep's requests
    await asyncio.sleep(0)
    release.set()
    async with asyncio.timeout(2):
        await asyncio.gather(*holders, swept, *walk)
    assert order == ["first-0", "first-1", "walk-0", "walk-1", "sweep-0", "sweep-1", "sweep-2", "sweep-3"]


async def test_a_deferred_request_takes_a_free_slot_at_once() -> None:
    limiter = FixedLimit(2)
    with deferred():
        async with asyncio.timeout(1), limiter.slot() as slot:
            assert slot.in_flight == 1


def test_none_means_auto() -> None:
    assert isinstance(make_limiter(None), AdaptiveLimit)
    assert make_limiter(3).describe() == {"mode": "fixed", "limit": 3}


async def test_the_transport_reports_429_and_503_to_the_limiter() -> None:
    answers = iter([httpx.Response(503, text="busy")] + [data({"id": 1, "name": "x"})] * 3)
    client = mock_client(lambda request: next(answers), concurrency=None)
    async with client:
        limiter = client.transport.limiter
        assert isinstance(limiter, AdaptiveLimit)
        await client.system_info()
        assert limiter.drops == 1
        assert limiter.limit == 2  # 4 halved
    assert client.transport.concurrency == MAX_LIMIT  # the ceiling bounds the pool and the executor


def test_writes_are_measured_against_their_own_baseline() -> None:
    """An apply: a few fast reads, then writes four times slower even unloaded, on a site with room for all. Against
    one shared baseline every write looked like a queue and the limit stayed at 4 until the first probe."""
    limiter = AdaptiveLimit(initial=4)
    for _ in range(4):
        limiter.record(Slot(in_flight=4, kind="read"), 0.025)
    seen = []
    for _ in range(60):
        limiter.record(Slot(in_flight=limiter.limit, kind="write"), 0.100)  # no queue at any limit
        seen.append(limiter.limit)
    assert seen[-1] == MAX_LIMIT, seen
    assert limiter.describe()["rtt_min_ms_by_kind"] == {"read": 25.0, "write": 100.0}


def test_a_queue_of_writes_is_still_seen_after_reads() -> None:
    """Writes that queue at a 4-worker pool, after fast reads: the limit settles at the knee, as with one kind."""
    limiter = AdaptiveLimit(initial=4)
    for _ in range(4):
        limiter.record(Slot(in_flight=4, kind="read"), 0.025)
    writes = php_pool(workers=4, service=0.1)
    tail = []
    for _ in range(3000):
        limiter.record(Slot(in_flight=limiter.limit, kind="write"), writes(limiter.limit))
        tail.append(limiter.limit)
    tail = tail[-2000:]
    throughput = len(tail) / sum(writes(limit) / limit for limit in tail)
    assert throughput >= 0.9 * 4 / 0.1
    assert statistics.median(writes(limit) for limit in tail) <= 2 * writes(1)
    assert max(tail) <= 4 + 6


async def test_the_transport_tells_the_limiter_reads_from_writes() -> None:
    answers = iter([data({"id": 1, "name": "x"})] * 8)
    client = mock_client(lambda request: next(answers), concurrency=None)
    kinds: list[str] = []
    async with client:
        limiter = client.transport.limiter
        assert isinstance(limiter, AdaptiveLimit)
        record = limiter.record

        def spy(slot: Slot, rtt: float) -> None:
            kinds.append(slot.kind)
            record(slot, rtt)

        limiter.record = spy  # type: ignore[method-assign]
        await client.system_info()
        await client.update_page(1, name="x")
    assert kinds == ["read", "write"]
