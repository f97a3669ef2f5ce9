"""Crash safety (issues 7 and 9): SIGKILL a real ``cmssync apply`` subprocess at ten seeded points of a large
apply (and six more of an apply that updates every page); after every kill the state file is a valid state, and
the apply that follows (not killed) converges with nothing duplicated or lost.

The subprocess is the installed command (``python -m cmssync apply --yes DIR``) talking HTTP to the session
sandbox, configured like a user would: ``cmssync.yaml`` with the URL and the state path, secrets in the environment.
A kill point is "after the Nth write request of this run reached the sandbox" (counted from the sandbox's
statistics, polled): each killed run resumes the work of the previous one, so the ten points fall at different
depths of one large apply — groups and files early, page creates, block adds and approvals later.
"""

from __future__ import annotations

import random
import signal
import subprocess
import time
from pathlib import Path

from cmssync.emulator.embedded import Sandbox
from tests.reliability.inventory import duplicates, problems, take_inventory
from tests.reliability.sites import ReliabilitySite
from tests.support.killed_runs import RUN_TIMEOUT, assert_valid_state, cmssync_env, start_apply, write_run_site, writes
from tests.support.rawsite import RawSite
from tests.support.reliability_report import ReliabilityReport

KILLS = 10
UPDATE_KILLS = 6
KILL_SEED = 7
POLL = 0.01
SLOWER = ["latency:1:ms=20"]
"""Every request waits 20 ms, so the apply is long enough for a 10 ms poll to stop it near its kill point."""


def kill_after_writes(process: subprocess.Popen[bytes], sandbox: Sandbox, count: int) -> int | None:
    """SIGKILL ``process`` once ``count`` writes of this run reached the sandbox; the writes seen at the kill, or
    None when the run finished first."""
    deadline = time.monotonic() + RUN_TIMEOUT
    while time.monotonic() < deadline:
        seen = writes(sandbox.stats())
        if seen >= count:
            process.send_signal(signal.SIGKILL)
            process.wait(timeout=RUN_TIMEOUT)
            return seen
        if process.poll() is not None:
            return None
        time.sleep(POLL)  # polling another process's progress: there is no event to wait on
    raise AssertionError(f"the apply neither reached {count} writes nor finished within {RUN_TIMEOUT} s")


def apply_with_kills(
    root: Path, sandbox: Sandbox, env: dict[str, str], log: Path, state: Path, points: list[int]
) -> list[int]:
    """One apply per kill point, each SIGKILLed at its point (slowed down), then one apply to the end."""
    killed: list[int] = []
    process: subprocess.Popen[bytes] | None = None
    sandbox.set_faults(SLOWER)
    try:
        for point in points:
            sandbox.clear_stats()
            process = start_apply(root, env, log)
            seen = kill_after_writes(process, sandbox, point)
            if seen is not None:
                killed.append(seen)
            assert_valid_state(state)
        sandbox.clear_faults()
        process = start_apply(root, env, log)
        assert process.wait(timeout=RUN_TIMEOUT) == 0, log.read_text()[-3000:]
        assert_valid_state(state)
    finally:
        sandbox.clear_faults()
        if process is not None and process.poll() is None:
            process.kill()
            process.wait()
    return killed


def edit_every_page(root: Path) -> int:
    """Change block 2 of every page: one block update per page, the kind of run whose first write matters."""
    edited = 0
    for path in sorted((root / "pages").rglob("*.yaml")):
        text = path.read_text(encoding="utf-8")
        path.write_text(text.replace("<p>Block 2 of page", "<p>Block 2 (edited) of page"), encoding="utf-8")
        edited += 1
    return edited


async def test_sigkill_at_ten_points_then_apply_converges(
    sandbox: Sandbox, tmp_path: Path, reliability_report: ReliabilityReport
) -> None:
    """Ten kills while the site is created, six more while every page is updated; after each series the next
    apply converges: the plan is empty, nothing is duplicated or lost, and the live pages hold the edits."""
    root = tmp_path / "site"
    site = ReliabilitySite(root, sandbox)
    sizes = {"sections": 6, "pages_per_section": 9, "files": 8, "users": 5, "groups": 3}
    write_run_site(root, sandbox, str(site.state_path), concurrency=4, **sizes)
    raw = RawSite(sandbox)
    before = take_inventory(raw, block_pages=set())
    env = cmssync_env(sandbox)
    log = tmp_path / "apply.log"
    rng = random.Random(KILL_SEED)

    creating = [rng.randint(4, 45) for _ in range(KILLS)]
    killed = apply_with_kills(root, sandbox, env, log, site.state_path, creating)
    assert len(killed) == KILLS, f"only {len(killed)} runs were killed (points {creating}, killed at {killed})"
    plan = await site.plan()
    assert [a.id for a in plan.actions] == [], log.read_text()[-3000:]

    assert edit_every_page(root) == 60
    updating = [rng.randint(1, 20) for _ in range(UPDATE_KILLS)]
    killed += apply_with_kills(root, sandbox, env, log, site.state_path, updating)
    plan = await site.plan()
    assert [a.id for a in plan.actions] == [], log.read_text()[-3000:]

    content = site.content()
    after = take_inventory(raw, block_pages=set(content.pages))
    found = problems(before, after, content, site.state())
    stale = [path for path in sorted(content.pages) if "(edited)" not in raw.blocks(path, "Main")[1][1]["content"]]
    raw.close()
    reliability_report.add(cases_tried=2, kills=len(killed), duplicates_found=duplicates(found))
    assert found == []
    assert stale == [], "live pages without the edit (a draft left unapproved?)"
    assert len(killed) == KILLS + UPDATE_KILLS, f"killed at {killed} (points {creating} and {updating})"
