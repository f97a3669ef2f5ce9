"""Throughput of the sandbox emulator on a generated site.

Starts ``run_emulator`` in a child process (one event loop: one core for the server) on a ``--generate`` site and
drives it from this process over a few keep-alive connections of a minimal HTTP/1.1 client (so that the server, not
the client, is what gets measured):

* ``GET /pages/{id}?includes=areas`` on random generated pages (target: at least 500 requests/s);
* ``POST /pages/{id}/Main`` (a content block add, which writes a draft version) on random pages.

Usage: ``python -m bench.emulator_bench [--pages 1000] [--blocks 5] [--reads 4000] [--writes 1000] [--concurrency 8]``
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import random
import signal
import socket
import statistics
import subprocess
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import httpx

REPO = Path(__file__).resolve().parents[1]
SCOPES = "pages:read pages:areas:add_block"


@dataclass
class Measurement:
    name: str
    count: int
    seconds: float
    latencies: list[float]
    failures: int

    def row(self) -> str:
        ordered = sorted(self.latencies)
        p50 = statistics.median(ordered) * 1000
        p95 = ordered[int(len(ordered) * 0.95) - 1] * 1000
        return (
            f"{self.name:<40}{self.count:>8}{self.seconds:>9.2f}{self.count / self.seconds:>10.0f}"
            f"{p50:>9.1f}{p95:>9.1f}{self.failures:>7}"
        )


def start_server(pages: int, blocks: int) -> tuple[subprocess.Popen[str], str, float]:
    code = (
        "import sys\n"
        "from cmssync.emulator.server import run_emulator\n"
        "from cmssync.emulator.settings import Settings\n"
        "try:\n"
        f"    settings = Settings(seed='empty', generate='pages={pages},blocks={blocks}', dialect='concrete')\n"
        "    run_emulator(settings, host='127.0.0.1', port=0)\n"
        "except KeyboardInterrupt:\n"
        "    sys.exit(0)\n"
    )
    started = time.perf_counter()
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    process = subprocess.Popen([sys.executable, "-c", code], stderr=subprocess.PIPE, text=True, env=env)
    assert process.stderr is not None
    line = process.stderr.readline()
    if "listening on" not in line:
        process.kill()
        raise SystemExit(f"the emulator did not start: {line}{process.stderr.read()}")
    return process, line.split()[4], time.perf_counter() - started


def stop_server(process: subprocess.Popen[str]) -> None:
    """Stop an emulator :func:`start_server` started (Ctrl-C, as a user would)."""
    process.send_signal(signal.SIGINT)
    process.wait(timeout=30)
    if process.stderr is not None:
        process.stderr.close()


class Connection:
    """A minimal keep-alive HTTP/1.1 client: cheap enough that the server, not the client, is measured."""

    def __init__(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        self.reader, self.writer = reader, writer

    @classmethod
    async def open(cls, host: str, port: int) -> Connection:
        reader, writer = await asyncio.open_connection(host, port)
        sock = writer.get_extra_info("socket")
        sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        return cls(reader, writer)

    async def request(self, raw: bytes) -> int:
        return (await self.exchange(raw))[0]

    async def exchange(self, raw: bytes) -> tuple[int, bytes]:
        """Send one request (``raw_request``); the answer's status and body."""
        self.writer.write(raw)
        head = await self.reader.readuntil(b"\r\n\r\n")
        status = int(head.split(b" ", 2)[1])
        length = 0
        for line in head.split(b"\r\n"):
            if line.lower().startswith(b"content-length:"):
                length = int(line.split(b":", 1)[1])
        return status, await self.reader.readexactly(length)

    def close(self) -> None:
        self.writer.close()


def raw_request(method: str, path: str, bearer: str, body: bytes = b"") -> bytes:
    lines = [f"{method} {path} HTTP/1.1", "Host: bench", f"Authorization: Bearer {bearer}", "Accept: application/json"]
    if body:
        lines += ["Content-Type: application/json", f"Content-Length: {len(body)}"]
    return ("\r\n".join(lines) + "\r\n\r\n").encode() + body


async def run(name: str, total: int, connections: list[Connection], make: Callable[[], bytes]) -> Measurement:
    latencies: list[float] = []
    failures = 0
    remaining = total

    async def worker(connection: Connection) -> None:
        nonlocal failures, remaining
        while remaining > 0:
            remaining -= 1
            began = time.perf_counter()
            status = await connection.request(make())
            latencies.append(time.perf_counter() - began)
            failures += status != 200

    began = time.perf_counter()
    await asyncio.gather(*(worker(c) for c in connections))
    return Measurement(name, total, time.perf_counter() - began, latencies, failures)


async def bench(url: str, pages: int, reads: int, writes: int, concurrency: int) -> list[Measurement]:
    form = {
        "grant_type": "password",
        "client_id": "sandbox",
        "client_secret": "sandbox-secret",
        "username": "admin",
        "password": "sandbox-admin",
        "scope": SCOPES,
    }
    async with httpx.AsyncClient(base_url=url, timeout=60.0) as http:
        bearer = (await http.post("/oauth/2.0/token", data=form)).json()["access_token"]
    host, port = url.removeprefix("http://").split(":")
    connections = [await Connection.open(host, int(port)) for _ in range(concurrency)]
    rng = random.Random(7)
    first, last = 2, pages + 1  # generated page ids follow the home page
    block = json.dumps({"type": "content", "value": {"content": "<p>bench</p>"}}).encode()

    def read() -> bytes:
        return raw_request("GET", f"/ccm/api/1.0/pages/{rng.randint(first, last)}?includes=areas", bearer)

    def add() -> bytes:
        return raw_request("POST", f"/ccm/api/1.0/pages/{rng.randint(first, last)}/Main", bearer, block)

    try:
        await run("warm-up", 200, connections, read)
        return [
            await run("GET /pages/{id}?includes=areas", reads, connections, read),
            await run("POST /pages/{id}/Main (block add)", writes, connections, add),
        ]
    finally:
        for connection in connections:
            connection.close()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--pages", type=int, default=1000)
    parser.add_argument("--blocks", type=int, default=5)
    parser.add_argument("--reads", type=int, default=4000)
    parser.add_argument("--writes", type=int, default=1000)
    parser.add_argument("--concurrency", type=int, default=8)
    args = parser.parse_args()
    process, url, startup = start_server(args.pages, args.blocks)
    try:
        results = asyncio.run(bench(url, args.pages, args.reads, args.writes, args.concurrency))
    finally:
        stop_server(process)
    print(
        f"emulator at {url}: generate pages={args.pages},blocks={args.blocks}; started in {startup:.2f} s;"
        f" concurrency {args.concurrency}"
    )
    print(f"{'operation':<40}{'requests':>8}{'seconds':>9}{'req/s':>10}{'p50 ms':>9}{'p95 ms':>9}{'fail':>7}")
    for measurement in results:
        print(measurement.row())


if __name__ == "__main__":
    main()
