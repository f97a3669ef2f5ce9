"""How many requests cmssync keeps in flight: a fixed number, or a limit that finds the site's knee by itself.

A real Concrete site is a small pool of PHP workers (4 on the measured site, 13–15 requests/s at best): beyond the
number of workers, more requests in flight only queue — throughput stays flat while every request gets slower
(300–440 ms each at 8 in flight against 60–80 ms alone). A fixed concurrency is therefore either too low for a big
server or pure queueing for a small one. :class:`AdaptiveLimit` measures instead, the way TCP Vegas and Netflix's
``concurrency-limits`` (VegasLimit) do:

* ``rtt_min`` is the shortest round trip seen lately (the site unloaded); each completed request gives a sample
  ``rtt``. With ``limit`` requests in flight, ``queue = limit × (1 − rtt_min / rtt)`` estimates how many of them
  wait in the site's queue instead of being served.
* Once per window (``limit`` completed requests), from the window's mean round trip: a queue under ``ALPHA`` means
  the site has room — the limit grows (doubling until the first sign of a queue, "slow start", then by one); a queue
  over ``BETA`` means requests are waiting — it shrinks by one. Between the two it holds: the site stays busy
  (throughput at its saturation) with a queue of a couple of requests, so latency stays near the unloaded one.
* A ``429``, ``503``, or a timeout is a drop: the limit halves at once (at most once per window) and slow start
  ends. The transport still honours ``Retry-After`` for everyone (``transport``).
* A window in which fewer than half the slots were used says nothing about the site (the caller had nothing more to
  send): the limit does not grow on it.
* ``rtt_min`` is measured again every ``PROBE_WINDOWS`` windows, the way BBR's ProbeRTT does: the limit is halved
  for one window (few enough requests that the site's queue drains), that window's shortest round trip becomes
  ``rtt_min``, and the limit is restored. So a site that got slower for good (another tenant, bigger pages) is not
  taken for a permanent queue, and a baseline taken under load cannot ratchet the limit up (which renewing it from
  an ordinary window would do: the queue would become the new "unloaded"). The probe costs about one window at half
  throughput in fifty.

* Reads and writes have a baseline each (``rtt_min`` per :attr:`Slot.kind`): a real Concrete site answers a small
  read in ~25 ms and a block write in ~100 ms unloaded, so against one shared baseline an apply — a few reads, then
  hundreds of writes — took every write for a queue of three quarters of the limit and held the limit at 4 until
  the first probe (~200 requests), whatever the site's capacity. The window's queue compares each sample with the
  baseline of its own kind: ``queue = limit × (1 − Σ rtt_min[kind] / Σ rtt)`` (for one kind, exactly Vegas). A
  kind's first samples are its own baseline until a lower one is seen; a probe window renews the baseline of the
  kinds it saw.

Limits: two kinds only (a heavy read, such as a children list with areas, still looks like a small queue against
a light one); the estimate needs a few dozen requests to settle, so a short run mostly runs at the starting limit.
``--concurrency N`` (``concurrency: N``) bypasses all of this with :class:`FixedLimit`.
"""

from __future__ import annotations

import asyncio
import collections
import contextlib
import contextvars
import time
from collections.abc import AsyncIterator, Iterator
from dataclasses import dataclass, field
from typing import Final

from cmssync.config import AUTO_MAX_CONCURRENCY

ALPHA: Final = 1.5
BETA: Final = 3.0
INITIAL_LIMIT: Final = 4
MAX_LIMIT: Final = AUTO_MAX_CONCURRENCY
"""Upper bound of the adaptive limit (and so of the connection pool): far above any PHP pool worth tuning for."""
PROBE_WINDOWS: Final = 50


@dataclass
class Slot:
    """One request's hold on the limiter; the transport marks what happened before releasing it."""

    started: float = field(default_factory=time.monotonic)
    in_flight: int = 0
    """Requests in flight when this one started (itself included)."""
    dropped: bool = False
    """The site refused for load (429/503) or did not answer in time."""
    ignored: bool = False
    """Not a sample of the site's service time (a failure unrelated to load, a cancelled request)."""
    kind: str = ""
    """``read`` or ``write`` (:func:`request_kind`): each kind has its own unloaded round trip."""


def request_kind(method: str) -> str:
    """The baseline a request of this HTTP method is measured against."""
    return "read" if method.upper() in ("GET", "HEAD", "") else "write"


_DEFERRED: contextvars.ContextVar[bool] = contextvars.ContextVar("cmssync_deferred_requests", default=False)


@contextlib.contextmanager
def deferred() -> Iterator[None]:
    """Requests sent inside (and from tasks started inside) wait behind every other caller of the limiter.

    For sweeps of many independent reads that nothing waits on one by one — the by-id reads of the objects a list
    walk skipped — so that the requests others are waiting on (the next page of another list walk, a level of the
    page tree) are not queued behind hundreds of them. A deferred request still gets every slot nobody else wants.
    """
    token = _DEFERRED.set(True)
    try:
        yield
    finally:
        _DEFERRED.reset(token)


class _Gate:
    """Admits callers while ``in_flight < limit``, in arrival order, deferred callers (:func:`deferred`) after all
    others."""

    def __init__(self) -> None:
        self.in_flight = 0
        self._waiters: collections.deque[asyncio.Future[None]] = collections.deque()
        self._deferred: collections.deque[asyncio.Future[None]] = collections.deque()

    async def enter(self, limit: int) -> None:
        deferred = _DEFERRED.get()
        if self.in_flight < limit and not self._waiters and not (deferred and self._deferred):
            self.in_flight += 1
            return
        queue = self._deferred if deferred else self._waiters
        waiter: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        queue.append(waiter)
        try:
            await waiter
        except asyncio.CancelledError:
            if waiter.done() and not waiter.cancelled():
                self.leave(limit)  # admitted at the moment it was cancelled: pass the place on
            else:
                with contextlib.suppress(ValueError):
                    queue.remove(waiter)
            raise

    def leave(self, limit: int) -> None:
        self.in_flight -= 1
        self.wake(limit)

    def wake(self, limit: int) -> None:
        for queue in (self._waiters, self._deferred):
            while queue and self.in_flight < limit:
                waiter = queue.popleft()
                if not waiter.done():
                    self.in_flight += 1
                    waiter.set_result(None)


