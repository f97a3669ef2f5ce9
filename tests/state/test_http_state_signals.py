"""Batched saves and signals, with the state on the HTTP state server: SIGTERM uploads every completed change before
the run exits; a SIGKILL loses the records of the interval, and the next apply adopts what the killed run made
instead of duplicating it (docs/state.md, "What a crash can lose")."""

from __future__ import annotations

import asyncio
import json
import shutil
import signal
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from cmssync.emulator.embedded import Sandbox
from cmssync.sync.applying import ApplyRequest, apply_site
from cmssync.sync.workspace import open_workspace
from tests.reliability.inventory import Inventory, problems, take_inventory
from tests.state.state_server import StateServer
from tests.support.killed_runs import (
    RUN_TIMEOUT,
    keyed_env,
    reapply_and_check,
    start_apply,
    write_run_site,
    writes,
)
from tests.support.rawsite import RawSite


@pytest.fixture
def generated(tmp_path: Path, sandbox: Sandbox, server: StateServer) -> Iterator[Path]:
    """20 pages, files, a user and a group; the state on the server, uploaded only at the end of a run."""
    root = tmp_path / "site"
    state = server.settings(path=str(tmp_path / "work" / "state.json"), save_interval="1h")
    write_run_site(root, sandbox, state)
    sandbox.set_faults(["latency:1:ms=15"])
    yield root
    sandbox.clear_faults()


def run_until(sandbox: Sandbox, root: Path, env: dict[str, str], log: Path, count: int, sig: int) -> int:
    """Start ``cmssync apply``, send ``sig`` once ``count`` writes reached the site; its exit code."""
    process = start_apply(root, env, log)
    try:
        deadline = time.monotonic() + RUN_TIMEOUT
        while writes(sandbox.stats()) < count:
            assert process.poll() is None, "the apply finished before it could be stopped"
            assert time.monotonic() < deadline, "the apply made no progress"
            time.sleep(0.01)  # polling another process's progress: there is no event to wait on
        process.send_signal(sig)
        return process.wait(timeout=RUN_TIMEOUT)
    finally:
        if process.poll() is None:
            process.kill()
            process.wait()


def interrupted(sandbox: Sandbox, root: Path, log: Path, sig: int) -> tuple[RawSite, Inventory, int]:
    """The site's inventory before, then an apply stopped by ``sig`` once 25 writes reached the site; its exit code."""
    raw = RawSite(sandbox)
    before = take_inventory(raw, block_pages=set())
    sandbox.clear_stats()
    return raw, before, run_until(sandbox, root, keyed_env(sandbox), log, 25, sig)


def test_sigterm_uploads_every_completed_change_before_exiting(
    generated: Path, sandbox: Sandbox, server: StateServer, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    raw, before, code = interrupted(sandbox, generated, tmp_path / "apply.log", signal.SIGTERM)
    output = (tmp_path / "apply.log").read_text(encoding="utf-8")
    assert code == 130, output[-3000:]
    assert len(server.requests("POST")) == 1  # the interval is an hour: the one upload is the stop's
    assert server.locks == {}
    recorded = set(json.loads(server.documents["site"])["pages"])
    on_site = set(take_inventory(raw, block_pages=set()).pages) - set(before.pages)
    assert recorded, "nothing was recorded before the stop"
    assert recorded == on_site  # every page the run made is in the uploaded state, and nothing else
    reapply_and_check(generated, sandbox, raw, before, monkeypatch, keyed_env(sandbox))
    raw.close()


def test_a_sigkill_loses_the_interval_and_the_next_apply_adopts_instead_of_duplicating(
    generated: Path, sandbox: Sandbox, server: StateServer, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    raw, before, code = interrupted(sandbox, generated, tmp_path / "apply.log", signal.SIGKILL)
    assert code == -signal.SIGKILL
    assert "site" not in server.documents  # the records of the run were lost with it …
    assert set(take_inventory(raw, block_pages=set()).pages) - set(before.pages)  # … though it made pages
    left = server.locks["site"]  # a killed run leaves its lock on the server
    server.locks.clear()  # what `cmssync force-unlock ID --yes` does (tests/state/test_state_backend_cli.py)
    assert left["Operation"] == "cmssync apply"
    assert (tmp_path / "work" / "state.json.spool.meta").exists()
    report = reapply_and_check(generated, sandbox, raw, before, monkeypatch, keyed_env(sandbox))  # from the spool
    warnings = report.plan.warnings
    assert not [warning for warning in warnings if "not made by cmssync" in warning]
    assert not (tmp_path / "work" / "state.json.spool.meta").exists()
    raw.close()


def test_a_lost_runner_loses_the_interval_and_drafts_it_left_are_named_not_approved(
    generated: Path, sandbox: Sandbox, server: StateServer, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    raw, before, _ = interrupted(sandbox, generated, tmp_path / "apply.log", signal.SIGKILL)
    server.locks.clear()
    shutil.rmtree(tmp_path / "work")  # the runner's disk is gone with it, spool included
    sandbox.clear_faults()
    for name, value in keyed_env(sandbox).items():
        monkeypatch.setenv(name, value)
    workspace = open_workspace(generated, overrides={"site": {"url": sandbox.url}})
    report = asyncio.run(apply_site(workspace, ApplyRequest()))
    # A draft that already holds the content is left with a warning; one that does not is held (refused) by the plan.
    drafts = [warning for warning in report.plan.warnings if "not made by cmssync" in warning]
    named = {path for path in workspace.content.pages if any(f"page {path}:" in warning for warning in drafts)}
    named |= {held.key for held in report.plan.held if held.reason == "foreign_draft"}
    assert not [o.line() for o in report.outcomes if o.status != "ok"]
    assert report.exit_code == (1 if any(held.fails for held in report.plan.held) else 0)
    found = problems(before, take_inventory(raw, block_pages=set(workspace.content.pages)), workspace.content, None)
    # Identities come back by natural key: nothing is created twice …
    assert [problem for problem in found if "duplicat" in problem or "extra" in problem] == []
    # … and a page whose pending draft only the lost state knew is named in a warning, never approved unasked: the
    # site lacks content only where the plan said so.
    lacking = {problem.split()[1] for problem in found if "blocks wrong" in problem}
    assert lacking <= named, (lacking, drafts)
    raw.close()
