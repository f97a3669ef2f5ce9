# ruff: noqa: ASYNC109  (httpcore's network interface takes its timeouts as arguments)
"""The connection pool under the API client: httpx's, with a cheaper check of idle connections.

httpcore's pool looks at every connection each time a request starts or ends, and asks each idle one whether the
server has closed it (its socket is readable). Through the anyio backend that question rebuilds the stream's whole
table of attributes — a dict of closures and a ``getpeername`` system call — to find the socket, then polls it: with 8
connections, a dozen such lookups per request, about a tenth of the client's CPU per request (issue 17). Here the
socket is looked up once per connection and the readability poll is the same as httpcore's.

Everything else is httpx's ``AsyncHTTPTransport`` and its pool, unchanged (limits, keep-alive, connect retries, TLS,
exception mapping); only the pool's network backend is wrapped. If a future httpx or httpcore no longer exposes the
pool's backend where this expects it, the transport is used as it is (correct, only slower).
"""

from __future__ import annotations

import select
import socket
import typing

import httpcore
import httpx


def pooled_transport(*, limits: httpx.Limits, retries: int) -> httpx.AsyncHTTPTransport:
    """httpx's transport (its connection pool) with the idle-connection check of the module docstring."""
    transport = httpx.AsyncHTTPTransport(retries=retries, limits=limits)
    pool = getattr(transport, "_pool", None)
    backend = getattr(pool, "_network_backend", None)
    if isinstance(backend, httpcore.AsyncNetworkBackend):
        pool._network_backend = CachedSocketBackend(backend)  # type: ignore[union-attr]
    return transport


def is_readable(sock: socket.socket | None) -> bool:
    """httpcore's test: readable (the server closed, or sent something unasked) or gone."""
    fd = None if sock is None else sock.fileno()
    if fd is None or fd < 0:
        return True
    poll = select.poll()
    poll.register(fd, select.POLLIN)
    return bool(poll.poll(0))


class CachedSocketStream(httpcore.AsyncNetworkStream):
    """A network stream that answers ``is_readable`` from its socket, found once; the rest is the inner stream's."""

    def __init__(self, inner: httpcore.AsyncNetworkStream) -> None:
        self._inner = inner
        self._socket: socket.socket | None = inner.get_extra_info("socket")

    async def read(self, max_bytes: int, timeout: float | None = None) -> bytes:
        return await self._inner.read(max_bytes, timeout)

    async def write(self, buffer: bytes, timeout: float | None = None) -> None:
        await self._inner.write(buffer, timeout)

    async def aclose(self) -> None:
        await self._inner.aclose()

    async def start_tls(
        self,
        ssl_context: typing.Any,
        server_hostname: str | None = None,
        timeout: float | None = None,
    ) -> httpcore.AsyncNetworkStream:
        return CachedSocketStream(await self._inner.start_tls(ssl_context, server_hostname, timeout))

    def get_extra_info(self, info: str) -> typing.Any:
        if info == "is_readable" and self._socket is not None:
            return is_readable(self._socket)
        return self._inner.get_extra_info(info)


class CachedSocketBackend(httpcore.AsyncNetworkBackend):
    """Wraps the streams another backend opens in :class:`CachedSocketStream`."""

    def __init__(self, inner: httpcore.AsyncNetworkBackend) -> None:
        self._inner = inner

    async def connect_tcp(
        self,
        host: str,
        port: int,
        timeout: float | None = None,
        local_address: str | None = None,
        socket_options: typing.Iterable[typing.Any] | None = None,
    ) -> httpcore.AsyncNetworkStream:
        stream = await self._inner.connect_tcp(host, port, timeout, local_address, socket_options)
        return CachedSocketStream(stream)

    async def connect_unix_socket(
        self,
        path: str,
        timeout: float | None = None,
        socket_options: typing.Iterable[typing.Any] | None = None,
    ) -> httpcore.AsyncNetworkStream:
        return CachedSocketStream(await self._inner.connect_unix_socket(path, timeout, socket_options))

    async def sleep(self, seconds: float) -> None:
        await self._inner.sleep(seconds)
