"""``cmssync apply`` as a real subprocess against the session sandbox, to be killed: its environment (secrets as a
user sets them), its start, the writes it made (from the sandbox's statistics), and the check that the state it
left is valid."""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from cmssync.emulator.embedded import Sandbox
from cmssync.state.backends import open_state_backend
from cmssync.state.store import StateStore
from cmssync.sync.applying import ApplyReport, ApplyRequest, apply_site
from cmssync.sync.workspace import open_workspace
from tests.reliability.inventory import Inventory, problems, take_inventory
from tests.reliability.sites import USER_PASSWORD, USER_PASSWORD_ENV, write_generated_content
from tests.support.rawsite import RawSite

REPO = Path(__file__).resolve().parents[2]
RUN_TIMEOUT = 60.0


def writes(stats: dict[str, Any]) -> int:
    """Requests that change the site (every non-GET except asking for a token)."""
    return sum(r["count"] for r in stats["requests"] if r["method"] != "GET" and r["route"] != "/oauth/2.0/token")


def cmssync_env(sandbox: Sandbox) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.upper().startswith("CMSSYNC_")}
    env.update(
        CMSSYNC_CLIENT_SECRET=sandbox.client_secret,
        CMSSYNC_PASSWORD=sandbox.admin_password,
        **{USER_PASSWORD_ENV: USER_PASSWORD},
    )
    return env


def start_apply(root: Path, env: dict[str, str], log: Path) -> subprocess.Popen[bytes]:
    with log.open("ab") as sink:
        return subprocess.Popen(
            [sys.executable, "-m", "cmssync", "--log-format", "json", "apply", "--yes", str(root)],
            cwd=REPO,
            env=env,
            stdout=sink,
            stderr=subprocess.STDOUT,
        )


def assert_valid_state(path: Path) -> None:
    if not path.exists():
        return  # killed before the first remote change was recorded
    json.loads(path.read_text(encoding="utf-8"))
    StateStore(path).load()


def write_run_site(root: Path, sandbox: Sandbox, state: object, *, concurrency: int = 2, **sizes: int) -> None:
    """The generated site the killed-run tests apply: by default 20 pages (2 sections of 10, 3 blocks each), 2 files,
    a user and a group; ``cmssync.yaml`` points at ``sandbox`` and keeps the state at ``state``."""
    counts = {"sections": 2, "pages_per_section": 10, "blocks": 3, "files": 2, "users": 1, "groups": 1, **sizes}
    settings = {"site": {"url": sandbox.url}, "state": state, "concurrency": concurrency}
    write_generated_content(root, settings=settings, **counts)


def keyed_env(sandbox: Sandbox) -> dict[str, str]:
    """:func:`cmssync_env` with the state's password key given (``CMSSYNC_STATE_KEY``), as a remote state wants."""
    return {**cmssync_env(sandbox), "CMSSYNC_STATE_KEY": "3c" * 32}


def reapply_and_check(
    root: Path, sandbox: Sandbox, raw: RawSite, before: Inventory, monkeypatch: pytest.MonkeyPatch, env: dict[str, str]
) -> ApplyReport:
    """The apply after an interrupted one, in process and without faults: it completes, and the site holds each
    content object exactly once (nothing duplicated, nothing lost)."""
    sandbox.clear_faults()
    for name, value in env.items():
        monkeypatch.setenv(name, value)
    workspace = open_workspace(root, overrides={"site": {"url": sandbox.url}})
    report = asyncio.run(apply_site(workspace, ApplyRequest()))
    assert report.exit_code == 0, [o.line() for o in report.outcomes if o.status != "ok"]
    state = open_state_backend(workspace.settings, root).load()
    after = take_inventory(raw, block_pages=set(workspace.content.pages))
    assert problems(before, after, workspace.content, state) == []
    return report
