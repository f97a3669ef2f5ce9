"""Uploading a large file keeps memory flat: the multipart body is streamed from disk, never held whole.

``httpx.MockTransport`` reads request bodies into memory, so this test sends to a tiny real HTTP server on loopback
that reads and discards the body.
"""

from __future__ import annotations

import asyncio
import json
import tracemalloc
from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from cmssync.api.auth import StaticToken
from cmssync.api.client import ConcreteClient
from tests.support.api_clients import FAST

SIZE = 200 * 1024 * 1024
LIMIT = 32 * 1024 * 1024


class SinkServer:
    """Answers every request with a File after discarding its body; remembers the body sizes."""

    def __init__(self) -> None:
        self.received: list[int] = []

    async def handle(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        head = await reader.readuntil(b"\r\n\r\n")
        headers = dict(line.split(": ", 1) for line in head.decode("latin-1").split("\r\n")[1:] if ": " in line)
        lowered = {k.lower(): v for k, v in headers.items()}
        total = 0
        if "content-length" in lowered:
            remaining = int(lowered["content-length"])
            while remaining:
                chunk = await reader.read(min(remaining, 1 << 20))
                if not chunk:
                    break
                remaining -= len(chunk)
                total += len(chunk)
        else:  # chunked
            while True:
                size = int((await reader.readline()).strip(), 16)
                if size == 0:
                    await reader.readline()
                    break
                await reader.readexactly(size)
                await reader.readline()
                total += size
        self.received.append(total)
        body = json.dumps({"data": {"id": "u-big", "title": "big.bin", "size": {"exact": SIZE}}}).encode()
        writer.write(
            b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nConnection: close\r\n"
            + f"Content-Length: {len(body)}\r\n\r\n".encode()
            + body
        )
        await writer.drain()
        writer.close()


@pytest.fixture
async def sink() -> AsyncIterator[tuple[SinkServer, str]]:
    server = SinkServer()
    listener = await asyncio.start_server(server.handle, "127.0.0.1", 0)
    port = listener.sockets[0].getsockname()[1]
    async with listener:
        yield server, f"http://127.0.0.1:{port}"


@pytest.mark.slow
async def test_large_upload_keeps_memory_flat(tmp_path: Path, sink: tuple[SinkServer, str]) -> None:
    server, url = sink
    big = tmp_path / "big.bin"
    with big.open("wb") as handle:
        handle.truncate(SIZE)  # sparse: costs no disk
    async with ConcreteClient(url, auth=StaticToken("t"), retry=FAST) as client:
        tracemalloc.start()
        try:
            before, _ = tracemalloc.get_traced_memory()
            uploaded = await client.upload_file(big, folder_id=3)
            _, peak = tracemalloc.get_traced_memory()
        finally:
            tracemalloc.stop()
    growth = peak - before
    print(f"uploaded {SIZE >> 20} MiB; peak traced memory growth {growth / 2**20:.2f} MiB")
    assert uploaded.id == "u-big"
    assert server.received
    assert server.received[0] > SIZE
    assert growth < LIMIT
