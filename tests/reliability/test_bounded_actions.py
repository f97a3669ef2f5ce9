"""Actions, not only requests, are bounded; SIGTERM stops ``apply`` cleanly (issue 15, item 9).

A page is built by several requests (create, fields, blocks, approval). When every action started at once and only
requests were bounded, a stopped run left dozens of pages live as empty shells. Now at most ``concurrency`` actions
are in flight — measured by counting the page handlers running at once on a slowed sandbox — and SIGTERM lets the
actions in flight finish, starts no more, saves the state and exits 130 with a message; the next apply finishes.
"""

from __future__ import annotations

import asyncio
import dataclasses
import re
import signal
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from cmssync.emulator.embedded import Sandbox
from cmssync.plan.actions import Action
from cmssync.sync.engine import ApplyContext
from cmssync.sync.kinds import page as page_kind
from tests.reliability.inventory import duplicates, problems, take_inventory
from tests.reliability.sites import ReliabilitySite
from tests.support.killed_runs import RUN_TIMEOUT, assert_valid_state, cmssync_env, start_apply, write_run_site, writes
from tests.support.rawsite import RawSite
from tests.support.reliability_report import ReliabilityReport

CONCURRENCY = 2
SLOWER = ["latency:1:ms=15"]


@pytest.fixture
def generated(tmp_path: Path, sandbox: Sandbox) -> Iterator[ReliabilitySite]:
    root = tmp_path / "site"
    site = ReliabilitySite(root, sandbox, settings={"concurrency": CONCURRENCY})
    write_run_site(root, sandbox, str(site.state_path), concurrency=CONCURRENCY)
    sandbox.set_faults(SLOWER)
    yield site
    sandbox.clear_faults()


def test_at_most_concurrency_pages_are_in_flight(
    generated: ReliabilitySite, monkeypatch: pytest.MonkeyPatch, reliability_report: ReliabilityReport
) -> None:
    handler = page_kind.KIND.apply
    running = 0
    peak = 0

    async def counted(action: Action, context: ApplyContext) -> str:
        nonlocal running, peak
        running += 1
        peak = max(peak, running)
        try:
            return await handler(action, context)
        finally:
            running -= 1

    monkeypatch.setattr(page_kind, "KIND", dataclasses.replace(page_kind.KIND, apply=counted))
    report = asyncio.run(generated.apply())
    reliability_report.add(cases_tried=1, applies=1)
    reliability_report.maximum(peak_pages_in_flight=peak)
    assert not report.failed, generated.last_output
    assert peak == CONCURRENCY, f"{peak} pages in flight at once (concurrency {CONCURRENCY})"


def half_built(raw: RawSite, site: ReliabilitySite) -> list[str]:
    """New pages whose live blocks are not the content's: empty shells or partly written pages."""
    content = site.content()
    found = []
    for path, spec in content.pages.items():
        try:
            live = [kind for kind, _ in raw.blocks(path, "Main")]
        except Exception:  # not on the site at all: not started, not half built
            continue
        wanted = [block.type for block in spec.areas.get("Main", ())]
        if live != wanted:
            found.append(path)
    return found


def test_sigterm_finishes_the_actions_in_flight_and_exits_130(
    generated: ReliabilitySite, sandbox: Sandbox, tmp_path: Path, reliability_report: ReliabilityReport
) -> None:
    raw = RawSite(sandbox)
    before = take_inventory(raw, block_pages=set())
    env = cmssync_env(sandbox)
    log = tmp_path / "apply.log"
    sandbox.clear_stats()
    process = start_apply(generated.root, env, log)
    try:
        _wait_for_writes(process, sandbox, 25)
        process.send_signal(signal.SIGTERM)
        code = process.wait(timeout=RUN_TIMEOUT)
    finally:
        if process.poll() is None:
            process.kill()
            process.wait()
    output = log.read_text(encoding="utf-8")
    assert_valid_state(generated.state_path)
    shells = half_built(raw, generated)
    state_pages = set(generated.state().pages)

    sandbox.clear_faults()
    finish = asyncio.run(generated.apply())
    content = generated.content()
    found = problems(before, take_inventory(raw, block_pages=set(content.pages)), content, generated.state())
    raw.close()
    reliability_report.add(cases_tried=1, applies=2, duplicates_found=duplicates(found))
    reliability_report.maximum(half_built_pages_after_sigterm=len(shells))
    assert code == 130, output[-3000:]
    assert "SIGTERM: finishing the actions in flight, starting no more." in output
    stopped = re.search(r"Stopped by SIGTERM: (\d+) actions not started", output)
    assert stopped is not None, output[-3000:]
    assert int(stopped.group(1)) > 0, "the stop came too late to leave anything unstarted"
    assert "Run apply again to finish." in output
    assert shells == [], f"half-built pages after SIGTERM: {shells}"
    assert state_pages, "nothing was recorded before the stop"
    assert not finish.failed, generated.last_output
    assert found == []


def _wait_for_writes(process: Any, sandbox: Sandbox, count: int) -> None:
    deadline = time.monotonic() + RUN_TIMEOUT
    while writes(sandbox.stats()) < count:
        assert process.poll() is None, "the apply finished before it could be stopped"
        assert time.monotonic() < deadline, "the apply made no progress"
        time.sleep(0.01)  # polling another process's progress: there is no event to wait on
