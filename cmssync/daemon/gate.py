"""A gate in front of the HTTP transport, so that shutting down finishes the API calls in flight and starts none.

On SIGTERM the daemon closes the gate: requests already handed to the transport complete normally (their results
are recorded, and the state is written after each completed change as usual), and every later request fails at
once with :class:`ShuttingDown` without being sent. That error is not retryable, so each remaining action of the
run fails fast, ``apply`` returns, the state lock is released — all within about one request's latency. Nothing
is half-sent: the server never sees a request the daemon did not wait for.
"""

from __future__ import annotations

import httpx

from cmssync.errors import CmsSyncError


class ShuttingDown(CmsSyncError):
    """A request was not sent because the daemon is stopping."""


class RequestGate:
    def __init__(self) -> None:
        self.closed = False

    def close(self) -> None:
        self.closed = True

    def transport(self, concurrency: int) -> httpx.AsyncBaseTransport:
        """A transport like the client's default one (same pool limits, connect retries), behind this gate."""
        limits = httpx.Limits(max_connections=concurrency + 2, max_keepalive_connections=concurrency)
        return GatedTransport(httpx.AsyncHTTPTransport(retries=2, limits=limits), self)


class GatedTransport(httpx.AsyncBaseTransport):
    def __init__(self, inner: httpx.AsyncBaseTransport, gate: RequestGate) -> None:
        self._inner = inner
        self._gate = gate

    async def handle_async_request(self, request: httpx.Request) -> httpx.Response:
        if self._gate.closed:
            raise ShuttingDown(f"{request.method} {request.url.path}: not sent, the daemon is shutting down")
        return await self._inner.handle_async_request(request)

    async def aclose(self) -> None:
        await self._inner.aclose()
