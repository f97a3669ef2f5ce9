"""The client's connection pool (``cmssync.api.pool``) against a real loopback server: keep-alive connections are
reused, and one the server closed while it was idle is noticed (the cached-socket readability check) and replaced
without a failed request or a retry; a PUT's body arrives whole.
Cookies a site sets are sent back, as ``httpx.AsyncClient`` did."""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator

import pytest

from cmssync.api.auth import StaticToken
from cmssync.api.client import ConcreteClient
from cmssync.api.pool import CachedSocketBackend
from cmssync.api.retry import Kind
from tests.support.api_clients import FAST

GROUP = json.dumps({"data": {"id": 4, "name": "Editors"}}).encode()


class KeepAliveServer:
    """Answers each request with a group, keeping the connection open; ``close_idle()`` drops every connection."""

    def __init__(self) -> None:
        self.connections = 0
        self.requests: list[bytes] = []
        self._writers: list[asyncio.StreamWriter] = []

    async def handle(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        self.connections += 1
        self._writers.append(writer)
        try:
            while True:
                head = await reader.readuntil(b"\r\n\r\n")
                lines = head.lower().split(b"\r\n")
                length = next((int(line[15:]) for line in lines if line.startswith(b"content-length:")), 0)
                self.requests.append(head + await reader.readexactly(length))
                cookie = b"Set-Cookie: CONCRETE=session-1; Path=/\r\n" if len(self.requests) == 1 else b""
                writer.write(
                    b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\n"
                    + cookie
                    + f"Content-Length: {len(GROUP)}\r\n\r\n".encode()
                    + GROUP
                )
                await writer.drain()
        except (asyncio.IncompleteReadError, ConnectionError):
            pass
        finally:
            writer.close()

    async def close_idle(self) -> None:
        for writer in self._writers:
            writer.close()
        self._writers.clear()
        await asyncio.sleep(0.05)  # the FIN reaches the client's socket


@pytest.fixture
async def server() -> AsyncIterator[tuple[KeepAliveServer, str]]:
    site = KeepAliveServer()
    listener = await asyncio.start_server(site.handle, "127.0.0.1", 0)
    port = listener.sockets[0].getsockname()[1]
    async with listener:
        yield site, f"http://127.0.0.1:{port}"


async def test_the_pool_reuses_connections_and_replaces_one_the_server_closed(
    server: tuple[KeepAliveServer, str],
) -> None:
    site, url = server
    async with ConcreteClient(url, auth=StaticToken("tok"), retry=FAST, concurrency=1) as client:
        pool = client.transport.http._transport._pool  # type: ignore[attr-defined]
        assert isinstance(pool._network_backend, CachedSocketBackend)
        for _ in range(3):
            assert (await client.get_group(4)).name == "Editors"
        assert site.connections == 1  # kept alive
        await site.close_idle()
        assert (await client.get_group(4)).name == "Editors"
        assert site.connections == 2
        assert client.stats.retries == 0  # the closed connection was not used
        assert client.stats.count("GET", "/groups/{group_id}", 200) == 4


async def test_cookies_a_site_sets_are_sent_back(server: tuple[KeepAliveServer, str]) -> None:
    site, url = server
    async with ConcreteClient(url, auth=StaticToken("tok"), retry=FAST, concurrency=1) as client:
        await client.get_group(4)
        await client.get_group(4)
    assert b"cookie:" not in site.requests[0].lower()
    assert b"cookie: concrete=session-1" in site.requests[1].lower()


async def test_a_put_reaches_the_server_whole(server: tuple[KeepAliveServer, str]) -> None:
    site, url = server
    async with ConcreteClient(url, auth=StaticToken("tok"), retry=FAST, concurrency=1) as client:
        await client.transport.call("PUT", "/groups/{group_id}", kind=Kind.UPDATE, json={"name": "Editors"}, group_id=4)
    assert site.requests[0].startswith(b"PUT /ccm/api/1.0/groups/4 HTTP/1.1\r\n")
    assert site.requests[0].endswith(b'\r\n\r\n{"name":"Editors"}')
