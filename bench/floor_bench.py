"""How close to ``latency`` the sandbox itself lets a client get: the floor under ``run.py``'s ratios.

    python -m bench.floor_bench [--requests 1600] [--latency-ms 20] [--concurrency 8]

``run.py``'s lower bound prices every request at exactly the sandbox's latency (20 ms), ``concurrency`` at a time, as
if the server took no time of its own. The sandbox is one Python process on the same 2 cores as the client: it
sleeps the latency, *then* does the request's work in its single event loop, and requests that wake together wait
for each other. So no client can reach that bound. This measures how far from it the sandbox keeps a client that
costs next to nothing: a **bare client** (asyncio sockets, keep-alive, a hand-written HTTP/1.1 request, the
answer read by its ``content-length``, about 0.15 ms of CPU a request) sends each kind of request ``--requests``
times, ``--concurrency`` at a time, to a sandbox in another process (``cmssync emulator``, a generated site of 200
pages × 5 blocks and 200 files). Then cmssync's own client (``ConcreteClient``, the same calls the commands make)
sends the same requests, in the same run.

For each kind: the time a slot was held per request (``wall × concurrency / requests``), its ratio to the latency
(the bound's price of a request), and the CPU per request of the client and of the sandbox. The shorter of the two
clients' slot times is the sandbox's empirical **floor** for that kind: a zero-CPU client is not always the faster
one, as its requests arrive in bursts that the single-threaded sandbox serves one after another, while a client
that spends a little CPU between requests spreads them out. Kinds: a page read with its areas and attributes
(plan's second phase), a file read by id (what a list walk skipped), a block update (an edit), a block add (a first
apply).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import logging
import os
import sys
import tempfile
import time
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

import httpx

from bench.common import table
from bench.concurrency_bench import client_for
from bench.emulator_bench import Connection, raw_request
from bench.emulator_process import ADMIN_PASSWORD, SECRET, Emulator, free_port
from cmssync.api.auth import DEFAULT_SCOPES
from cmssync.api.models import Page
from cmssync.logs import configure_logging

API = "/ccm/api/1.0"
SITE = "pages=200,blocks=5,files=200,users=0"


Request = tuple[str, str, Any]
"""``(method, path, JSON body or None)``."""


class BareClient:
    """``concurrency`` keep-alive connections (``emulator_bench.Connection``), each sending one request at a time;
    next to no CPU of its own."""

    def __init__(self, port: int, token: str) -> None:
        self.port = port
        self.token = token

    async def run(self, concurrency: int, count: int, request: Callable[[int, int, Any], Request]) -> None:
        """Send ``count`` requests: ``request(worker, index, previous answer of this worker)``."""
        indexes = iter(range(count))

        async def worker(number: int) -> None:
            connection = await Connection.open("127.0.0.1", self.port)
            answer: Any = None
            try:
                for index in indexes:
                    method, path, body = request(number, index, answer)
                    data = b"" if body is None else json.dumps(body).encode()
                    status, raw = await connection.exchange(raw_request(method, path, self.token, data))
                    if status >= 300:
                        raise SystemExit(f"the sandbox answered {status}: {raw[:300]!r}")
                    answer = json.loads(raw)
            finally:
                connection.close()

        await asyncio.gather(*(worker(n) for n in range(concurrency)))


def cpu_of(pid: int) -> float:
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


async def cmssync_run(concurrency: int, count: int, call: Callable[[int, int], Awaitable[None]]) -> None:
    """``count`` calls of cmssync's client, ``concurrency`` at a time: ``call(worker, index)``."""
    indexes = iter(range(count))

    async def worker(number: int) -> None:
        for index in indexes:
            await call(number, index)

    await asyncio.gather(*(worker(n) for n in range(concurrency)))


async def site_ids(
    url: str, form: dict[str, str], concurrency: int
) -> tuple[str, list[int], list[str], list[tuple[int, int]]]:
    """An access token, the generated pages, files, and one ``(page, block)`` for each of ``2 × concurrency``
    pages."""
    async with httpx.AsyncClient(base_url=url) as http:
        token = (await http.post("/oauth/2.0/token", data=form)).json()["access_token"]
        http.headers["Authorization"] = f"Bearer {token}"

        async def data(path: str, **params: str) -> Any:
            answer = await http.get(API + path, params=params)
            answer.raise_for_status()
            return answer.json()["data"]

        sections = await data("/pages/1/children")
        pages = [page["id"] for section in sections for page in await data(f"/pages/{section['id']}/children")]
        files = [str(f["id"]) for f in await data("/files", limit="100")]
        blocks = []
        for page in pages[: 2 * concurrency]:
            read = Page.model_validate(await data(f"/pages/{page}", includes="areas"))
            if not read.areas or not read.areas[0].blocks:
                raise SystemExit(f"generated page {page} has no block to update ({SITE})")
            blocks.append((page, read.areas[0].blocks[0].id))
    return token, pages, files, blocks


