"""The single-flight reconciler, with fake run functions: no lost request, no overlap, debounce, backoff."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from typing import Literal

import pytest

from cmssync.daemon.reconciler import PERMANENT, Backoff, Batch, Reconciler, covers
from cmssync.plan.scope_model import Scope

DEBOUNCE = 0.05
TIMEOUT = 5.0


class FakeRuns:
    """A run function that records batches; ``gate`` (when set) holds each run until the test opens it."""

    def __init__(self, results: list[bool] | None = None) -> None:
        self.batches: list[Batch] = []
        self.results = list(results or [])
        self.started = asyncio.Event()
        self.gate: asyncio.Event | None = None
        self.active = 0
        self.max_active = 0
        self.finished = asyncio.Condition()

    async def __call__(self, batch: Batch) -> bool | Literal["permanent"]:
        self.batches.append(batch)
        self.active += 1
        self.max_active = max(self.max_active, self.active)
        self.started.set()
        try:
            if self.gate is not None:
                await self.gate.wait()
            await asyncio.sleep(0)
            if isinstance(self.results[0] if self.results else None, BaseException):
                raise self.results.pop(0)  # type: ignore[misc]
            return self.results.pop(0) if self.results else True
        finally:
            self.active -= 1
            async with self.finished:
                self.finished.notify_all()

    async def wait_for_runs(self, count: int) -> None:
        async with asyncio.timeout(TIMEOUT), self.finished:
            await self.finished.wait_for(lambda: len(self.batches) >= count and self.active == 0)


@pytest.fixture
async def runs() -> FakeRuns:
    return FakeRuns()


async def serving(reconciler: Reconciler) -> AsyncIterator[Reconciler]:
    task = asyncio.create_task(reconciler.serve())
    try:
        yield reconciler
    finally:
        reconciler.stop()
        async with asyncio.timeout(TIMEOUT):
            await task


@pytest.fixture
async def reconciler(runs: FakeRuns) -> AsyncIterator[Reconciler]:
    async for running in serving(Reconciler(runs, debounce=DEBOUNCE, backoff=Backoff(0.01, 0.05))):
        yield running


async def settled(reconciler: Reconciler) -> None:
    async with asyncio.timeout(TIMEOUT):
        await reconciler.idle.wait()


def pages(*paths: str) -> Scope:
    return Scope(pages=frozenset(paths))


async def test_a_request_runs_once(reconciler: Reconciler, runs: FakeRuns) -> None:
    reconciler.request("startup")
    await runs.wait_for_runs(1)
    await settled(reconciler)
    assert [(b.trigger, b.full) for b in runs.batches] == [("startup", True)]


async def test_requests_during_a_run_cause_exactly_one_more_run(reconciler: Reconciler, runs: FakeRuns) -> None:
    runs.gate = asyncio.Event()
    reconciler.request("startup")
    async with asyncio.timeout(TIMEOUT):
        await runs.started.wait()
    for trigger in ("schedule", "signal", "schedule"):
        reconciler.request(trigger)
    reconciler.request("file", pages("/a"), debounce=True)
    runs.gate.set()
    await runs.wait_for_runs(2)
    await settled(reconciler)
    assert len(runs.batches) == 2
    assert runs.max_active == 1
    second = runs.batches[1]
    assert second.triggers == ("schedule", "signal", "file")
    assert second.full
    assert second.trigger == "schedule"


async def test_a_burst_of_twenty_file_changes_gives_one_run(reconciler: Reconciler, runs: FakeRuns) -> None:
    for index in range(20):
        reconciler.request("file", pages(f"/p{index}"), debounce=True)
        await asyncio.sleep(DEBOUNCE / 10)  # a storm: events closer together than the quiet window
    await runs.wait_for_runs(1)
    await settled(reconciler)
    assert len(runs.batches) == 1
    batch = runs.batches[0]
    assert batch.scope == pages(*(f"/p{i}" for i in range(20)))
    assert batch.first_change_at is not None


async def test_debounce_waits_for_quiet(runs: FakeRuns) -> None:
    clock_start = asyncio.get_running_loop().time()
    async for reconciler in serving(Reconciler(runs, debounce=0.2)):
        reconciler.request("file", pages("/a"), debounce=True)
        await runs.wait_for_runs(1)
    assert asyncio.get_running_loop().time() - clock_start >= 0.2


async def test_full_supersedes_scopes(reconciler: Reconciler, runs: FakeRuns) -> None:
    runs.gate = asyncio.Event()
    reconciler.request("startup")
    async with asyncio.timeout(TIMEOUT):
        await runs.started.wait()
    reconciler.request("file", pages("/a"), debounce=True)
    reconciler.request("file", None, debounce=True)  # cmssync.yaml changed: a full run
    reconciler.request("file", pages("/b"), debounce=True)
    runs.gate.set()
    await runs.wait_for_runs(2)
    await settled(reconciler)
    assert runs.batches[1].full
    assert runs.batches[1].trigger == "file"


async def test_scopes_are_merged(reconciler: Reconciler, runs: FakeRuns) -> None:
    reconciler.request("file", pages("/a"), debounce=True)
    reconciler.request("file", Scope(files=frozenset({"logo.png"}), all_users=True), debounce=True)
    await runs.wait_for_runs(1)
    await settled(reconciler)
    assert runs.batches[0].scope == Scope(pages=frozenset({"/a"}), files=frozenset({"logo.png"}), all_users=True)


async def test_an_empty_scope_is_no_request(reconciler: Reconciler, runs: FakeRuns) -> None:
    reconciler.request("file", Scope(), debounce=True)
    assert reconciler.idle.is_set()
    assert runs.batches == []


async def test_an_undebounced_request_does_not_wait_for_quiet(runs: FakeRuns) -> None:
    async for reconciler in serving(Reconciler(runs, debounce=60.0)):
        reconciler.request("file", pages("/a"), debounce=True)
        reconciler.request("signal")
        await runs.wait_for_runs(1)
        assert runs.batches[0].triggers == ("file", "signal")
        assert runs.batches[0].trigger == "signal"


async def test_failures_back_off_and_recover(runs: FakeRuns) -> None:
    runs.results = [False, False, False, True]
    async for reconciler in serving(Reconciler(runs, debounce=DEBOUNCE, backoff=Backoff(0.02, 0.05))):
        reconciler.request("file", pages("/a"), debounce=True)
        await runs.wait_for_runs(4)
        await settled(reconciler)
        assert reconciler.failures == 0
    assert [b.trigger for b in runs.batches] == ["file", "retry", "retry", "retry"]
    assert all(b.scope == pages("/a") for b in runs.batches)


async def test_a_crashing_run_counts_as_a_failure(runs: FakeRuns) -> None:
    runs.results = [RuntimeError("bug"), True]  # type: ignore[list-item]
    async for reconciler in serving(Reconciler(runs, debounce=DEBOUNCE, backoff=Backoff(0.01, 0.01))):
        reconciler.request("startup")
        await runs.wait_for_runs(2)
        await settled(reconciler)
    assert [b.trigger for b in runs.batches] == ["startup", "retry"]
    assert runs.batches[1].full


async def test_a_success_elsewhere_retries_what_failed_at_once(runs: FakeRuns) -> None:
    runs.results = [False, True, True]
    async for reconciler in serving(Reconciler(runs, debounce=0.01, backoff=Backoff(60, 60))):
        reconciler.request("startup")  # full run fails; the retry would wait a minute
        await runs.wait_for_runs(1)
        reconciler.request("file", pages("/a"), debounce=True)  # succeeds: the site answers again
        await runs.wait_for_runs(3)
        await settled(reconciler)
    assert [(b.trigger, b.full) for b in runs.batches] == [("startup", True), ("file", False), ("retry", True)]


async def test_a_permanent_failure_is_not_retried_until_asked_again(runs: FakeRuns) -> None:
    """Invalid content or a permission the account lacks: backing off and retrying cannot help; the next save does."""
    runs.results = [PERMANENT, True]  # type: ignore[list-item]
    async for reconciler in serving(Reconciler(runs, debounce=0.01, backoff=Backoff(0.01, 0.01))):
        reconciler.request("file", pages("/a"), debounce=True)
        await runs.wait_for_runs(1)
        await asyncio.sleep(0.1)  # ten backoff delays: no retry comes
        assert len(runs.batches) == 1
        assert reconciler.failures == 1
        reconciler.request("file", pages("/a"), debounce=True)  # the fix is saved
        await runs.wait_for_runs(2)
        await settled(reconciler)
        assert reconciler.failures == 0
    assert [b.trigger for b in runs.batches] == ["file", "file"]


@pytest.mark.parametrize(("failures", "delay"), [(1, 5.0), (2, 10.0), (3, 20.0), (6, 160.0), (7, 300.0), (50, 300.0)])
def test_backoff_doubles_up_to_a_cap(failures: int, delay: float) -> None:
    assert Backoff(5.0, 300.0).delay(failures) == delay


@pytest.mark.parametrize(
    ("done", "wanted", "expected"),
    [
        (None, None, True),
        (None, Scope(pages=frozenset({"/a"})), True),
        (Scope(pages=frozenset({"/a"})), None, False),
        (Scope(pages=frozenset({"/a", "/b"})), Scope(pages=frozenset({"/a"})), True),
        (Scope(pages=frozenset({"/a"})), Scope(pages=frozenset({"/a", "/b"})), False),
        (Scope(all_users=True), Scope(users=frozenset({"jane"})), True),
        (Scope(users=frozenset({"jane"})), Scope(all_users=True), False),
        (Scope(kinds=frozenset({"group:*"})), Scope(kinds=frozenset({"group:Editors"})), True),
        (Scope(kinds=frozenset({"group:Editors"})), Scope(kinds=frozenset({"group:*"})), False),
        (Scope(pages=frozenset({"/a"})), Scope(pages=frozenset({"/a"}), kinds=frozenset({"group:*"})), False),
    ],
)
def test_covers(done: Scope | None, wanted: Scope | None, expected: bool) -> None:
    assert covers(done, wanted) is expected


async def test_stop_lets_the_run_in_progress_finish(runs: FakeRuns) -> None:
    runs.gate = asyncio.Event()
    reconciler = Reconciler(runs, debounce=DEBOUNCE)
    task = asyncio.create_task(reconciler.serve())
    reconciler.request("startup")
    async with asyncio.timeout(TIMEOUT):
        await runs.started.wait()
    reconciler.request("schedule")
    reconciler.stop()
    assert not task.done()
    runs.gate.set()
    async with asyncio.timeout(TIMEOUT):
        await task
    assert len(runs.batches) == 1  # the request that arrived before stop is dropped, not run


async def test_run_id_and_trigger_are_bound_to_the_log_context(runs: FakeRuns) -> None:
    import structlog

    seen: list[dict[str, object]] = []

    async def run(batch: Batch) -> bool:
        seen.append(structlog.contextvars.get_contextvars())
        return True

    async for reconciler in serving(Reconciler(run, debounce=DEBOUNCE)):
        reconciler.request("signal")
        await asyncio.sleep(0)
        await settled(reconciler)
    assert len(seen) == 1
    assert seen[0]["trigger"] == "signal"
    assert isinstance(seen[0]["run_id"], str)
