"""One HTTP exchange: build the request, send it through the connection pool, read the answer under the caps, count it.

The transport (``transport``) decides what to send and what an answer means; this module only moves bytes, and is
the client's hot path, so it is written for the CPU it costs per request (issue 17: the client's CPU per request had
become the limit of a fast site, one event loop for 8 requests in flight):

* **No ``httpx.AsyncClient.send`` per request.** The request is built once (``httpx.Request``: the URL parsed once,
  with its query) and handed to the transport the ``AsyncClient`` itself would use for that URL — its connection
  pool, or the proxy ``HTTP(S)_PROXY`` names, or a test's ``MockTransport``/respx mock — so the client's URL merging,
  second parse, auth and redirect machinery and cookie bookkeeping are skipped. What they did for cmssync is kept:
  the client's default headers (``Accept``, ``User-Agent``, ``Accept-Encoding``), its timeouts (as the request's
  ``timeout`` extension), no redirects followed, and its cookie jar: cookies a site set (the password grant logs in
  and sets a session cookie on a real site) are sent back, and ``Set-Cookie`` answers are stored — parsed only when
  an answer has one.
* **One response object.** The body is read from the stream (decoded) under :data:`MAX_BODY_BYTES` per answer and
  :data:`MAX_BUFFERED_BYTES` for all answers being read at once, and kept as ``bytes`` beside the streamed response
  (:class:`Answer`). A full ``httpx.Response`` holding the body is built only where one is needed: to explain a
  failure (``errors``), and for the token endpoint's answers (``auth`` reads them).

A transport failure is counted under the status ``"error"`` and re-raised as ``httpx.HTTPError`` for the caller to
map; an answer over a cap raises ``ResponseTooLarge`` (counted as ``"too-large"``). Every request, whatever its
outcome, is counted in ``RequestStats`` and logged at DEBUG with its path (never the query string or headers); the
log call is skipped when nothing would record it.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import httpx
import structlog
from structlog.testing import LogCapture

from cmssync.api.errors import ResponseTooLarge
from cmssync.api.slowcalls import SlowCallNotice
from cmssync.api.stats import RequestStats

log = structlog.get_logger("cmssync.api")

MAX_BODY_BYTES = 32 * 1024 * 1024
"""The largest API or token answer cmssync reads (file downloads excepted)."""
MAX_BUFFERED_BYTES = 2 * MAX_BODY_BYTES
"""The most the answers in flight may hold together while they are read: the cap of one answer times the number of
concurrent requests would otherwise bound nothing (8 hostile 200 MB answers read at once held 264 MiB)."""
_HOP_HEADERS = frozenset({"content-encoding", "content-length", "transfer-encoding"})
"""Headers that describe the body as it was sent, not as it was read (decoded): left out of a rebuilt response."""
_KEPT_EXTENSIONS = ("http_version", "reason_phrase")


@dataclass(slots=True)
class Answer:
    """An answer read whole: the (closed) streamed response for its status and headers, and its decoded body."""

    response: httpx.Response
    body: bytes

    @property
    def status(self) -> int:
        return self.response.status_code

    def full(self) -> httpx.Response:
        """A complete ``httpx.Response`` with the body (for ``errors`` and the token sources); built on demand."""
        response = self.response
        headers = [(k, v) for k, v in response.headers.multi_items() if k.lower() not in _HOP_HEADERS]
        return httpx.Response(
            response.status_code,
            headers=headers,
            content=self.body,
            request=response.request,
            extensions={k: v for k, v in response.extensions.items() if k in _KEPT_EXTENSIONS},
        )


def debug_logged() -> bool:
    """Whether a DEBUG line of ``cmssync.api`` would be recorded anywhere.

    Through the standard library (the command line's set-up) only if that logger is enabled for DEBUG — unless a
    test captures structlog's events (``capture_logs``), which sees every level. structlog's own filtering loggers
    (its default set-up) decide cheaply by themselves, so they are always called.
    """
    config = structlog.get_config()
    wrapper = config["wrapper_class"]
    if isinstance(wrapper, type) and issubclass(wrapper, structlog.stdlib.BoundLogger):
        if any(isinstance(p, LogCapture) for p in config["processors"]):
            return True
        return logging.getLogger("cmssync.api").isEnabledFor(logging.DEBUG)
    return True


class Exchange:
    """Sends requests through ``http``'s transport and reads their answers under the caps (module docstring)."""

    def __init__(self, http: httpx.AsyncClient, *, stats: RequestStats, max_body: int = MAX_BODY_BYTES) -> None:
        self.http = http
        self.stats = stats
        self.max_body = max_body
        self.max_buffered = max(max_body, MAX_BUFFERED_BYTES)
        self.buffered = 0
        """Bytes held right now by answers being read (all requests of this exchange together)."""
        self._headers = list(http.headers.multi_items())
        self._timeout = http.timeout.as_dict()

    async def send(
        self,
        method: str,
        url: str,
        route: str,
        path: str,
        *,
        params: Mapping[str, Any] | None = None,
        headers: Mapping[str, str] | None = None,
        json: Any = None,
        data: Mapping[str, Any] | None = None,
        files: Any = None,
    ) -> Answer:
        """Send one request and read its answer; raises ``httpx.HTTPError`` (counted) or ``ResponseTooLarge``."""
        started = time.monotonic()
        try:
            request = httpx.Request(
                method,
                url,
                params=params or None,
                headers=[*self._headers, *headers.items()] if headers else self._headers,
                json=json,
                data=data,
                files=files,
                extensions={"timeout": self._timeout},
            )
            cookies = self.http.cookies
            if cookies.jar:
                cookies.set_cookie_header(request)
            # The transport the client would pick for this URL (its pool, an environment proxy, a test's mock).
            transport = self.http._transport_for_url(request.url)
            with SlowCallNotice(method, path):  # "still waiting for GET /path (10 s)" while it is slow
                response = await transport.handle_async_request(request)
                response.request = request
                try:
                    body = await self._read_capped(response, method, path)
                finally:
                    await response.aclose()
            if "set-cookie" in response.headers:
                cookies.extract_cookies(response)
        except httpx.HTTPError as exc:
            self.count(method, route, path, "error", started, error=type(exc).__name__)
            raise
        except ResponseTooLarge:
            self.count(method, route, path, "too-large", started)
            raise
        self.count(method, route, path, response.status_code, started)
        return Answer(response, body)

    async def _read_capped(self, response: httpx.Response, method: str, path: str) -> bytes:
        """The decoded body, or ``ResponseTooLarge`` as soon as it passes a cap."""
        declared = response.headers.get("content-length", "")
        if declared.isdigit() and int(declared) > self.max_body:
            raise self._too_large(response, method, path, int(declared))
        chunks: list[bytes] = []
        size = 0
        try:
            async for chunk in response.aiter_bytes():
                size += len(chunk)
                self.buffered += len(chunk)
                if size > self.max_body:
                    raise self._too_large(response, method, path, size, at_least=True)
                if self.buffered > self.max_buffered:
                    raise self._too_large(response, method, path, size, at_least=True, together=self.buffered)
                chunks.append(chunk)
        finally:
            self.buffered -= size
        return chunks[0] if len(chunks) == 1 else b"".join(chunks)

    def _too_large(
        self,
        response: httpx.Response,
        method: str,
        path: str,
        size: int,
        *,
        at_least: bool = False,
        together: int | None = None,
    ) -> ResponseTooLarge:
        limit = self.max_body // (1024 * 1024)
        amount = f"{'at least ' if at_least else ''}{size} bytes"
        if together is not None:
            amount += f", {together} bytes with the other answers being read"
            limit = self.max_buffered // (1024 * 1024)
        return ResponseTooLarge(
            f"the answer is too large ({amount}; cmssync reads at most {limit} MiB from the API): "
            "the site, or a proxy in front of it, is not answering as Concrete's API does",
            method=method,
            path=path,
            status=response.status_code,
        )

    def count(
        self, method: str, route: str, path: str, status: int | str, started: float, error: str | None = None
    ) -> None:
        """Count one request in the stats and log it at DEBUG (path without query string; never headers)."""
        self.stats.record(method, route, status)
        if debug_logged():
            log.debug(
                "api.request",
                method=method,
                route=route,
                path=path,
                status=status,
                elapsed_ms=round((time.monotonic() - started) * 1000, 1),
                **({"error": error} if error else {}),
            )
