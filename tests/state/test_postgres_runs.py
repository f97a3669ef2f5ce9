"""Real runs with the state in PostgreSQL (a throwaway cluster, tests.support.postgres) against the sandbox: two
applies at once are kept apart by the session advisory lock (refused naming the holder, or waiting for it); a
SIGKILL mid-apply leaves no lock behind, and the next apply converges from the journal rows with nothing
duplicated; states of several sites share one database without touching each other."""

from __future__ import annotations

import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import psycopg
import pytest

from cmssync.config import load_settings
from cmssync.emulator.embedded import Sandbox
from cmssync.errors import ConfigError, ContentError
from cmssync.state.backends import open_state_backend
from cmssync.state.postgres_backend import PostgresStateBackend
from cmssync.state.records import PageRecord
from tests.reliability.inventory import take_inventory
from tests.support import killed_runs
from tests.support.postgres import PostgresCluster
from tests.support.rawsite import RawSite

DIGEST = "sha256:" + "ab" * 32


@pytest.fixture
def generated(tmp_path: Path, sandbox: Sandbox, postgres_state: str) -> Iterator[Path]:
    """20 pages, files, a user and a group, the state in PostgreSQL; every request slowed to make runs long."""
    root = tmp_path / "site"
    killed_runs.write_run_site(root, sandbox, postgres_state)
    sandbox.set_faults(["latency:1:ms=15"])
    yield root
    sandbox.clear_faults()


def _wait_for_writes(process: subprocess.Popen[bytes], sandbox: Sandbox, count: int) -> None:
    deadline = time.monotonic() + killed_runs.RUN_TIMEOUT
    while killed_runs.writes(sandbox.stats()) < count:
        assert process.poll() is None, "the apply finished before it could be stopped"
        assert time.monotonic() < deadline, "the apply made no progress"
        time.sleep(0.01)  # polling another process's progress: there is no event to wait on


