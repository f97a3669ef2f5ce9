"""Say so when a request is slow: ``still waiting for GET /ccm/api/1.0/pages/12 (10 s)``, then every 10 s more.

A hung server used to mean a minute of silence (two attempts that each wait for the timeout); now the log says
which request is waiting and for how long, while it waits. One timer per request, on the event loop
(``loop.call_later``, no task), cancelled when the answer arrives: a fast request costs a timer handle and nothing
is logged. The path is the request's path without its query string (which may hold secrets); each attempt of a
retried call is watched on its own.

The line is logged at INFO through structlog (``cmssync.api.slow``), so it reaches a terminal and a CI log alike,
and ``--quiet`` hides it.
"""

from __future__ import annotations

import asyncio
import time
from types import TracebackType

import structlog

log = structlog.get_logger("cmssync.api.slow")

SLOW_AFTER = 10.0
"""Seconds a request may take before the first "still waiting" line (then one line per this many seconds more)."""


class SlowCallNotice:
    """``with SlowCallNotice("GET", path): await send(...)``: logs while the block has not finished."""

    def __init__(self, method: str, path: str, *, after: float | None = None) -> None:
        self.method = method
        self.path = path
        self.after = SLOW_AFTER if after is None else after
        self.notices = 0
        self._started = 0.0
        self._handle: asyncio.TimerHandle | None = None

    def __enter__(self) -> SlowCallNotice:
        self._started = time.monotonic()
        if self.after > 0:
            self._handle = asyncio.get_running_loop().call_later(self.after, self._still_waiting)
        return self

    def __exit__(
        self, kind: type[BaseException] | None, value: BaseException | None, traceback: TracebackType | None
    ) -> None:
        if self._handle is not None:
            self._handle.cancel()
            self._handle = None

    def _still_waiting(self) -> None:
        waited = time.monotonic() - self._started
        self.notices += 1
        log.info(
            f"still waiting for {self.method} {self.path} ({seconds(waited)} s)",
            method=self.method,
            path=self.path,
            waited_s=round(waited, 1),
        )
        self._handle = asyncio.get_running_loop().call_later(self.after, self._still_waiting)


def seconds(value: float) -> str:
    """``30``, ``2.5``: whole seconds from 10 on, one decimal below."""
    return f"{value:.0f}" if value >= 10 else f"{value:.1f}".rstrip("0").rstrip(".")
