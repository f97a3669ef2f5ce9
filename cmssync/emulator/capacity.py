"""A capacity model for the sandbox: a fixed pool of workers, like PHP-FPM in front of a real Concrete site.

With ``workers=N, service_ms=M`` every API request (not the ``/__emulator`` control routes) waits for one of N
workers, holds it for M milliseconds plus its own handling time, then frees it. So the site answers at most about
``N / M`` requests per millisecond; beyond N requests in flight, the extra ones queue and their latency grows
while throughput stays flat — the knee a client's concurrency should find (measured on a real 9.3 site with 4
workers: 60–80 ms per request alone, 300–440 ms each at 8 in flight for 7% more throughput). The global injected
latency (``latency_ms``) is spent before the queue, like the network in front of the pool.

Off by default (``workers=0``): requests are served as they come. The pool records its waiting time and the
largest queue and the most busy workers it saw, reported under ``capacity`` in ``/__emulator/stats``.
"""

from __future__ import annotations

import asyncio
import contextlib
import time
from collections.abc import AsyncIterator
from typing import Any


class WorkerPool:
    """N workers, each held ``service_ms`` per request; ``workers == 0`` means unlimited (no model)."""

    def __init__(self, workers: int = 0, service_ms: int = 0) -> None:
        if workers < 0 or service_ms < 0:
            raise ValueError("workers and service_ms must not be negative")
        self.workers = workers
        self.service_ms = service_ms
        self._semaphore: asyncio.Semaphore | None = None  # made in the server's event loop, on first use
        self.waiting = 0
        self.max_waiting = 0
        self.busy = 0
        self.max_busy = 0
        self.served = 0
        self.wait_seconds = 0.0

    @property
    def enabled(self) -> bool:
        return self.workers > 0

    @contextlib.asynccontextmanager
    async def worker(self) -> AsyncIterator[None]:
        """Hold a worker while the body runs (and for ``service_ms`` before it); free when the model is off."""
        if not self.enabled:
            yield
            return
        if self._semaphore is None:
            self._semaphore = asyncio.Semaphore(self.workers)
        queued = time.monotonic()
        self.waiting += 1
        self.max_waiting = max(self.max_waiting, self.waiting)
        try:
            await self._semaphore.acquire()
        finally:
            self.waiting -= 1
        self.busy += 1
        self.max_busy = max(self.max_busy, self.busy)
        try:
            self.wait_seconds += time.monotonic() - queued
            self.served += 1
            if self.service_ms:
                await asyncio.sleep(self.service_ms / 1000)
            yield
        finally:
            self.busy -= 1
            self._semaphore.release()

    def describe(self) -> dict[str, Any]:
        return {
            "workers": self.workers,
            "service_ms": self.service_ms,
            "served": self.served,
            "max_busy": self.max_busy,
            "max_waiting": self.max_waiting,
            "wait_seconds": round(self.wait_seconds, 3),
        }
