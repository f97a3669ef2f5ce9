"""When to try a call again, and how long to wait: the retry rules of design.md §5, on stamina.

Exponential backoff with jitter, bounded in attempts and in total time (:class:`RetryPolicy`); a ``Retry-After``
from the site replaces the computed wait, cut to ``retry_after_max``. What may be retried depends on the call's
:class:`Kind`: reads, updates and deletes on every temporary failure; creates only when the request certainly was not
processed (a connection that could not be opened). A create answered 429 is looked up before it is sent again
(``cmssync.api.transport``): some servers rate-limit after committing.
"""

from __future__ import annotations

import enum
import time
from collections.abc import AsyncIterator, Awaitable, Callable
from dataclasses import dataclass
from typing import TypeVar

import httpx
import stamina
from stamina import Attempt

from cmssync.api.errors import RateLimited, ServerError, TransportError, short

T = TypeVar("T")


class Kind(enum.Enum):
    READ = "read"
    UPDATE = "update"
    """PUT, and POSTs that are idempotent (move a file, change a password)."""
    DELETE = "delete"
    CREATE = "create"


@dataclass(frozen=True)
class RetryPolicy:
    """How hard to try. Tests shrink the waits; ``attempts=1`` turns retries off."""

    attempts: int = 5
    timeout: float = 60.0
    """Total time budget for one call, retries included (seconds)."""
    wait_initial: float = 0.2
    wait_max: float = 5.0
    wait_jitter: float = 0.5
    retry_after_max: float = 30.0
    """A longer ``Retry-After`` is cut to this (the daemon's next run will try again anyway)."""
    token_attempts: int = 3
    """Tries at the token endpoint: few, as asking for a token again only issues another one, and a refusal of the
    credentials is permanent; ``status`` raises it to see a site through heavy faults."""
    late_commit_polls: tuple[float, ...] = (0.5, 1.0, 2.0, 4.0)
    """Waits before each lookup of an object whose create timed out or lost its connection after being sent (the
    server may commit it late): 7.5 s in all, beyond a request's usual latency on a loaded site."""

    def attempts_for(self, cap: int | None = None) -> int:
        return max(1, min(self.attempts, cap) if cap else self.attempts)


def retry_hook(kind: Kind, policy: RetryPolicy) -> Callable[[Exception], bool | float]:
    """The stamina ``on=`` predicate for a call of ``kind``: False, True, or the wait the site asked for."""

    def wait_asked(exc: RateLimited | ServerError) -> bool | float:
        return min(exc.retry_after, policy.retry_after_max) if exc.retry_after is not None else True

    def should_retry(exc: Exception) -> bool | float:
        if isinstance(exc, RateLimited):
            return wait_asked(exc)
        if isinstance(exc, TransportError):
            return kind is not Kind.CREATE or not exc.maybe_processed
        if isinstance(exc, ServerError) and kind is not Kind.CREATE:
            return wait_asked(exc)
        return False

    return should_retry


def within(on: bool | float, left: float | None, wait_max: float) -> bool | float:
    """A retry hook's answer ``on`` (no, yes after stamina's backoff, yes after this wait) bounded by the run's
    deadline, ``left`` seconds away (None: no deadline): no retry once it has passed, and no wait beyond it
    (stamina's own backoff is at most ``wait_max``)."""
    if on is False or left is None:
        return on
    if left <= 0:
        return False
    if on is True:
        return True if left > wait_max else left
    return min(on, left)


def within_polls(polls: tuple[float, ...], left: float | None) -> tuple[float, ...]:
    """The late-commit lookups' waits (``RetryPolicy.late_commit_polls``) that end before the deadline."""
    if left is None:
        return polls
    kept: list[float] = []
    for wait in polls:
        left -= wait
        if left < 0:
            break
        kept.append(wait)
    return tuple(kept)


def attempts(
    policy: RetryPolicy, on: Callable[[Exception], bool | float], *, cap: int | None = None
) -> AsyncIterator[Attempt]:
    """``async for attempt in attempts(...): with attempt: ...`` under ``policy``."""
    return stamina.retry_context(
        on=on,
        attempts=policy.attempts_for(cap),
        timeout=policy.timeout if policy.timeout > 0 else None,
        wait_initial=policy.wait_initial,
        wait_max=policy.wait_max,
        wait_jitter=policy.wait_jitter,
    ).__aiter__()


async def retry_after(
    first: Exception,
    started: float,
    policy: RetryPolicy,
    on: Callable[[Exception], bool | float],
    attempt: Callable[[int], Awaitable[T]],
    *,
    cap: int | None = None,
) -> T:
    """Go on with a call whose first attempt, begun at ``started`` (``time.monotonic``), failed with ``first``.

    The first attempt of every call runs outside stamina (a retry context costs tens of microseconds, and nearly
    every call succeeds at once); this starts the retry loop only now and hands it ``first`` as its attempt 1, so
    what follows is what a loop started with the call would do: ``on`` decides, the waits and the retry hooks (log
    line, metrics) are stamina's, ``attempt(n)`` runs attempts 2…, and the time budget is what is left of
    ``policy.timeout`` since ``started``.
    """
    if on(first) is False:
        raise first
    budget: float | None = None
    if policy.timeout > 0:
        budget = max(policy.timeout - (time.monotonic() - started), 1e-6)  # 0 would mean "no retries" with a warning
    failure: Exception | None = first
    context = stamina.retry_context(
        on=on,
        attempts=policy.attempts_for(cap),
        timeout=budget,
        wait_initial=policy.wait_initial,
        wait_max=policy.wait_max,
        wait_jitter=policy.wait_jitter,
    )
    async for attempted in context:
        with attempted:
            if failure is not None:
                replayed, failure = failure, None
                raise replayed
            return await attempt(attempted.num)
    raise AssertionError("unreachable: stamina either returns or raises")  # pragma: no cover


def transport_error(exc: httpx.HTTPError, method: str, path: str) -> TransportError:
    """What an httpx failure means; ``maybe_processed`` is False only if no connection was made."""
    not_sent = isinstance(exc, httpx.ConnectError | httpx.ConnectTimeout | httpx.PoolTimeout)
    names: dict[type[httpx.HTTPError], str] = {
        httpx.ConnectError: "cannot connect",
        httpx.ConnectTimeout: "timed out connecting",
        httpx.ReadTimeout: "timed out waiting for the answer",
        httpx.WriteTimeout: "timed out sending the request",
        httpx.PoolTimeout: "timed out waiting for a free connection",
        httpx.RemoteProtocolError: "the connection was dropped",
        httpx.ReadError: "the connection failed while reading",
        httpx.WriteError: "the connection failed while sending",
    }
    what = names.get(type(exc), type(exc).__name__)
    detail = short(str(exc), 120)
    return TransportError(
        f"{what}: {detail}" if detail else what, maybe_processed=not not_sent, method=method, path=path
    )
