"""Adaptive concurrency against a capacity-limited sandbox (issue 17, item 5): ``python -m bench.concurrency_bench``.

The sandbox runs as its own process (``cmssync emulator --workers N --service-ms M --latency-ms L``): a request
waits ``L`` ms (the network), then for one of ``N`` workers, which it holds ``M`` ms — a PHP-FPM pool. The client
is cmssync's own ``ConcreteClient`` reading pages (``GET /pages/{id}``) as fast as its limiter lets it, from a
backlog larger than any limit, so the limiter alone decides how many are in flight.

Measured, side by side in one run:

* unloaded latency: median round trip at concurrency 1;
* saturation throughput: the best throughput of fixed concurrencies 1, 2, 4, … 32;
* ``auto`` (the default): throughput and median latency once the limit has settled (the first ``--warmup``
  requests are left out), the limit it settled on and the highest it reached.

Targets: ``auto`` reaches >= 90% of the saturation throughput with a median latency <= 2x the unloaded one.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import logging
import os
import statistics
import subprocess
import sys
import time
from collections.abc import AsyncIterator
from pathlib import Path

import httpx

from bench.common import table
from bench.emulator_process import free_port
from cmssync.api.auth import OAuthTokens
from cmssync.api.client import ConcreteClient
from cmssync.api.limiter import Slot
from cmssync.logs import configure_logging

REPO = Path(__file__).resolve().parents[1]


def start_sandbox(port: int, options: argparse.Namespace) -> subprocess.Popen[bytes]:
    args = [
        sys.executable,
        "-m",
        "cmssync",
        "emulator",
        "--port",
        str(port),
        "--seed",
        "empty",
        "--generate",
        f"pages={options.pages},blocks=2,files=0,users=0",
        "--latency-ms",
        str(options.latency_ms),
        "--workers",
        str(options.workers),
        "--service-ms",
        str(options.service_ms),
    ]
    process = subprocess.Popen(args, cwd=REPO, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        try:
            httpx.get(f"http://127.0.0.1:{port}/__emulator/stats", timeout=1).raise_for_status()
            return process
        except httpx.HTTPError:
            time.sleep(0.2)
    process.kill()
    raise SystemExit("the sandbox did not start")


async def page_ids(url: str) -> list[int]:
    async with client_for(url, 4) as client:
        return [page.id async for page in client.iter_pages()]


def client_for(url: str, concurrency: int | None) -> ConcreteClient:
    auth = OAuthTokens(
        token_url=url + "/oauth/2.0/token",
        grant="password",
        client_id="sandbox",
        client_secret="sandbox-secret",
        username="admin",
        password="sandbox-admin",
    )
    return ConcreteClient(url, auth=auth, concurrency=concurrency)


async def run(url: str, ids: list[int], concurrency: int | None, count: int, warmup: int) -> dict[str, float]:
    """``count`` page reads through one client; throughput and latencies of the requests after ``warmup``."""
    async with client_for(url, concurrency) as client:
        await client.access_token()
        latencies: list[tuple[float, float]] = []  # (finished at, round trip)
        backlog = iter(range(count))
        limiter = client.transport.limiter
        take_slot = limiter.slot

        @contextlib.asynccontextmanager
        async def timed_slot(method: str = "") -> AsyncIterator[Slot]:
            # The site's latency: from the moment the limiter lets the request go, not from the backlog.
            async with take_slot(method) as slot:
                started = time.monotonic()
                yield slot
                latencies.append((time.monotonic(), time.monotonic() - started))

        limiter.slot = timed_slot  # type: ignore[method-assign]

        async def worker() -> None:
            for n in backlog:
                await client.get_page(ids[n % len(ids)])

        lanes = 64 if concurrency is None else concurrency  # more lanes than the limit: the limiter decides
        await asyncio.gather(*(worker() for _ in range(lanes)))
        latencies.sort()
        measured = latencies[warmup:]
        span = measured[-1][0] - latencies[warmup - 1][0] if warmup else measured[-1][0] - measured[0][0]
        state = limiter.describe()
        return {
            "throughput": len(measured) / span,
            "median_ms": statistics.median(rtt for _, rtt in measured) * 1000,
            "p90_ms": statistics.quantiles([rtt for _, rtt in measured], n=10)[-1] * 1000,
            "limit": float(str(state["limit"])),
            "highest": float(str(state.get("highest", state["limit"]))),
        }


async def main_async(options: argparse.Namespace) -> int:
    port = free_port()
    url = f"http://127.0.0.1:{port}"
    sandbox = start_sandbox(port, options)
    try:
        ids = await page_ids(url)
        rows = []
        results: dict[str, dict[str, float]] = {}
        for concurrency in (1, 2, 4, 8, 16, 32):
            count = max(40, min(options.requests, 40 * concurrency))
            results[str(concurrency)] = await run(url, ids, concurrency, count, warmup=min(8, count // 5))
        results["auto"] = await run(url, ids, None, options.requests, warmup=options.warmup)
        for name, r in results.items():
            rows.append(
                [name, f"{r['throughput']:.1f}", f"{r['median_ms']:.0f}", f"{r['p90_ms']:.0f}", f"{r['limit']:.0f}"]
            )
        unloaded = results["1"]["median_ms"]
        saturation = max(r["throughput"] for k, r in results.items() if k != "auto")
        auto = results["auto"]
        print(
            f"sandbox: --workers {options.workers} --service-ms {options.service_ms} --latency-ms {options.latency_ms}"
            f" (ideal saturation {options.workers / options.service_ms * 1000:.1f}/s); machine: {os.cpu_count()} cores"
        )
        print(table(["concurrency", "req/s", "median ms", "p90 ms", "limit at end"], rows))
        share = auto["throughput"] / saturation * 100
        ratio = auto["median_ms"] / unloaded
        print(
            f"auto: {share:.0f}% of the saturation throughput ({saturation:.1f}/s), target >= 90%: "
            f"{'met' if share >= 90 else 'MISSED'}"
        )
        print(
            f"auto: median latency {ratio:.2f}x the unloaded ({unloaded:.0f} ms), target <= 2x: "
            f"{'met' if ratio <= 2 else 'MISSED'}"
        )
        print(f"auto: limit settled at {auto['limit']:.0f} (highest {auto['highest']:.0f})")
        return 0
    finally:
        sandbox.terminate()
        sandbox.wait(timeout=30)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--workers", type=int, default=4)
    parser.add_argument("--service-ms", type=int, default=50)
    parser.add_argument("--latency-ms", type=int, default=20)
    parser.add_argument("--pages", type=int, default=50)
    parser.add_argument("--requests", type=int, default=600)
    parser.add_argument("--warmup", type=int, default=150)
    configure_logging(level=logging.WARNING)
    return asyncio.run(main_async(parser.parse_args()))


if __name__ == "__main__":
    raise SystemExit(main())
