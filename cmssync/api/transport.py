"""One request to the API: bearer token, bounded concurrency, retries, error mapping, counting and logging.

Retry rules live in ``retry`` (what may be repeated depends on the call's kind). On top of them:

* a create that failed ambiguously (timeout, dropped connection, 5xx, and 429: a rate limiter placed after the
  application answers it once the object is made) raises ``OutcomeUnknown`` and is never sent again without a
  lookup (``sync.engine.create_verified``); a failure to get a token is not ambiguous (the request was never sent);
* a DELETE that answers "not found" on a retry after an ambiguous attempt has succeeded (the first attempt did it);
* a 401 that rejects the token triggers one re-authentication and one resend within the same attempt;
* a 429/503 with ``Retry-After`` pauses every call of this client, not only the refused one;
* the run's deadline (:attr:`Transport.deadline`, from ``run_timeout``): no retry wait, back-off pause or late-commit
  lookup wait goes past it and none starts after it; a call whose retries it cut raises ``DeadlineReached`` (it
  may or may not have happened: the next run reads the site, as after a lost answer);
* a limiter (``limiter``) bounds the requests in flight: ``concurrency`` of them, or, with ``concurrency=None``
  (``auto``, the default of the settings), a limit that follows the site's measured queue; each request is counted
  in ``RequestStats`` and logged at DEBUG with its path (never the query string or headers);
* an API or token answer is read as a stream and refused beyond :data:`MAX_BODY_BYTES` (``ResponseTooLarge``,
  not retried), so a hostile or broken server cannot make cmssync hold an unbounded body in memory: the largest
  real answer (a page with every area and block) is a few hundred KiB. File downloads (:meth:`Transport.stream_to`)
  are written to their sink as they arrive and are not capped. Sending and reading are ``exchange``'s.

The common case costs little CPU (issue 17): the first attempt of a call runs outside stamina, and only a failure
starts stamina's retry loop, which is handed that failure as its first attempt (``retry.retry_after``) — so the
policy, the waits, the retry log lines and the total time budget are those of a loop started with the call.
"""

from __future__ import annotations

import asyncio
import datetime as dt
import time
from collections.abc import Callable, Collection, Mapping
from contextlib import AbstractContextManager
from email.utils import parsedate_to_datetime
from typing import IO, Any
from urllib.parse import quote

import httpx
import structlog

from cmssync.api.auth import TOKEN_PATH, TokenSource
from cmssync.api.errors import (
    AuthenticationFailed,
    DeadlineReached,
    NotFound,
    OutcomeUnknown,
    RateLimited,
    ServerError,
    TransportError,
    UnexpectedResponse,
    download_error,
    error_for_response,
    error_from_messages,
    error_list_messages,
    is_token_rejection,
    json_bytes,
    looks_like_html,
    short,
)
from cmssync.api.exchange import MAX_BODY_BYTES, MAX_BUFFERED_BYTES, Answer, Exchange
from cmssync.api.limiter import Slot, make_limiter
from cmssync.api.pool import pooled_transport
from cmssync.api.retry import (
    Kind,
    RetryPolicy,
    attempts,
    retry_after,
    retry_hook,
    transport_error,
    within,
    within_polls,
)
from cmssync.api.stats import RequestStats
from cmssync.errors import ApiError

log = structlog.get_logger("cmssync.api")

