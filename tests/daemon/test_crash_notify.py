"""A run that crashes (a bug, not a site failure) is still a failed run for notifications, once per kind of crash."""

from __future__ import annotations

import asyncio

from cmssync.daemon.events import EventTracker, RunFacts
from cmssync.daemon.reconciler import Backoff, Batch, Reconciler


async def test_a_crashing_run_is_handed_to_on_crash_and_notified_once() -> None:
    crashes: list[tuple[str, str]] = []
    three = asyncio.Event()
    tracker = EventTracker()
    events: list[str] = []

    async def run(batch: Batch) -> bool:
        raise TypeError("_block_changes() takes 2 positional arguments but 4 were given")

    def on_crash(batch: Batch, exc: Exception) -> None:
        crashes.append((batch.trigger, type(exc).__name__))
        if len(crashes) >= 3:
            three.set()
        reason = f"run crashed: {type(exc).__name__}: {exc}"
        facts = RunFacts(batch.run_id, batch.trigger, "enforce", batch.scope, "failure", reason)
        events.extend(event.type for event in tracker.observe(facts))

    reconciler = Reconciler(run, debounce=0.0, backoff=Backoff(0.01, 0.02), on_crash=on_crash)
    serving = asyncio.create_task(reconciler.serve())
    reconciler.request("startup")
    await asyncio.wait_for(three.wait(), 5)  # the startup run and two retries
    reconciler.stop()
    await asyncio.wait_for(serving, 5)
    assert crashes[:3] == [("startup", "TypeError"), ("retry", "TypeError"), ("retry", "TypeError")]
    assert reconciler.failures >= 3
    assert events == ["run_failed"]
