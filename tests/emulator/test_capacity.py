"""The sandbox's capacity model (``--workers N --service-ms M``): a PHP-FPM-like pool in front of the API."""

from __future__ import annotations

import asyncio
import subprocess
import sys
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import httpx
import pytest

from cmssync.api.limiter import AdaptiveLimit
from cmssync.emulator.embedded import Sandbox
from cmssync.emulator.settings import Settings
from tests.emulator.helpers import client, token
from tests.support.api_clients import sandbox_client

REPO = Path(__file__).resolve().parents[2]


def parallel_reads(sandbox: Sandbox, count: int) -> float:
    """``count`` page reads sent at once (one connection each); the seconds until the last answer."""
    bearer = token(sandbox)

    def read(_: int) -> int:
        with client(sandbox, bearer) as http:
            return http.get("/pages/1").status_code

    started = time.monotonic()
    with ThreadPoolExecutor(count) as pool:
        assert set(pool.map(read, range(count))) == {200}
    return time.monotonic() - started


def test_requests_queue_for_the_workers() -> None:
    with Sandbox(workers=2, service_ms=100) as sandbox:
        elapsed = parallel_reads(sandbox, 6)
        capacity = httpx.get(sandbox.url + "/__emulator/stats").json()["capacity"]
    assert capacity["max_busy"] == 2  # never more than the pool at once
    assert capacity["max_waiting"] >= 3
    assert capacity["served"] >= 6
    assert elapsed >= 0.3  # 6 requests / 2 workers x 100 ms: a floor the model guarantees, not a speed target


def test_the_model_is_off_by_default() -> None:
    with Sandbox() as sandbox:
        parallel_reads(sandbox, 4)
        assert "capacity" not in httpx.get(sandbox.url + "/__emulator/stats").json()


def test_negative_values_are_refused() -> None:
    with pytest.raises(ValueError, match="workers and service_ms must not be negative"):
        Settings(workers=-1)


def test_the_command_line_takes_the_options() -> None:
    result = subprocess.run(
        [sys.executable, "-m", "cmssync", "emulator", "--help"], cwd=REPO, capture_output=True, text=True, check=True
    )
    assert "--workers" in result.stdout
    assert "--service-ms" in result.stdout


async def test_the_adaptive_client_stays_near_the_pool_size() -> None:
    """cmssync's default (auto) limit, reading through a 3-worker pool: no refusals, the limit near the knee."""
    with Sandbox(workers=3, service_ms=30) as sandbox:
        async with sandbox_client(sandbox, concurrency=None) as api:
            limiter = api.transport.limiter
            assert isinstance(limiter, AdaptiveLimit)

            async def reads() -> None:
                for _ in range(25):
                    await api.get_page(1)

            await asyncio.gather(*(reads() for _ in range(16)))
            described = limiter.describe()
        capacity = httpx.get(sandbox.url + "/__emulator/stats").json()["capacity"]
    assert described["drops"] == 0
    assert 2 <= limiter.limit <= 12, described
    assert capacity["max_busy"] == 3