USER_AGENT = "cmssync (+https://github.com/cmssync)"
__all__ = ["DELETED_ON_RETRY", "MAX_BODY_BYTES", "MAX_BUFFERED_BYTES", "Transport", "Upload"]


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
        self.api_prefix = "/" + api_prefix.strip("/") if api_prefix.strip("/") else ""
        self.auth = auth
        self.retry = retry or RetryPolicy()
        self.stats = stats if stats is not None else RequestStats()
        self.limiter = make_limiter(concurrency)
        self.concurrency = self.limiter.max_limit
        """The most requests that can ever be in flight (the adaptive limit's ceiling under ``auto``)."""
        self._paused_until = 0.0
        self._site_date: tuple[str, float] | None = None
        """The last answer's ``Date`` header and when it arrived (``time.monotonic``): :meth:`site_now`."""
        self.deadline: float | None = None
        """The run's deadline (``time.monotonic``), set by an apply with ``run_timeout``: see the module doc."""
        limits = httpx.Limits(max_connections=self.concurrency + 2, max_keepalive_connections=self.concurrency)
        self.http = httpx.AsyncClient(
            timeout=httpx.Timeout(timeout),
            limits=limits,
            transport=transport or pooled_transport(retries=2, limits=limits),
            headers={"Accept": "application/json", "User-Agent": USER_AGENT},
            follow_redirects=False,
        )
        self.exchange = Exchange(self.http, stats=self.stats, max_body=max_body)

    @property
    def max_body(self) -> int:
        return self.exchange.max_body

    @property
    def max_buffered(self) -> int:
        return self.exchange.max_buffered

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
        expected: Collection[int] = (),
        **path_params: Any,
    ) -> Any:
        """Send one API call and return its JSON body (or :data:`DELETED_ON_RETRY`).

        ``route`` is a template relative to the API prefix (``/pages/{page_id}``); ``path_params`` fill it in, each
        quoted as one path segment. Raises an :class:`~cmssync.errors.ApiError` subclass. An error status in
        ``expected`` is the site's answer, not a fault: raised at once, never tried again.
        """
        path = self.api_prefix + route.format(**{k: quote(str(v), safe="") for k, v in path_params.items()})
        ambiguous = cut = False
        policy = self.retry

        async def attempt(number: int) -> Any:
            nonlocal ambiguous
            if number > 1:
                self.stats.record_retry()
            try:
                return await self._once(method, route, path, params=params, json=json, form=form, upload=upload)
            except NotFound:
                if kind is Kind.DELETE and ambiguous:
                    raise _Deleted() from None
                raise
            except (TransportError, ServerError, RateLimited) as exc:
                # A 429 normally means "not processed", but a rate limiter behind the application answers it after
                # the commit: a create is never sent again on a 429 without looking first (create_verified).
                if not isinstance(exc, TransportError) or exc.maybe_processed:
                    ambiguous = True
                if kind is Kind.CREATE and ambiguous:
                    left = self.left()
                    late = left is not None and left <= 0
                    polls = policy.late_commit_polls if isinstance(exc, TransportError) else ()
                    raise (DeadlineReached if late else OutcomeUnknown)(
                        f"the create may or may not have happened ({exc.reason}); read the site to find out",
                        method=method,
                        path=path,
                        status=exc.status,
                        late_commit_polls=within_polls(polls, left),
                    ) from exc
                raise

        started = time.monotonic()
        try:
            try:
                return await attempt(1)
            except Exception as exc:  # the rare case: stamina decides, from this failure on
                first = exc
            hook = retry_hook(kind, policy)

            def on(exc: Exception) -> bool | float:
                nonlocal cut
                wanted = getattr(exc, "status", None) not in expected and hook(exc)
                bounded = within(wanted, self.left(), policy.wait_max)
                cut = wanted is not False and bounded is False
                return bounded

            return await retry_after(first, started, policy, on, attempt)
        except (TransportError, ServerError, RateLimited) as exc:
            if not cut:
                raise
            raise DeadlineReached(
                f"run_timeout reached before the site answered ({exc.reason}): it may or may not have happened, "
                "and it is not tried again in this run; the next run reads the site to find out",
                method=method,
                path=path,
                status=exc.status,
            ) from exc
        except _Deleted:
            return DELETED_ON_RETRY
        except _TokenTrouble as trouble:
            raise trouble.error from trouble.error.__cause__

    async def post_token(self, url: str, form: Mapping[str, str]) -> httpx.Response:
        """POST a form to the token endpoint (no bearer); retried (at most 3 tries) on transport failures, 429 and 5xx.

        Asking for a token again is harmless: it only issues another token. The last answer is returned whatever it
        is, for the caller to explain (a real server's 500 for an unknown client id with the password grant is
        permanent, and means a wrong client id).
        """
        policy = self.retry
        tries = policy.attempts_for(policy.token_attempts)

        async for attempt in attempts(policy, self._read_retries(policy), cap=policy.token_attempts):
            with attempt:
                if attempt.num > 1:
                    self.stats.record_retry()
                self.stats.record_token_request()
                response = (await self._send("POST", url, TOKEN_PATH, TOKEN_PATH, data=dict(form))).full()
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

        async for attempt in attempts(policy, self._read_retries(policy)):
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
                        self.exchange.count("GET", route, path, response.status_code, started)
                        raise self._note_pressure(download_error(response, path=path))
                    written = 0
                    async for chunk in response.aiter_bytes(1 << 16):
                        sink.write(chunk)
                        written += len(chunk)
            except httpx.HTTPError as exc:
                self.exchange.count("GET", route, path, "error", started)
                raise transport_error(exc, "GET", path) from exc
            self.exchange.count("GET", route, path, 200, started)
            return written

    # -- backing off together -------------------------------------------------------------------------------------

    def site_now(self) -> dt.datetime | None:
        """The site's own clock now, from the last answer's ``Date`` header (the clock its dates come from), or None
        when no answer carried a readable one. Parsed only when asked (most callers never do)."""
        if self._site_date is None:
            return None
        header, received = self._site_date
        try:
            date = parsedate_to_datetime(header)
        except (TypeError, ValueError):
            return None
        if date.tzinfo is None:
            date = date.replace(tzinfo=dt.UTC)
        return date + dt.timedelta(seconds=time.monotonic() - received)

    def _read_retries(self, policy: RetryPolicy) -> Callable[[Exception], bool | float]:
        """The retry hook of a read made outside :meth:`call` (a token, a download), bounded by the deadline."""
        hook = retry_hook(Kind.READ, policy)
        return lambda exc: within(hook(exc), self.left(), policy.wait_max)

    def left(self) -> float | None:
        """Seconds until the run's deadline (negative once past), or None without one."""
        return self.deadline - time.monotonic() if self.deadline is not None else None

    async def _cool_down(self) -> None:
        """Wait while the site has asked everyone to back off (a 429 or 503 with ``Retry-After``), never past the
        run's deadline."""
        delay = self._paused_until - time.monotonic()
        left = self.left()
        if left is not None:
            delay = min(delay, left)
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
        async with self.limiter.slot(method) as slot:
            token = await self._token()
            slot.started = time.monotonic()  # the site's time, without waiting for a token
            answer = await self._send_body(method, path, route, token, params, json, form, upload, slot)
            date = answer.response.headers.get("date")
            if date:
                self._site_date = (date, time.monotonic())
            if self.auth is not None and _rejects_token(answer):
                if not self.auth.can_renew or token is None:
                    raise self._auth_failed(answer.full(), method, path, renewable=False)
                await self.auth.rejected(token)
                self.stats.record_reauthentication()
                log.debug("api.reauthenticate", method=method, route=route)
                token = await self._token()
                answer = await self._send_body(method, path, route, token, params, json, form, upload, slot)
                if _rejects_token(answer):
                    await self.auth.rejected(token or "")
                    raise self._auth_failed(answer.full(), method, path, renewable=True)
            return self._result(answer, method, path)

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
    ) -> Answer:
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
        slot.dropped = response.status in (429, 503)
        return response

    async def _send(self, method: str, url: str, route: str, path: str, **kwargs: Any) -> Answer:
        try:
            return await self.exchange.send(method, url, route, path, **kwargs)
        except httpx.HTTPError as exc:
            raise transport_error(exc, method, path) from exc

    def _result(self, answer: Answer, method: str, path: str) -> Any:
        if not 200 <= answer.status < 300:
            raise self._note_pressure(error_for_response(answer.full(), method=method, path=path))
        body = json_bytes(answer.body)
        if body is None:
            response = answer.full()
            what = "an HTML page" if looks_like_html(response) else f"{short(response.text, 80)!r}"
            raise UnexpectedResponse(f"expected JSON, got {what}", method=method, path=path, status=answer.status)
        messages = error_list_messages(body)
        if messages is not None:
            # Block validation fails with status 200 and an ErrorList body on a real site.
            raise error_from_messages(messages, status=answer.status, method=method, path=path)
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


def _rejects_token(answer: Answer) -> bool:
    return answer.status == 401 and is_token_rejection(answer.full())
