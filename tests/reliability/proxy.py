"""A corrupting proxy in front of the sandbox, as an ``httpx`` transport for cmssync's client.

Every request goes to the real sandbox except those a :class:`Corruption` matches: for those the proxy answers
nonsense instead — malformed JSON, an HTML page, a truncated body, wrong types — either *instead of* the request
(the site never sees it) or *after* forwarding it (the site changed, but the answer is garbage).
"""

from __future__ import annotations

import contextlib
import re
import threading
import time
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
    skip: int = 0
    """Let this many matching requests through untouched before the first corrupted one."""
    headers: tuple[tuple[str, str], ...] = ()
    """More headers of the nonsense answer."""
    kill: bool = False
    """Send the request to the site (it commits), then end the run as a SIGKILL would, before any answer: the
    commit-before-answer point of a kill (raises :class:`Killed`)."""
    late: float | None = None
    """Answer with a timeout at once, and send the request to the site this many seconds later, from another
    thread: a server that commits a request after the client gave up on it."""

    def matches(self, request: httpx.Request) -> bool:
        return request.method == self.method and re.search(self.path, request.url.path) is not None


class Killed(BaseException):
    """Stands for SIGKILL: nothing after it runs, no ``except Exception`` catches it."""


class CorruptingProxy:
    def __init__(self, corruption: Corruption) -> None:
        self.corruption = corruption
        self.corrupted = 0
        self.passed = 0
        self.late_requests: list[threading.Thread] = []

    def wait_for_late_requests(self, timeout: float = 30.0) -> None:
        for thread in self.late_requests:
            thread.join(timeout)
            assert not thread.is_alive(), "a late request did not finish"

    @staticmethod
    def _forward_later(request: httpx.Request, body: bytes, delay: float) -> None:
        time.sleep(delay)  # the server is slow to commit: that is the fault
        headers = [(k, v) for k, v in request.headers.multi_items() if k.lower() != "content-length"]
        httpx.request(request.method, request.url, headers=headers, content=body, timeout=30.0)

    def transport(self) -> httpx.MockTransport:
        return httpx.MockTransport(self.handle)

    async def handle(self, request: httpx.Request) -> httpx.Response:
        corruption = self.corruption
        wanted = corruption.times is None or self.corrupted < corruption.times
        if not (wanted and corruption.matches(request)):
            return await self.forward(request)
        if self.passed < corruption.skip:
            self.passed += 1
            return await self.forward(request)
        self.corrupted += 1
        if corruption.late is not None:
            body = await request.aread()
            late = threading.Thread(target=self._forward_later, args=(request, body, corruption.late), daemon=True)
            late.start()
            self.late_requests.append(late)
            raise httpx.ReadTimeout("timed out waiting for the answer", request=request)
        if corruption.forward or corruption.kill:
            await self.forward(request)
        if corruption.kill:
            raise Killed
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