class FixedLimit:
    """Exactly ``limit`` requests in flight at most (``--concurrency N``)."""

    def __init__(self, limit: int) -> None:
        if limit < 1:
            raise ValueError("the concurrency must be at least 1")
        self._limit = limit
        self._gate = _Gate()

    @property
    def limit(self) -> int:
        return self._limit

    @property
    def max_limit(self) -> int:
        return self._limit

    @contextlib.asynccontextmanager
    async def slot(self, method: str = "") -> AsyncIterator[Slot]:
        await self._gate.enter(self._limit)
        try:
            yield Slot(in_flight=self._gate.in_flight, kind=request_kind(method))
        finally:
            self._gate.leave(self._limit)

    def describe(self) -> dict[str, object]:
        return {"mode": "fixed", "limit": self._limit}


class AdaptiveLimit:
    """The Vegas-style limit of the module docstring."""

    def __init__(self, *, initial: int = INITIAL_LIMIT, minimum: int = 1, maximum: int = MAX_LIMIT) -> None:
        if not 1 <= minimum <= initial <= maximum:
            raise ValueError("need 1 <= minimum <= initial <= maximum")
        self._limit = initial
        self._minimum = minimum
        self._maximum = maximum
        self._gate = _Gate()
        self._rtt_min: dict[str, float] = {}
        """The unloaded round trip of each request kind."""
        self._slow_start = True
        self._window_rtts: list[float] = []
        self._window_kinds: list[str] = []
        self._window_busy = 0
        self._window_dropped = False
        self._windows = 0
        self._probing: int | None = None
        """The limit to restore after the probe window running now (None: no probe)."""
        self.changes = 0
        self.drops = 0
        self.highest = initial

    @property
    def limit(self) -> int:
        return self._limit

    @property
    def max_limit(self) -> int:
        return self._maximum

    @contextlib.asynccontextmanager
    async def slot(self, method: str = "") -> AsyncIterator[Slot]:
        await self._gate.enter(self._limit)
        slot = Slot(in_flight=self._gate.in_flight, kind=request_kind(method))
        try:
            yield slot
        except asyncio.CancelledError:
            slot.ignored = True
            raise
        finally:
            self._gate.in_flight -= 1
            self.record(slot, time.monotonic() - slot.started)
            self._gate.wake(self._limit)

    def record(self, slot: Slot, rtt: float) -> None:
        """One finished request: its round trip ``rtt`` (seconds) and what the transport marked on ``slot``."""
        if slot.dropped:
            self.drops += 1
            if self._probing is not None:
                self._limit, self._probing = self._probing, None
            if not self._window_dropped:
                self._window_dropped = True
                self._slow_start = False
                self._set(max(self._minimum, self._limit // 2))
            return
        if slot.ignored:
            return
        self._window_rtts.append(rtt)
        self._window_kinds.append(slot.kind or "read")
        if slot.in_flight * 2 >= self._limit:
            self._window_busy += 1
        if len(self._window_rtts) >= max(self._limit, 4):
            self._end_window()

    def _end_window(self) -> None:
        rtts, kinds, busy = self._window_rtts, self._window_kinds, self._window_busy
        self._window_rtts, self._window_kinds, self._window_busy, self._window_dropped = [], [], 0, False
        self._windows += 1
        lowest: dict[str, float] = {}
        for kind, rtt in zip(kinds, rtts, strict=True):
            lowest[kind] = min(rtt, lowest.get(kind, rtt))
        if self._probing is not None:
            self._rtt_min.update(lowest)
            self._limit, self._probing = self._probing, None
            return
        for kind, rtt in lowest.items():
            if rtt < self._rtt_min.get(kind, rtt + 1):
                self._rtt_min[kind] = rtt
        if self._windows % PROBE_WINDOWS == 0 and self._limit > self._minimum:
            self._probing = self._limit
            self._limit = max(self._minimum, self._limit // 2)
            return
        total = sum(rtts)
        expected = sum(self._rtt_min[kind] for kind in kinds)
        queue = self._limit * (1 - expected / total) if total > 0 else 0.0
        if queue > BETA:
            self._slow_start = False
            self._set(self._limit - 1)
        elif queue < ALPHA and busy * 2 >= len(rtts):
            self._set(self._limit * 2 if self._slow_start else self._limit + 1)

    def _set(self, limit: int) -> None:
        limit = max(self._minimum, min(self._maximum, limit))
        if limit != self._limit:
            self._limit = limit
            self.changes += 1
            self.highest = max(self.highest, limit)

    def describe(self) -> dict[str, object]:
        return {
            "mode": "auto",
            "limit": self._limit,
            "highest": self.highest,
            "rtt_min_ms": round(min(self._rtt_min.values()) * 1000, 1) if self._rtt_min else None,
            "rtt_min_ms_by_kind": {kind: round(rtt * 1000, 1) for kind, rtt in sorted(self._rtt_min.items())},
            "changes": self.changes,
            "drops": self.drops,
        }


def make_limiter(concurrency: int | None) -> FixedLimit | AdaptiveLimit:
    """A fixed limit for a number, the adaptive one for ``None`` (``concurrency: auto``)."""
    return AdaptiveLimit() if concurrency is None else FixedLimit(concurrency)
