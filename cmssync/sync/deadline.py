"""The overall deadline of one apply (``run_timeout``): a run that a slow or throttling site drags out stops in time.

Reading the site and planning must finish before the deadline, or the run ends with nothing written. Once actions
run, the deadline acts like SIGTERM: the actions in flight finish (each request is itself bounded by the retry
policy's time budget) and every action not started yet is skipped, so the state holds every completed change and
the next run goes on from there. The caller's own stop (SIGTERM) still works and stays distinguishable: the
deadline sets an event of its own that follows the caller's. The client's transport is handed the deadline too
(:attr:`RunDeadline.monotonic`): past it no retry wait starts and none outlasts it, so an action in flight ends as
"may or may not have happened" instead of waiting out a site's ``Retry-After``, and the next run finds out.
"""

from __future__ import annotations

import asyncio
import contextlib
import time
from collections.abc import AsyncIterator
from types import TracebackType

from cmssync.errors import ApplyError


class RunDeadline:
    """``seconds`` from entering (0: none); :attr:`halt` is what the engine watches."""

    def __init__(self, seconds: float, stop: asyncio.Event | None) -> None:
        self.seconds = seconds
        self.expired = False
        self.halt = asyncio.Event()
        self._stop = stop
        self._at: float | None = None
        self.monotonic: float | None = None
        """The deadline in ``time.monotonic`` seconds (None: none), for the client's retries."""
        self._timer: asyncio.TimerHandle | None = None
        self._follower: asyncio.Task[None] | None = None

    async def __aenter__(self) -> RunDeadline:
        loop = asyncio.get_running_loop()
        if self.seconds > 0:
            self._at = loop.time() + self.seconds
            self.monotonic = time.monotonic() + self.seconds
            self._timer = loop.call_at(self._at, self._expire)
        if self._stop is not None:
            self._follower = asyncio.create_task(self._follow(self._stop))
        return self

    async def __aexit__(
        self, kind: type[BaseException] | None, value: BaseException | None, traceback: TracebackType | None
    ) -> None:
        if self._timer is not None:
            self._timer.cancel()
        if self._follower is not None:
            self._follower.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._follower

    @contextlib.asynccontextmanager
    async def planning(self) -> AsyncIterator[None]:
        """Reading the site and planning, which must end before the deadline (then nothing was written)."""
        try:
            async with asyncio.timeout_at(self._at):
                yield
        except TimeoutError:
            raise ApplyError(
                f"run_timeout ({self.seconds:g} s) passed while reading the site and planning; nothing was written"
            ) from None

    def problem(self, skipped: int) -> str | None:
        """The line the report carries when the deadline stopped the actions."""
        if not self.expired:
            return None
        return (
            f"run_timeout ({self.seconds:g} s) reached: {skipped} action(s) not started; the state holds every "
            "completed change and the next run goes on"
        )

    def _expire(self) -> None:
        self.expired = True
        self.halt.set()

    async def _follow(self, stop: asyncio.Event) -> None:
        await stop.wait()
        self.halt.set()
