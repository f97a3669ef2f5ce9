"""One request to the API: bearer token, bounded concurrency, retries, error mapping, counting and logging.

Retry rules live in ``retry`` (what may be repeated depends on the call's kind). On top of them:

* a create that failed ambiguously (timeout, dropped connection, 5xx) raises ``OutcomeUnknown`` and is never sent
  again; a failure to get a token is not ambiguous (the request was never sent);
* a DELETE that answers "not found" on a retry after an ambiguous attempt has succeeded (the first attempt did it);
* a 401 that rejects the token triggers one re-authentication and one resend within the same attempt;
* a 429/503 with ``Retry-After`` pauses every call of this client, not only the refused one;
* a limiter (``limiter``) bounds the requests in flight: ``concurrency`` of them, or, with ``concurrency=None``
  (``auto``, the default of the settings), a limit that follows the site's measured queue; each request is counted
  in ``RequestStats`` and logged at DEBUG with its path (never the query string or headers);
* an API or token answer is read as a stream and refused beyond :data:`MAX_BODY_BYTES` (``ResponseTooLarge``,
  not retried), so a hostile or broken server cannot make cmssync hold an unbounded body in memory: the largest
  real answer (a page with every area and block) is a few hundred KiB. File downloads (:meth:`Transport.stream_to`)
  are written to their sink as they arrive and are not capped.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable, Mapping
from contextlib import AbstractContextManager
from typing import IO, Any
from urllib.parse import quote

import httpx
import structlog

from cmssync.api.auth import TOKEN_PATH, TokenSource
from cmssync.api.errors import (
    AuthenticationFailed,
    NotFound,
    OutcomeUnknown,
    RateLimited,
    ResponseTooLarge,
    ServerError,
    TransportError,
    UnexpectedResponse,
    error_for_response,
    error_from_messages,
    error_list_messages,
    is_token_rejection,
    json_body,
    looks_like_html,
    short,
)
from cmssync.api.limiter import Slot, make_limiter
from cmssync.api.retry import Kind, RetryPolicy, attempts, retry_hook, transport_error
from cmssync.api.slowcalls import SlowCallNotice
from cmssync.api.stats import RequestStats
from cmssync.errors import ApiError

log = structlog.get_logger("cmssync.api")

USER_AGENT = "cmssync (+https://github.com/cmssync)"
MAX_BODY_BYTES = 32 * 1024 * 1024
"""The largest API or token answer cmssync reads (file downloads excepted)."""
MAX_BUFFERED_BYTES = 2 * MAX_BODY_BYTES
"""The most the answers in flight may hold together while they are read: the cap of one answer times the number of
concurrent requests would otherwise bound nothing (8 hostile 200 MB answers read at once held 264 MiB)."""
_HOP_HEADERS = frozenset({"content-encoding", "content-length", "transfer-encoding"})
"""Headers that describe the body as it was sent, not as it was read (decoded): left out of a capped response."""


Upload = Callable[[], AbstractContextManager[Mapping[str, tuple[str, IO[bytes], str]]]]
"""Opens the multipart files afresh for each attempt (a stream cannot be resent)."""


class _Deleted(Exception):
    """Internal: a retried DELETE found the object already gone."""


class _TokenTrouble(Exception):
    """Internal: getting a token failed, so the request itself was not sent (not ambiguous, not retried again:
    the token request has its own retries)."""

    def __init__(self, error: ApiError) -> None:
        super().__init__(str(error))
        self.error = error


DELETED_ON_RETRY: Any = object()
"""Returned by :meth:`Transport.call` for a DELETE whose retry found the object gone."""


class Transport:
    """Owns the ``httpx.AsyncClient``: connection pool, keep-alive, timeouts, and everything in the module doc."""

    def __init__(
        self,
        base_url: str,
        *,
        api_prefix: str,
        auth: TokenSource | None,
        concurrency: int | None = 8,
        timeout: float = 30.0,
        retry: RetryPolicy | None = None,
        stats: RequestStats | None = None,
        transport: httpx.AsyncBaseTransport | None = None,
        max_body: int = MAX_BODY_BYTES,
    ) -> None:
        self.base_url = base_url.rstrip("/")
        self.max_body = max_body
        self.max_buffered = max(max_body, MAX_BUFFERED_BYTES)
        self._buffered = 0
        """Bytes held right now by answers being read (all requests of this transport together)."""
        self.api_prefix = "/" + api_prefix.strip("/") if api_prefix.strip("/") else ""
        self.auth = auth
        self.retry = retry or RetryPolicy()
        self.stats = stats if stats is not None else RequestStats()
        self.limiter = make_limiter(concurrency)
        self.concurrency = self.limiter.max_limit
        """The most requests that can ever be in flight (the adaptive limit's ceiling under ``auto``)."""
        self._paused_until = 0.0
        limits = httpx.Limits(max_connections=self.concurrency + 2, max_keepalive_connections=self.concurrency)
        self.http = httpx.AsyncClient(
            timeout=httpx.Timeout(timeout),
            limits=limits,
            transport=transport or httpx.AsyncHTTPTransport(retries=2, limits=limits),
            headers={"Accept": "application/json", "User-Agent": USER_AGENT},
            follow_redirects=False,
        )

    @property
    def api_url(self) -> str:
        return self.base_url + self.api_prefix

    async def aclose(self) -> None:
        await self.http.aclose()

    # -- public ---------------------------------------------------------------------------------------------------

    async def call(
        self,
        method: str,
        route: str,
        *,
        kind: Kind,
        params: Mapping[str, Any] | None = None,
        json: Any = None,
        form: Mapping[str, str] | None = None,
        upload: Upload | None = None,
        **path_params: Any,
    ) -> Any:
        """Send one API call and return its JSON body (or :data:`DELETED_ON_RETRY`).

        ``route`` is a template relative to the API prefix (``/pages/{page_id}``); ``path_params`` fill it in, each
        quoted as one path segment. Raises an :class:`~cmssync.errors.ApiError` subclass.
        """
        path = self.api_prefix + route.format(**{k: quote(str(v), safe="") for k, v in path_params.items()})
        ambiguous = False
        policy = self.retry
        try:
            async for attempt in attempts(policy, retry_hook(kind, policy)):
                with attempt:
                    if attempt.num > 1:
                        self.stats.record_retry()
                    try:
                        return await self._once(method, route, path, params=params, json=json, form=form, upload=upload)
                    except NotFound:
                        if kind is Kind.DELETE and ambiguous:
                            raise _Deleted() from None
                        raise
                    except (TransportError, ServerError) as exc:
                        if not isinstance(exc, TransportError) or exc.maybe_processed:
                            ambiguous = True
                        if kind is Kind.CREATE and ambiguous:
                            raise OutcomeUnknown(
                                f"the create may or may not have happened ({exc.reason}); read the site to find out",
                                method=method,
                                path=path,
                                status=exc.status,
                                late_commit_polls=policy.late_commit_polls if isinstance(exc, TransportError) else (),
                            ) from exc
                        raise
        except _Deleted:
            return DELETED_ON_RETRY
        except _TokenTrouble as trouble:
            raise trouble.error from trouble.error.__cause__
        raise AssertionError("unreachable: stamina either returns or raises")  # pragma: no cover

    async def post_token(self, url: str, form: Mapping[str, str]) -> httpx.Response:
        """POST a form to the token endpoint (no bearer); retried (at most 3 tries) on transport failures, 429 and 5xx.

        Asking for a token again is harmless: it only issues another token. The last answer is returned whatever it
        is, for the caller to explain (a real server's 500 for an unknown client id with the password grant is
        permanent, and means a wrong client id).
        """
        policy = self.retry
        tries = policy.attempts_for(policy.token_attempts)

        async for attempt in attempts(policy, retry_hook(Kind.READ, policy), cap=policy.token_attempts):
            with attempt:
                if attempt.num > 1:
                    self.stats.record_retry()
                self.stats.record_token_request()
                response = await self._send("POST", url, TOKEN_PATH, TOKEN_PATH, data=dict(form))
                if (response.status_code == 429 or response.status_code >= 500) and attempt.num < tries:
                    raise error_for_response(response, method="POST", path=TOKEN_PATH, api=False)
                return response
        raise AssertionError("unreachable")  # pragma: no cover

    async def stream_to(self, url: str, sink: IO[bytes], *, route: str = "download") -> int:
        """GET ``url`` (absolute, no bearer token: file URLs are public) and write the body to ``sink``.

        Retried like a read; ``sink`` is rewound and truncated before each attempt.
        """
        path = httpx.URL(url).path
        policy = self.retry

        async for attempt in attempts(policy, retry_hook(Kind.READ, policy)):
            with attempt:
                if attempt.num > 1:
                    self.stats.record_retry()
                sink.seek(0)
                sink.truncate()
                return await self._stream_once(url, path, route, sink)
        raise AssertionError("unreachable")  # pragma: no cover

    async def _stream_once(self, url: str, path: str, route: str, sink: IO[bytes]) -> int:
        await self._cool_down()
        async with self.limiter.slot() as slot:
            slot.ignored = True  # a download's time depends on the file's size, not on the site's queue
            started = time.monotonic()
            try:
                async with self.http.stream("GET", url) as response:
                    if response.status_code != 200:
                        await response.aread()
                        self._count("GET", route, path, response.status_code, started)
                        raise self._note_pressure(error_for_response(response, method="GET", path=path))
                    written = 0
                    async for chunk in response.aiter_bytes(1 << 16):
                        sink.write(chunk)
                        written += len(chunk)
            except httpx.HTTPError as exc:
                self._count("GET", route, path, "error", started)
                raise transport_error(exc, "GET", path) from exc
            self._count("GET", route, path, 200, started)
            return written

    # -- backing off together -------------------------------------------------------------------------------------

    async def _cool_down(self) -> None:
        """Wait while the site has asked everyone to back off (a 429 or 503 with ``Retry-After``)."""
        delay = self._paused_until - time.monotonic()
        if delay > 0:
            await asyncio.sleep(delay)

    def _note_pressure(self, error: ApiError) -> ApiError:
        """After a 429/503 with ``Retry-After``, hold back *every* call, not only the one that was refused."""
        after = getattr(error, "retry_after", None)
        if isinstance(error, RateLimited | ServerError) and error.status in (429, 503) and after:
            pause = min(after, self.retry.retry_after_max)
            self._paused_until = max(self._paused_until, time.monotonic() + pause)
        return error

    # -- one attempt ----------------------------------------------------------------------------------------------

    async def _once(
        self,
        method: str,
        route: str,
        path: str,
        *,
        params: Mapping[str, Any] | None,
        json: Any,
        form: Mapping[str, str] | None,
        upload: Upload | None,
    ) -> Any:
        await self._cool_down()
        async with self.limiter.slot() as slot:
            token = await self._token()
            slot.started = time.monotonic()  # the site's time, without waiting for a token
            response = await self._send_body(method, path, route, token, params, json, form, upload, slot)
            if is_token_rejection(response) and self.auth is not None:
                if not self.auth.can_renew or token is None:
                    raise self._auth_failed(response, method, path, renewable=False)
                await self.auth.rejected(token)
                self.stats.record_reauthentication()
                log.debug("api.reauthenticate", method=method, route=route)
                token = await self._token()
                response = await self._send_body(method, path, route, token, params, json, form, upload, slot)
                if is_token_rejection(response):
                    await self.auth.rejected(token or "")
                    raise self._auth_failed(response, method, path, renewable=True)
            return self._result(response, method, path)

    async def _token(self) -> str | None:
        if self.auth is None:
            return None
        try:
            return await self.auth.token(self.post_token)
        except ApiError as exc:
            raise _TokenTrouble(exc) from exc

    async def _send_body(
        self,
        method: str,
        path: str,
        route: str,
        token: str | None,
        params: Mapping[str, Any] | None,
        json: Any,
        form: Mapping[str, str] | None,
        upload: Upload | None,
        slot: Slot,
    ) -> httpx.Response:
        headers = {"Authorization": f"Bearer {token}"} if token else {}
        url = self.base_url + path
        try:
            if upload is not None:
                slot.ignored = True  # an upload's time is its size's
                with upload() as files:
                    response = await self._send(
                        method, url, route, path, params=params, data=form, files=files, headers=headers
                    )
            else:
                response = await self._send(
                    method, url, route, path, params=params, json=json, data=form, headers=headers
                )
        except TransportError as exc:
            # A timeout is the site failing under load; a refused or dropped connection says nothing about its queue.
            slot.dropped = isinstance(exc.__cause__, httpx.TimeoutException)
            slot.ignored = True
            raise
        slot.dropped = response.status_code in (429, 503)
        return response

    async def _send(self, method: str, url: str, route: str, path: str, **kwargs: Any) -> httpx.Response:
        started = time.monotonic()
        if kwargs.get("json") is None:
            kwargs.pop("json", None)
        try:
            request = self.http.build_request(method, url, **kwargs)
            with SlowCallNotice(method, path):  # "still waiting for GET /path (10 s)" while it is slow
                response = await self.http.send(request, stream=True)
                try:
                    response = await self._read_capped(response, method, path)
                finally:
                    await response.aclose()
        except httpx.HTTPError as exc:
            self._count(method, route, path, "error", started, error=type(exc).__name__)
            raise transport_error(exc, method, path) from exc
        except ResponseTooLarge:
            self._count(method, route, path, "too-large", started)
            raise
        self._count(method, route, path, response.status_code, started)
        return response

    async def _read_capped(self, response: httpx.Response, method: str, path: str) -> httpx.Response:
        """The answer with its body read, or ``ResponseTooLarge`` as soon as it passes :attr:`max_body` bytes."""
        declared = response.headers.get("content-length", "")
        if declared.isdigit() and int(declared) > self.max_body:
            raise self._too_large(response, method, path, int(declared))
        chunks: list[bytes] = []
        size = 0
        try:
            async for chunk in response.aiter_bytes(1 << 16):
                size += len(chunk)
                self._buffered += len(chunk)
                if size > self.max_body:
                    raise self._too_large(response, method, path, size, at_least=True)
                if self._buffered > self.max_buffered:
                    raise self._too_large(response, method, path, size, at_least=True, together=self._buffered)
                chunks.append(chunk)
        finally:
            self._buffered -= size
        headers = [(k, v) for k, v in response.headers.multi_items() if k.lower() not in _HOP_HEADERS]
        return httpx.Response(
            response.status_code,
            headers=headers,
            content=b"".join(chunks),
            request=response.request,
            extensions={k: v for k, v in response.extensions.items() if k in ("http_version", "reason_phrase")},
        )

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

    def _count(
        self, method: str, route: str, path: str, status: int | str, started: float, error: str | None = None
    ) -> None:
        self.stats.record(method, route, status)
        log.debug(
            "api.request",
            method=method,
            route=route,
            path=path,
            status=status,
            elapsed_ms=round((time.monotonic() - started) * 1000, 1),
            **({"error": error} if error else {}),
        )

    def _result(self, response: httpx.Response, method: str, path: str) -> Any:
        if not 200 <= response.status_code < 300:
            raise self._note_pressure(error_for_response(response, method=method, path=path))
        body = json_body(response)
        if body is None:
            what = "an HTML page" if looks_like_html(response) else f"{short(response.text, 80)!r}"
            raise UnexpectedResponse(
                f"expected JSON, got {what}", method=method, path=path, status=response.status_code
            )
        if error_list_messages(body) is not None:
            # Block validation fails with status 200 and an ErrorList body on a real site.
            messages = error_list_messages(body) or []
            raise error_from_messages(messages, status=response.status_code, method=method, path=path)
        return body

    def _auth_failed(self, response: httpx.Response, method: str, path: str, *, renewable: bool) -> ApiError:
        error = error_for_response(response, method=method, path=path)
        how = "even after re-authenticating" if renewable else "and a static token cannot be renewed"
        return AuthenticationFailed(
            f"the site rejected the access token {how}: {error.reason}",
            method=method,
            path=path,
            status=response.status_code,
        )