def test_sigkill_mid_apply_leaves_no_lock_and_the_next_apply_converges_without_duplicates(
    generated: Path, sandbox: Sandbox, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    raw = RawSite(sandbox)
    before = take_inventory(raw, block_pages=set())
    sandbox.clear_stats()
    process = killed_runs.start_apply(generated, killed_runs.keyed_env(sandbox), tmp_path / "apply.log")
    try:
        _wait_for_writes(process, sandbox, 25)
        process.send_signal(signal.SIGKILL)
        assert process.wait(timeout=killed_runs.RUN_TIMEOUT) == -signal.SIGKILL
    finally:
        if process.poll() is None:
            process.kill()
            process.wait()
    settings = load_settings(generated)
    backend = open_state_backend(settings, generated)
    assert backend.lock_holder() is None  # the session ended with the process: no lock, no force-unlock
    recorded = set(backend.load().pages)
    assert recorded, "the journal rows of the killed run were not committed"
    assert recorded <= set(take_inventory(raw, block_pages=set()).pages) - set(before.pages)

    report = killed_runs.reapply_and_check(generated, sandbox, raw, before, monkeypatch, killed_runs.keyed_env(sandbox))
    assert not [warning for warning in report.plan.warnings if "not made by cmssync" in warning]
    raw.close()


def test_a_second_apply_is_refused_naming_the_holder_or_waits_for_it(
    generated: Path, sandbox: Sandbox, tmp_path: Path
) -> None:
    env = killed_runs.keyed_env(sandbox)
    sandbox.set_faults(["latency:1:ms=80"])  # the first apply takes long enough for the second to meet it
    first = killed_runs.start_apply(generated, env, tmp_path / "first.log")
    try:
        _wait_for_writes(first, sandbox, 3)
        refused = subprocess.run(
            [sys.executable, "-m", "cmssync", "apply", "--yes", str(generated)],
            cwd=killed_runs.REPO,
            env=env,
            capture_output=True,
            text=True,
            timeout=killed_runs.RUN_TIMEOUT,
            check=False,
        )
        assert first.poll() is None, "the first apply ended before the second tried"
        assert refused.returncode != 0, refused.stdout[-2000:]
        assert f"pid {first.pid}" in refused.stderr, refused.stderr
        assert "(cmssync apply" in refused.stderr
        waited = subprocess.run(
            [sys.executable, "-m", "cmssync", "apply", "--yes", "--lock-timeout", "120", str(generated)],
            cwd=killed_runs.REPO,
            env=env,
            capture_output=True,
            text=True,
            timeout=killed_runs.RUN_TIMEOUT * 2,
            check=False,
        )
        assert first.poll() is not None  # the waiting apply could only finish after the first one had
        assert first.wait(timeout=killed_runs.RUN_TIMEOUT) == 0, (tmp_path / "first.log").read_text()[-3000:]
        assert waited.returncode == 0, waited.stderr[-3000:]
    finally:
        if first.poll() is None:
            first.kill()
            first.wait()


def test_states_of_several_sites_share_one_database(postgres_cluster: PostgresCluster, tmp_path: Path) -> None:
    def opened(name: str) -> PostgresStateBackend:
        (tmp_path / name).mkdir(exist_ok=True)
        settings = load_settings(None, overrides={"state": postgres_cluster.state_url(name)})
        backend = open_state_backend(settings, tmp_path / name)
        assert isinstance(backend, PostgresStateBackend)
        return backend

    site_a, site_b = opened("agency-a-production"), opened("agency-b-staging")
    with site_a.try_lock("cmssync apply"):
        state = site_a.load()
        state.record_page("/a", PageRecord(id=1, digest=DIGEST))
        site_a.save(state)
        with site_b.try_lock("cmssync apply"):  # another state's lock is another lock
            other = site_b.load()
            other.record_page("/b", PageRecord(id=2, digest=DIGEST))
            site_b.save(other)
    assert set(opened("agency-a-production").load().pages) == {"/a"}
    assert set(opened("agency-b-staging").load().pages) == {"/b"}
    assert opened("agency-a-staging").load().pages == {}


def test_saves_are_journal_rows_folded_into_the_snapshot_at_the_end_of_the_run(
    postgres_cluster: PostgresCluster, postgres_state: str, tmp_path: Path
) -> None:
    settings = load_settings(None, overrides={"state": postgres_state})
    backend = open_state_backend(settings, tmp_path)
    name = postgres_state.partition("#")[2]

    def rows() -> tuple[int, int]:
        with psycopg.connect(postgres_cluster.url) as conn:
            journal = conn.execute("SELECT count(*) FROM cmssync_state_journal WHERE name = %s", (name,)).fetchone()
            snapshot = conn.execute("SELECT count(*) FROM cmssync_state WHERE name = %s", (name,)).fetchone()
        assert journal is not None
        assert snapshot is not None
        return int(journal[0]), int(snapshot[0])

    with backend.try_lock("cmssync apply"):
        state = backend.load()
        state.record_page("/first", PageRecord(id=1, digest=DIGEST))
        backend.save(state)  # the first save writes the snapshot
        for i in range(2, 6):
            state.record_page(f"/p{i}", PageRecord(id=i, digest=DIGEST))
            backend.save(state)
        assert rows() == (4, 1)
        assert len(open_state_backend(settings, tmp_path).load().pages) == 5  # snapshot + journal replayed
    assert rows() == (0, 1)
    assert len(open_state_backend(settings, tmp_path).load().pages) == 5


@pytest.mark.parametrize(
    ("value", "message"),
    [
        ("s3://bucket/state.json", "s3://… is not a known backend"),
        ("https://state.example/site", "needs its lock address"),
        ("postgresql://cmssync:hunter2@db/cmssync", "must not carry a password"),
        ("postgresql://db/cmssync?password=hunter2", "must not carry a password"),
    ],
)
def test_a_state_url_is_never_taken_for_a_file_name(
    value: str, message: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("CMSSYNC_STATE", value)
    with pytest.raises(ConfigError, match=message) as caught:
        load_settings(tmp_path)
    assert "hunter2" not in str(caught.value)
    assert not list(tmp_path.iterdir())
    monkeypatch.delenv("CMSSYNC_STATE")
    (tmp_path / "cmssync.yaml").write_text(f"state: {value}\n", encoding="utf-8")
    with pytest.raises(ContentError, match=message):
        load_settings(tmp_path)


def test_the_url_selects_the_database_and_the_name(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("CMSSYNC_STATE", "postgresql://cmssync@db.internal:5433/states#shop-production")
    settings = load_settings(tmp_path)
    backend = open_state_backend(settings, tmp_path)
    assert isinstance(backend, PostgresStateBackend)
    assert backend.location == "postgresql://db.internal:5433/states#shop-production"
    assert backend.name == "shop-production"
    monkeypatch.setenv("CMSSYNC_STATE", "postgresql://db.internal/states")
    assert open_state_backend(load_settings(tmp_path), tmp_path).location.endswith("#default")
