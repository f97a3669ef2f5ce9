"""The single-flight reconcile loop: triggers only *request* a run; one loop runs them, one at a time.

Every trigger (startup, file change, schedule, SIGHUP, retry) calls :meth:`Reconciler.request` with a reason and a
scope (``None``: a full run). Requests are merged into one pending :class:`Batch`: scopes are united, and a full
request supersedes every scope. The loop takes the whole batch when it starts a run, so a request that arrives during
a run is never lost and never overlaps it: it causes exactly one more run afterwards, however many arrived.

File changes come in storms (an editor's save is several events; a ``git pull`` is hundreds), so requests marked
``debounce`` wait for a quiet window: the run starts once no debounced request arrived for ``debounce`` seconds.
A batch that also holds an undebounced request (schedule, signal) starts at once.

A failed run is retried after an exponential backoff (``Backoff``), reset by a successful run that covers what
failed. The retry is itself only a request, so it merges with whatever else is pending. The loop never raises for a
failed run: an exception from the run function is logged, counts as a failure and is handed to ``on_crash`` (the
daemon notifies it like any failed run).
"""

from __future__ import annotations

import asyncio
import datetime as dt
import time
import uuid
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any, Literal

import structlog

from cmssync.plan.scope_model import Scope

log = structlog.get_logger("cmssync.daemon")

Clock = Callable[[], float]


@dataclass(frozen=True)
class Batch:
    """What one run does, and why: the merged requests it answers."""

    run_id: str
    triggers: tuple[str, ...]
    """Distinct reasons in the order they first arrived, e.g. ``("file", "schedule")``."""
    trigger: str
    """The reason that decided the run's kind: the first one that asked for a full run, else the first one."""
    scope: Scope | None
    """``None``: a full run (reads everything, undoes drift)."""
    first_change_at: float | None
    """Clock time of the first file event of the batch (for the save-to-applied latency), if any."""

    @property
    def full(self) -> bool:
        return self.scope is None


PERMANENT: Literal["permanent"] = "permanent"
"""What a run function returns for a failure that retrying cannot fix until something changes (invalid content, a
permission the account lacks): no backoff retry; the next file change, schedule or SIGHUP runs again."""
RunFunction = Callable[[Batch], Awaitable[bool | Literal["permanent"]]]
"""True: success; False: a failure worth retrying with backoff; :data:`PERMANENT`: a failure that is not."""
"""Runs one batch; True when it succeeded."""


@dataclass(frozen=True)
class Backoff:
    """Exponential backoff for failed runs: ``initial``, doubling, capped at ``maximum`` (seconds)."""

    initial: float = 5.0
    maximum: float = 300.0
    factor: float = 2.0

    def delay(self, failures: int) -> float:
        """The wait after the ``failures``-th consecutive failure (1-based)."""
        return float(min(self.maximum, self.initial * self.factor ** max(0, failures - 1)))


@dataclass
class _Pending:
    triggers: list[str] = field(default_factory=list)
    full_trigger: str | None = None
    scope: Scope = field(default_factory=Scope)
    debounce_only: bool = True
    quiet_until: float = 0.0
    first_change_at: float | None = None

    def add(self, trigger: str, scope: Scope | None, *, debounce: bool, at: float, quiet_until: float) -> None:
        if trigger not in self.triggers:
            self.triggers.append(trigger)
        if scope is None:
            self.full_trigger = self.full_trigger or trigger
        else:
            self.scope = self.scope | scope
        if debounce:
            self.quiet_until = max(self.quiet_until, quiet_until)
            if self.first_change_at is None or at < self.first_change_at:
                self.first_change_at = at
        else:
            self.debounce_only = False

    def batch(self, run_id: str) -> Batch:
        full = self.full_trigger is not None
        return Batch(
            run_id=run_id,
            triggers=tuple(self.triggers),
            trigger=self.full_trigger if self.full_trigger is not None else self.triggers[0],
            scope=None if full else self.scope,
            first_change_at=self.first_change_at,
        )


def covers(done: Scope | None, wanted: Scope | None) -> bool:
    """Whether a run of scope ``done`` did everything a run of scope ``wanted`` would do."""
    if done is None:
        return True
    if wanted is None:
        return False
    return (
        wanted.pages <= done.pages
        and wanted.files <= done.files
        and (done.all_users or (not wanted.all_users and wanted.users <= done.users))
        and all(map(done.names, wanted.kinds))
    )


def new_run_id() -> str:
    return uuid.uuid4().hex[:12]