async def measure(emulator: Emulator, count: int, latency_ms: int, concurrency: int) -> list[dict[str, Any]]:
    url = emulator.url
    form = {
        "grant_type": "password",
        "client_id": "sandbox",
        "client_secret": SECRET,
        "username": "admin",
        "password": ADMIN_PASSWORD,
        "scope": " ".join(DEFAULT_SCOPES),
    }
    token, pages, files, blocks = await site_ids(url, form, concurrency)
    bare = BareClient(int(url.rsplit(":", 1)[1]), token)
    # Worker n writes to the block of page blocks[n] with the bare client, of blocks[concurrency + n] with cmssync's;
    # a block update answers with the block's id in the draft, which the next update must use (concrete-api.md §13).
    current = dict(enumerate(blocks))

    def page_read(worker: int, index: int, previous: Any = None) -> Request:
        return "GET", f"{API}/pages/{pages[index % len(pages)]}?includes=areas,custom_attributes", None

    def file_read(worker: int, index: int, previous: Any = None) -> Request:
        return "GET", f"{API}/files/{files[index % len(files)]}?includes=custom_attributes", None

    def block_update(worker: int, index: int, previous: Any) -> Request:
        page, block = current[worker]
        if previous is not None:
            block = int(previous["data"]["id"])
            current[worker] = (page, block)
        return "PUT", f"{API}/pages/{page}/Main/{block}", {"value": {"content": f"<p>floor {index}</p>"}}

    def block_add(worker: int, index: int, previous: Any = None) -> Request:
        page = blocks[worker][0]
        return "POST", f"{API}/pages/{page}/Main", {"type": "content", "value": {"content": f"<p>floor {index}</p>"}}

    rows: list[dict[str, Any]] = []
    configure_logging(level=logging.INFO, json_lines=True)  # as the command line sets it up
    async with client_for(url, concurrency) as client:
        await client.default_site(includes=())  # the token and the connections

        async def cmssync_page_read(worker: int, index: int) -> None:
            await client.get_page(pages[index % len(pages)], includes=("areas", "custom_attributes"))

        async def cmssync_file_read(worker: int, index: int) -> None:
            await client.get_file(files[index % len(files)], includes=("custom_attributes",))

        async def cmssync_block_update(worker: int, index: int) -> None:
            page, block = current[concurrency + worker]
            value = {"content": f"<p>floor {index}</p>"}
            current[concurrency + worker] = (page, (await client.update_block(page, "Main", block, value=value)).id)

        async def cmssync_block_add(worker: int, index: int) -> None:
            value = {"content": f"<p>floor {index}</p>"}
            await client.add_block(blocks[concurrency + worker][0], "Main", type="content", value=value)

        kinds = [
            ("page read (areas, attributes)", page_read, cmssync_page_read),
            ("file read by id", file_read, cmssync_file_read),
            ("block update", block_update, cmssync_block_update),
            ("block add", block_add, cmssync_block_add),
        ]
        for name, request, call in kinds:
            sends: list[tuple[str, Awaitable[None]]] = [
                ("bare", bare.run(concurrency, count, request)),
                ("cmssync", cmssync_run(concurrency, count, call)),
            ]
            for who, send in sends:
                cpu, sandbox, wall = time.process_time(), cpu_of(emulator.process.pid), time.perf_counter()
                await send
                wall, cpu = time.perf_counter() - wall, time.process_time() - cpu
                sandbox = cpu_of(emulator.process.pid) - sandbox
                slot = wall * concurrency / count * 1000
                rows.append(
                    {
                        "request": name,
                        "client": who,
                        "slot_ms": round(slot, 2),
                        "over_latency": round(slot / latency_ms, 2),
                        "client_cpu_ms": round(cpu / count * 1000, 2),
                        "sandbox_cpu_ms": round(sandbox / count * 1000, 2),
                    }
                )
    return rows


def floor(*, requests: int = 1600, latency_ms: int = 20, concurrency: int = 8) -> list[dict[str, Any]]:
    """The measurements (one dict per request kind and client), against a sandbox started for them."""
    with tempfile.TemporaryDirectory() as tmp:
        emulator = Emulator(
            free_port(),
            Path(tmp) / "emulator.log",
            "--seed",
            "empty",
            "--generate",
            SITE,
            "--latency-ms",
            str(latency_ms),
        )
        try:
            return asyncio.run(measure(emulator, requests, latency_ms, concurrency))
        finally:
            emulator.close()


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--requests", type=int, default=1600)
    parser.add_argument("--latency-ms", type=int, default=20)
    parser.add_argument("--concurrency", type=int, default=8)
    options = parser.parse_args(argv)
    rows = floor(requests=options.requests, latency_ms=options.latency_ms, concurrency=options.concurrency)
    print(
        f"{options.requests} requests of each kind, {options.concurrency} at a time, sandbox latency "
        f"{options.latency_ms} ms ({SITE})\n"
    )
    headers = ["request", "client", "slot per request", "over latency", "client CPU", "sandbox CPU"]
    cells = [
        [
            r["request"],
            r["client"],
            f"{r['slot_ms']:.2f} ms",
            f"{r['over_latency']:.2f}x",
            f"{r['client_cpu_ms']:.2f} ms",
            f"{r['sandbox_cpu_ms']:.2f} ms",
        ]
        for r in rows
    ]
    print(table(headers, cells))
    return 0


if __name__ == "__main__":
    sys.exit(main())
