"""A gate in front of the HTTP transport, so that shutting down finishes the API calls in flight and starts none.

On SIGTERM the daemon closes the gate: requests already handed to the transport complete normally (their results
are recorded, and the state is written after each completed change as usual), and every later request fails at
once with :class:`ShuttingDown` without being sent. That error is not retryable, so each remaining action of the
run fails fast, ``apply`` returns, the state lock is released — all within about one request's latency. Nothing
is half-sent: the server never sees a request the daemon did not wait for.

With ``shared_pool`` (the daemon's gate) it also keeps the connection pool under it for the daemon's life (one per
concurrency), so that runs share it: every new ``httpx`` transport builds a TLS context (loading the system's CA
certificates: 20–40 ms of CPU, before the run's first request can go out, even for a plain ``http://`` site), and
kept-alive connections need no new connect. A run's client closing its transport leaves the shared pool open; the daemon
closes it at shutdown (:meth:`RequestGate.aclose`), from the one event loop the daemon runs (a pool's connections
belong to the loop that opened them, so the pool cannot be shared across ``asyncio.run`` calls: without
``shared_pool`` each transport has its own pool, closed with its client).
"""

from __future__ import annotations

import asyncio

import httpx

from cmssync.api.pool import pooled_transport
from cmssync.errors import CmsSyncError


class ShuttingDown(CmsSyncError):
    """A request was not sent because the daemon is stopping."""


class RequestGate:
    def __init__(self, *, shared_pool: bool = False) -> None:
        self.closed = False
        self.shared_pool = shared_pool
        self._pools: dict[int, httpx.AsyncHTTPTransport] = {}
        self._loop: asyncio.AbstractEventLoop | None = None

    def close(self) -> None:
        self.closed = True

    def transport(self, concurrency: int) -> httpx.AsyncBaseTransport:
        """A transport like the client's default one (same pool limits, connect retries), behind this gate; with
        ``shared_pool`` its pool is shared with the other runs of the same concurrency (see the module docstring)."""
        limits = httpx.Limits(max_connections=concurrency + 2, max_keepalive_connections=concurrency)
        if not self.shared_pool:
            return GatedTransport(pooled_transport(retries=2, limits=limits), self, owned=True)
        loop = asyncio.get_running_loop()
        if loop is not self._loop:
            if self._pools:
                raise RuntimeError("a request gate's shared pools belong to one event loop")
            self._loop = loop
        pool = self._pools.get(concurrency)
        if pool is None:
            pool = self._pools[concurrency] = pooled_transport(retries=2, limits=limits)
        return GatedTransport(pool, self, owned=False)

    async def aclose(self) -> None:
        """Close the shared pools (at shutdown, from the loop that used them)."""
        pools, self._pools, self._loop = list(self._pools.values()), {}, None
        for pool in pools:
            await pool.aclose()


class GatedTransport(httpx.AsyncBaseTransport):
    def __init__(self, inner: httpx.AsyncBaseTransport, gate: RequestGate, *, owned: bool = True) -> None:
        self._inner = inner
        self._gate = gate
        self._owned = owned
        """False: the gate's shared pool, which outlives this transport's client."""

    async def handle_async_request(self, request: httpx.Request) -> httpx.Response:
        if self._gate.closed:
            raise ShuttingDown(f"{request.method} {request.url.path}: not sent, the daemon is shutting down")
        return await self._inner.handle_async_request(request)

    async def aclose(self) -> None:
        if self._owned:
            await self._inner.aclose()