class Reconciler:
    """One run at a time, no request lost (see the module docstring). Use from the event loop's thread only;
    other threads hand requests over with ``loop.call_soon_threadsafe(reconciler.request, ...)``."""

    def __init__(
        self,
        run: RunFunction,
        *,
        debounce: float,
        backoff: Backoff | None = None,
        clock: Clock = time.monotonic,
        on_crash: Callable[[Batch, Exception], None] = lambda batch, exc: None,
    ) -> None:
        self._run = run
        self._on_crash = on_crash
        self.debounce = debounce
        self.backoff = backoff or Backoff()
        self._clock = clock
        self._pending: _Pending | None = None
        self._wake = asyncio.Event()
        self._stopping = False
        self._failures = 0
        self._owed = False
        """A failed run's work is still to be done (``_owed_scope``; None: a full run)."""
        self._owed_scope: Scope | None = None
        self._retry: asyncio.TimerHandle | None = None
        self.runs = 0
        """Runs started so far."""
        self.running: Batch | None = None
        """The batch being run right now, if any."""
        self.running_since: float | None = None
        """When it started (``time.time``): ``/healthz`` and ``/status`` say how long a run has been going."""
        self.idle = asyncio.Event()
        """Set while no run is going and nothing is pending (tests and shutdown wait on it)."""
        self.idle.set()

    # -- triggers ---------------------------------------------------------------------------------------------------

    def request(
        self, trigger: str, scope: Scope | None = None, *, debounce: bool = False, at: float | None = None
    ) -> None:
        """Ask for a run: ``scope=None`` is a full run. ``debounce`` waits for a quiet window (file changes);
        ``at`` is when the change was seen (clock time; default now)."""
        if self._stopping:
            return
        if scope is not None and scope.empty:
            return
        now = self._clock()
        if self._pending is None:
            self._pending = _Pending()
        self._pending.add(
            trigger, scope, debounce=debounce, at=now if at is None else at, quiet_until=now + self.debounce
        )
        self.idle.clear()
        self._wake.set()

    def stop(self) -> None:
        """Take no more requests; :meth:`serve` returns once the run in progress (if any) has finished."""
        self._stopping = True
        self._pending = None
        self._cancel_retry()
        self._wake.set()

    def in_progress(self) -> dict[str, Any] | None:
        """The run going on, for ``/healthz`` and ``/status``: its id, trigger, since when (UTC) and for how long."""
        batch, since = self.running, self.running_since
        if batch is None or since is None:
            return None
        started = dt.datetime.fromtimestamp(since, dt.UTC).isoformat(timespec="seconds")
        return {
            "run_id": batch.run_id,
            "trigger": batch.trigger,
            "since": started,
            "seconds": round(time.time() - since, 1),
        }

    @property
    def failures(self) -> int:
        """Consecutive failed runs (0 after a success)."""
        return self._failures

    # -- the loop ---------------------------------------------------------------------------------------------------

    async def serve(self) -> None:
        """Run batches until :meth:`stop`."""
        while not self._stopping:
            await self._wake.wait()
            batch = await self._next_batch()
            if batch is None:
                continue
            self.runs += 1
            self.running, self.running_since = batch, time.time()
            try:
                ok = await self._guarded(batch)
            finally:
                self.running = self.running_since = None
            self._after(batch, ok)
            if self._pending is None:
                self.idle.set()
        self.idle.set()

    async def _next_batch(self) -> Batch | None:
        """Wait out the quiet window of a debounced batch, then take the whole pending batch."""
        while True:
            self._wake.clear()
            pending = self._pending
            if self._stopping or pending is None:
                return None
            delay = pending.quiet_until - self._clock() if pending.debounce_only else 0.0
            if delay <= 0:
                self._pending = None
                return pending.batch(new_run_id())
            try:
                async with asyncio.timeout(delay):
                    await self._wake.wait()
            except TimeoutError:
                pass

    async def _guarded(self, batch: Batch) -> bool | Literal["permanent"]:
        with structlog.contextvars.bound_contextvars(run_id=batch.run_id, trigger=batch.trigger):
            try:
                return await self._run(batch)
            except asyncio.CancelledError:
                raise
            except Exception as exc:
                log.exception("run crashed", triggers=list(batch.triggers))
                self._on_crash(batch, exc)
                return False

    def _after(self, batch: Batch, ok: bool | Literal["permanent"]) -> None:
        if ok is True:
            self._failures = 0
            if self._owed and not covers(batch.scope, self._owed_scope):
                # The site answers again: retry what failed now rather than at the end of a long backoff.
                self.request("retry", self._owed_scope)
            self._owed = False
            self._owed_scope = None
            self._cancel_retry()
            return
        if self._stopping:
            return
        if not self._owed:
            self._owed_scope = batch.scope
        elif self._owed_scope is not None and batch.scope is not None:
            self._owed_scope = self._owed_scope | batch.scope
        else:
            self._owed_scope = None
        self._owed = True
        self._failures += 1
        if ok == PERMANENT:
            self._cancel_retry()
            log.warning(
                "run failed; not retrying until the content, the schedule or a signal asks again",
                run_id=batch.run_id,
                trigger=batch.trigger,
                failures=self._failures,
            )
            return
        delay = self.backoff.delay(self._failures)
        self._cancel_retry()
        self._retry = asyncio.get_running_loop().call_later(delay, self._fire_retry)
        log.warning(
            "run failed; will retry",
            run_id=batch.run_id,
            trigger=batch.trigger,
            retry_in_s=round(delay, 3),
            failures=self._failures,
        )

    def _cancel_retry(self) -> None:
        if self._retry is not None:
            self._retry.cancel()
            self._retry = None

    def _fire_retry(self) -> None:
        self._retry = None
        if self._owed:
            self.request("retry", self._owed_scope)
