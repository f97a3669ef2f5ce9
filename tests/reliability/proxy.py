"""A corrupting proxy in front of the sandbox, as an ``httpx`` transport for cmssync's client.

Every request goes to the real sandbox except those a :class:`Corruption` matches: for those the proxy answers
nonsense instead — malformed JSON, an HTML page, a truncated body, wrong types — either *instead of* the request
(the site never sees it) or *after* forwarding it (the site changed, but the answer is garbage).
"""

from __future__ import annotations

import contextlib
import re
from collections.abc import Iterator
from dataclasses import dataclass

import httpx
import pytest

from cmssync.api.client import ConcreteClient
from cmssync.sync.workspace import Workspace

HOP_HEADERS = {"content-length", "content-encoding", "transfer-encoding", "connection"}


@dataclass(frozen=True)
class Corruption:
    name: str
    method: str
    path: str
    """Regular expression searched in the request path."""
    status: int = 200
    body: bytes = b""
    content_type: str = "application/json"
    forward: bool = False
    """Send the request to the site first (the change happens), then answer nonsense."""
    truncated: bool = False
    """Answer with a connection that breaks in the middle of the body."""
    times: int | None = None
    """Corrupt at most this many matching requests (None: all)."""
    headers: tuple[tuple[str, str], ...] = ()
    """More headers of the nonsense answer."""

    def matches(self, request: httpx.Request) -> bool:
        return request.method == self.method and re.search(self.path, request.url.path) is not None


class CorruptingProxy:
    def __init__(self, corruption: Corruption) -> None:
        self.corruption = corruption
        self.corrupted = 0

    def transport(self) -> httpx.MockTransport:
        return httpx.MockTransport(self.handle)

    async def handle(self, request: httpx.Request) -> httpx.Response:
        corruption = self.corruption
        wanted = corruption.times is None or self.corrupted < corruption.times
        if not (wanted and corruption.matches(request)):
            return await self.forward(request)
        self.corrupted += 1
        if corruption.forward:
            await self.forward(request)
        if corruption.truncated:
            raise httpx.RemoteProtocolError(
                "peer closed connection without sending complete message body (incomplete chunked read)",
                request=request,
            )
        headers = [("content-type", corruption.content_type), *corruption.headers]
        return httpx.Response(corruption.status, content=corruption.body, headers=headers)

    async def forward(self, request: httpx.Request) -> httpx.Response:
        body = await request.aread()
        async with httpx.AsyncClient(timeout=30.0) as upstream:
            answer = await upstream.request(request.method, request.url, headers=request.headers, content=body)
        headers = [(k, v) for k, v in answer.headers.multi_items() if k.lower() not in HOP_HEADERS]
        return httpx.Response(answer.status_code, headers=headers, content=answer.content)


@contextlib.contextmanager
def through(proxy: CorruptingProxy) -> Iterator[None]:
    """While inside, every workspace's client talks through ``proxy``."""

    def client(self: Workspace) -> ConcreteClient:
        return ConcreteClient.from_settings(self.settings, base_dir=self.directory, transport=proxy.transport())

    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(Workspace, "client", client)
        yield
