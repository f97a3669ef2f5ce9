"""The state store: round trips, atomic writes, locking between processes, format versions, secrets."""

from __future__ import annotations

import json
import logging
import os
import signal
import socket
import stat
import subprocess
import sys
import textwrap
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from pydantic import ValidationError

from cmssync.errors import StateError, StateLockedError
from cmssync.state import records as state_module
from cmssync.state import store as store_module
from cmssync.state.records import FileRecord, KindRecord, PageRecord, State, UserRecord
from cmssync.state.store import StateStore, read_lock_holder

REPO = Path(__file__).resolve().parents[2]
H1 = "sha256:" + "1" * 64
H2 = "sha256:" + "2" * 64
PASSWORD = "correct horse battery staple"
TOKEN = "eyJ0eXAiOiJKV1QiLCJhbGciOiJSUzI1NiJ9.token-value"


@pytest.fixture
def store(tmp_path: Path) -> StateStore:
    return StateStore(tmp_path / ".cmssync" / "state.json")


def sample_state(state: State) -> State:
    state.bind_site("https://www.example.com", "/ccm/api/1.0")
    state.record_page("/about", PageRecord(id=157, digest=H1, live_version_id=3))
    state.record_page("/", PageRecord(id=1, digest=H2, live_version_id=1, draft_version_id=2))
    state.record_file(
        "logo.png",
        FileRecord(id="6c1b-uuid", hash=H1, url="https://www.example.com/application/files/logo.png", folder=12),
    )
    state.record_user("editor", UserRecord(id=5, digest=H1, password_digest=state.password_digest("editor", PASSWORD)))
    state.record("group", "Editors", KindRecord(id=7))
    return state


# --- round trip -----------------------------------------------------------------------------------------------


def test_missing_file_is_an_empty_state(store: StateStore) -> None:
    state = store.load()
    assert state == State()
    assert not store.path.parent.exists()  # loading writes nothing


def test_round_trip(store: StateStore) -> None:
    state = sample_state(store.load())
    store.save(state)
    loaded = store.load()
    assert loaded == state
    assert loaded.pages["/about"].live_version_id == 3
    document = json.loads(store.path.read_text())
    assert document["format_version"] == 1
    assert list(document["pages"]) == ["/", "/about"]  # sorted, so diffs of a committed state stay small


def test_forget_and_evolve(store: StateStore) -> None:
    state = sample_state(store.load())
    page = state.pages["/about"]
    state.record_page("/about", page.evolve(draft_version_id=4))
    assert state.pages["/about"].draft_version_id == 4
    assert state.pages["/about"].live_version_id == page.live_version_id
    with pytest.raises(ValidationError):
        page.evolve(digest="not a digest")
    assert state.forget_page("/about") == page.evolve(draft_version_id=4)
    assert state.forget_page("/about") is None
    assert state.forget_file("logo.png") is not None
    assert state.forget_user("editor") is not None
    assert state.forget("group", "Editors") == KindRecord(id=7)
    assert (state.files, state.users, state.kinds) == ({}, {}, {})


def test_records_are_frozen_and_strict() -> None:
    record = PageRecord(id=1)
    with pytest.raises(ValidationError):
        record.id = 2  # type: ignore[misc]
    with pytest.raises(ValidationError):
        PageRecord(id=1, surprise=True)  # type: ignore[call-arg]
    with pytest.raises(ValidationError):
        UserRecord(id=1, password_digest=PASSWORD)  # a digest field cannot hold a password


def test_site_binding(store: StateStore) -> None:
    state = sample_state(store.load())
    state.bind_site("HTTPS://WWW.example.com/", "/ccm/api/1.0/")  # the same site
    with pytest.raises(StateError, match=r"recorded for https://www\.example\.com, not https://staging\.example\.com"):
        state.bind_site("https://staging.example.com", "/ccm/api/1.0")
    state.bind_site("https://staging.example.com", "/ccm/api/1.0", allow_other_site=True)
    assert state.site is not None
    assert state.site.url == "https://staging.example.com"


def test_save_is_cheap(store: StateStore) -> None:
    state = store.load()
    for i in range(1000):
        state.record_page(
            f"/section-{i // 50}/page-{i}",
            PageRecord(id=1000 + i, digest=H1, live_version_id=3),
        )
        state.record_file(
            f"images/photo-{i}.jpg",
            FileRecord(
                id=f"uuid-{i}", hash=H2, url=f"https://www.example.com/files/photo-{i}.jpg", folder=12, digest=H1
            ),
        )
    for i in range(500):
        state.record_user(f"user{i}", UserRecord(id=2 + i, digest=H1, password_digest=state.password_digest("u", "p")))
    store.save(state)
    timings = []
    for _ in range(5):
        started = time.perf_counter()
        store.save(state)
        timings.append(time.perf_counter() - started)
    assert min(timings) < 0.25, timings  # measured about 6 ms (ext4, with fsync)
    assert store.load() == state


# --- atomic writes --------------------------------------------------------------------------------------------


def test_a_crash_before_replace_keeps_the_old_state(store: StateStore, monkeypatch: pytest.MonkeyPatch) -> None:
    old = sample_state(store.load())
    store.save(old)
    before = store.path.read_bytes()

    def crash(src: str, dst: str) -> None:
        raise KeyboardInterrupt  # like a signal arriving between the write and the rename

    monkeypatch.setattr(os, "replace", crash)
    new = store.load()
    new.forget_page("/about")
    with pytest.raises(KeyboardInterrupt):
        store.compact(new)
    assert store.path.read_bytes() == before
    assert sorted(p.name for p in store.path.parent.iterdir()) == ["state.json", "state.json.key"]


def test_a_leftover_temp_file_is_ignored_then_removed(store: StateStore) -> None:
    store.save(sample_state(store.load()))
    leftover = store.path.parent / ".state.json.abcd1234.saving"
    leftover.write_text('{"format_version": 1, "pa')  # a save killed half-way
    assert store.load().pages.keys() == {"/", "/about"}
    with store.lock("cmssync apply"):
        assert not leftover.exists()


def test_sigkill_during_saves_leaves_a_readable_state(store: StateStore) -> None:
    """Kill a process in the middle of a stream of saves, several times: the state always loads."""
    script = textwrap.dedent(
        f"""
        import sys
        from pathlib import Path
        from cmssync.state.records import PageRecord
        from cmssync.state.store import StateStore
        store = StateStore(Path({str(store.path)!r}))
        state = store.load()
        for i in range(100_000):
            state.record_page(f"/p{{i}}", PageRecord(id=i))
            store.save(state)
            print(i, flush=True)
        """
    )
    for _ in range(3):
        child = _spawn(script)
        assert child.stdout is not None
        for _ in range(20):
            child.stdout.readline()
        child.send_signal(signal.SIGKILL)
        _reap(child)
        assert len(store.load().pages) >= 20


# --- format versions and corruption ---------------------------------------------------------------------------


def test_a_newer_format_is_refused(store: StateStore) -> None:
    store.path.parent.mkdir(parents=True)
    store.path.write_text('{"format_version": 2, "pages": {}, "hovercraft": []}')
    with pytest.raises(StateError, match=r"format_version 2 is newer than this cmssync understands \(1\); upgrade"):
        store.load()


def test_an_older_format_is_migrated(store: StateStore, monkeypatch: pytest.MonkeyPatch) -> None:
    store.path.parent.mkdir(parents=True)
    store.path.write_text('{"format_version": 0, "page_ids": {"/about": 157}}')
    with pytest.raises(StateError, match="cannot migrate state format_version 0"):
        store.load()

    def from_0(raw: dict[str, object]) -> dict[str, object]:
        ids = raw.pop("page_ids")
        assert isinstance(ids, dict)
        return {**raw, "pages": {path: {"id": page_id} for path, page_id in ids.items()}}

    monkeypatch.setitem(state_module.MIGRATIONS, 0, from_0)
    assert store.load().pages == {"/about": PageRecord(id=157)}


@pytest.mark.parametrize(
    ("content", "reason"),
    [
        (b"", "not valid JSON"),
        (b'{"format_version": 1, "pages": {"/": {"id"', "not valid JSON"),
        (b"\xff\xfe garbage", "not valid JSON"),
        (b"[]", "not a cmssync state file"),
        (b'{"pages": {}}', "not a cmssync state file"),
        (b'{"format_version": true}', "not a cmssync state file"),
        (b'{"format_version": 1, "pages": {"/": {"id": "x"}}}', r"pages\./\.id: Input should be a valid integer"),
        (b'{"format_version": 1, "pagez": {}}', "pagez: Extra inputs are not permitted"),
        (b'{"format_version": 1, "users": {"a": {"id": 1, "password_digest": "hunter2"}}}', "users.a.password_digest"),
    ],
)
def test_a_corrupted_state_is_a_clear_error(store: StateStore, content: bytes, reason: str) -> None:
    store.path.parent.mkdir(parents=True)
    store.path.write_bytes(content)
    with pytest.raises(StateError, match=reason) as caught:
        store.load()
    assert str(store.path) in str(caught.value)
    assert "hunter2" not in str(caught.value)


def test_an_unreadable_state_is_a_clear_error(store: StateStore) -> None:
    store.path.mkdir(parents=True)  # a directory where the file should be
    with pytest.raises(StateError, match="cannot read the state"):
        store.load()
    with pytest.raises(StateError, match="cannot write the state"):
        store.save(State())


# --- secrets --------------------------------------------------------------------------------------------------


def test_no_secret_is_ever_written(store: StateStore) -> None:
    state = sample_state(store.load())
    state.record_user("api", UserRecord(id=2, password_digest=state.password_digest("api", TOKEN)))
    store.save(state)
    with store.lock("cmssync apply"):
        store.save(state)
    for path in store.path.parent.iterdir():
        text = path.read_bytes()
        assert PASSWORD.encode() not in text, path
        assert TOKEN.encode() not in text, path


def test_password_digests_are_keyed_and_remembered(store: StateStore) -> None:
    state = sample_state(store.load())
    store.save(state)
    assert stat.S_IMODE(store.key_path.stat().st_mode) == 0o600
    digest = state.users["editor"].password_digest
    assert digest is not None
    assert digest.startswith("hmac-sha256:")
    assert state.password_digest("other", PASSWORD) != digest  # equal passwords do not show

    again = store.load()
    assert not again.password_changed("editor", PASSWORD)
    assert again.password_changed("editor", PASSWORD + "!")
    assert again.password_changed("nobody", PASSWORD)

    store.key_path.unlink()  # a lost key: every password counts as changed, and nothing is created by asking
    lost = store.load()
    assert lost.password_changed("editor", PASSWORD)
    assert not store.key_path.exists()
    lost.password_digest("editor", PASSWORD)
    assert store.key_path.exists()


def test_a_corrupted_key_is_a_clear_error(store: StateStore) -> None:
    store.key_path.parent.mkdir(parents=True)
    store.key_path.write_text("not hex")
    state = sample_state(State())
    store.save(state)
    with pytest.raises(StateError, match="password key is not hex"):
        store.load().password_changed("editor", PASSWORD)


# --- locking --------------------------------------------------------------------------------------------------

HOLD_LOCK = """
import sys
from pathlib import Path
from cmssync.state.store import StateStore
with StateStore(Path({path!r})).lock("cmssync apply"):
    print("locked", flush=True)
    sys.stdin.read()
"""


def _spawn(script: str) -> subprocess.Popen[str]:
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    return subprocess.Popen(
        [sys.executable, "-c", script], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True, env=env
    )


@pytest.fixture
def holder(store: StateStore) -> Iterator[subprocess.Popen[str]]:
    """Another process holding the state lock until its stdin closes."""
    child = _spawn(HOLD_LOCK.format(path=str(store.path)))
    assert child.stdout is not None
    assert child.stdout.readline().strip() == "locked"
    yield child
    _reap(child)


def _reap(child: subprocess.Popen[str]) -> None:
    if child.poll() is None:
        child.kill()
    child.wait()
    for stream in (child.stdin, child.stdout):
        if stream is not None and not stream.closed:
            stream.close()


def test_lock_contention_names_the_holder(store: StateStore, holder: subprocess.Popen[str]) -> None:
    with pytest.raises(StateLockedError) as caught, store.lock("cmssync plan"):
        pass
    message = str(caught.value)
    assert message.startswith(
        f"state is locked by pid {holder.pid} on host {socket.gethostname()} (cmssync apply, since "
    )
    assert f"stop it with `kill {holder.pid}`" in message
    assert "never delete the lock file" in message
    assert caught.value.temporary

    seen = read_lock_holder(store.path)
    assert seen is not None
    assert (seen.pid, seen.command, seen.is_alive()) == (holder.pid, "cmssync apply", True)

    assert holder.stdin is not None
    holder.stdin.close()  # the holder finishes and releases the lock
    holder.wait()
    assert read_lock_holder(store.path) is None
    with store.lock("apply") as mine:
        assert mine.command == "cmssync apply"
        assert read_lock_holder(store.path) == mine


def test_a_killed_holder_leaves_a_stale_lock_that_is_taken_over(
    store: StateStore, holder: subprocess.Popen[str], caplog: pytest.LogCaptureFixture
) -> None:
    holder.kill()
    holder.wait()
    stale = read_lock_holder(store.path)
    assert stale is not None
    assert stale.pid == holder.pid
    assert stale.is_alive() is False
    with caplog.at_level(logging.WARNING, logger="cmssync.state.records"), store.lock("cmssync apply") as mine:
        assert mine.pid == os.getpid()
    assert f"left by pid {holder.pid} on host" in caplog.text
    assert read_lock_holder(store.path) is None


def test_the_lock_is_not_reentrant(store: StateStore) -> None:
    with store.lock("cmssync apply"), pytest.raises(StateLockedError, match=f"pid {os.getpid()}"), store.lock("x"):
        pass
    assert store.lock_path.exists()  # never deleted: see the module docstring


def test_a_lock_holder_on_another_host_cannot_be_checked() -> None:
    assert store_module.LockHolder(1, "elsewhere.invalid", "cmssync apply", "2026-11-21T12:00:00Z").is_alive() is None


# --- the journal (incremental saves) --------------------------------------------------------------------------


def test_a_save_after_load_appends_only_the_changed_records(store: StateStore) -> None:
    store.save(sample_state(store.load()))
    snapshot = store.path.read_bytes()
    state = store.load()
    state.record_page("/new", PageRecord(id=900, digest=H2))
    state.forget_page("/about")
    store.save(state)
    store.save(state)  # nothing changed since: nothing written
    assert store.path.read_bytes() == snapshot  # the snapshot is not rewritten
    lines = store.journal_path.read_text(encoding="utf-8").splitlines()
    assert json.loads(lines[0]) == {"format_version": 1}
    assert [json.loads(line) for line in lines[1:]] == [
        {"kind": "pages", "key": "/about", "record": None},
        {"kind": "pages", "key": "/new", "record": {**PageRecord(id=900, digest=H2).model_dump(mode="json")}},
    ]
    loaded = StateStore(store.path).load()  # another process replays the journal over the snapshot
    assert loaded == state
    assert "/about" not in loaded.pages


def test_a_registered_kinds_records_are_journaled_and_leave_no_trace_when_gone(store: StateStore) -> None:
    store.save(sample_state(store.load()))
    snapshot = store.path.read_bytes()
    with store.lock("cmssync apply"):
        state = store.load()
        state.record("team", "Team A", KindRecord(id=6))
        store.save(state)
        assert json.loads(store.journal_path.read_text().splitlines()[1]) == {
            "kind": "kinds.team",
            "key": "Team A",
            "record": {"id": 6, "digest": None, "values": {}},
        }
        assert StateStore(store.path).load().records_of("team") == {"Team A": KindRecord(id=6)}
    assert json.loads(store.path.read_text())["kinds"] == {"team": {"Team A": {"id": 6, "digest": None, "values": {}}}}
    with store.lock("cmssync apply"):
        state = store.load()
        state.forget("team", "Team A")
        store.save(state)
        assert StateStore(store.path).load() == state  # the journal's removal leaves no empty map behind
    assert store.path.read_bytes() == snapshot  # byte for byte the state without registered kinds


def test_the_end_of_a_locked_run_folds_the_journal_into_the_snapshot(store: StateStore) -> None:
    store.save(sample_state(store.load()))
    with store.lock("cmssync apply"):
        state = store.load()
        state.record_user("new", UserRecord(id=77))
        store.save(state)
        assert "new" not in json.loads(store.path.read_text())["users"]
    assert json.loads(store.path.read_text())["users"]["new"] == {"id": 77, "digest": None, "password_digest": None}
    assert store.journal_path.read_bytes() == b""
    assert store.load() == state


def test_a_run_that_saved_nothing_leaves_the_files_byte_for_byte(store: StateStore) -> None:
    store.save(sample_state(store.load()))
    before = store.path.read_bytes()
    with store.lock("cmssync apply"):
        store.load()
    assert store.path.read_bytes() == before
    assert not store.journal_path.exists()


def test_a_torn_last_line_is_ignored_then_cut_off(store: StateStore) -> None:
    store.save(sample_state(store.load()))
    state = store.load()
    state.record("group", "Writers", KindRecord(id=8))
    store.save(state)
    with store.journal_path.open("ab") as journal:
        journal.write(b'{"kind":"groups","key":"Half","rec')  # a SIGKILL in the middle of an append
    reloaded = store.load()
    assert set(reloaded.records_of("group")) == {"Editors", "Writers"}
    reloaded.record("group", "Readers", KindRecord(id=9))
    store.save(reloaded)
    assert b"Half" not in store.journal_path.read_bytes()
    assert set(store.load().records_of("group")) == {"Editors", "Writers", "Readers"}


def test_a_corrupted_journal_line_is_a_clear_error(store: StateStore) -> None:
    store.save(sample_state(store.load()))
    state = store.load()
    state.record("group", "Writers", KindRecord(id=8))
    store.save(state)
    lines = store.journal_path.read_bytes().splitlines(keepends=True)
    store.journal_path.write_bytes(lines[0] + b"garbage\n" + b"".join(lines[1:]))
    with pytest.raises(StateError, match=r"state\.json\.journal:2: the state journal is corrupted"):
        store.load()
    store.journal_path.write_bytes(lines[0] + b'{"kind": "pages", "key": "/x", "record": {"id": "nope"}}\n')
    with pytest.raises(StateError, match=r"state\.json: the state is invalid: pages\./x\.id"):
        store.load()


def test_the_journal_is_compacted_when_it_outgrows_the_state(store: StateStore) -> None:
    state = store.load()
    state.record_page("/", PageRecord(id=1))
    store.save(state)
    for i in range(3000):  # one record changed 3,000 times: the journal never holds more than ~1,024 lines
        state.record_page("/", PageRecord(id=1, live_version_id=i))
        store.save(state)
        assert store.journal_path.read_bytes().count(b"\n") <= 1026
    assert store.load().pages["/"].live_version_id == 2999


def test_a_state_json_of_an_earlier_cmssync_loads_and_gets_a_journal(store: StateStore) -> None:
    """state.json files written before the journal are snapshots with an empty journal: nothing to migrate."""
    store.path.parent.mkdir(parents=True)
    store.path.write_text(
        '{"format_version": 1, "site": null, "pages": {"/": {"id": 1, "digest": null, "live_version_id": 4,'
        ' "draft_version_id": null, "areas": {"Main": [5, 6]}}}, "files": {}, "users": {}, "groups": {}}'
    )
    state = store.load()
    assert state.pages["/"].live_version_id == 4  # its unused "areas" is dropped
    state.record_page("/", state.pages["/"].evolve(live_version_id=5))
    store.save(state)
    assert store.journal_path.exists()
    assert store.load().pages["/"].live_version_id == 5


def test_a_state_with_the_old_page_areas_field_loads(tmp_path: Path) -> None:
    """``areas`` (block ids that nothing read) was dropped from page records; states that have it still load."""
    path = tmp_path / "state.json"
    path.write_text(
        '{"format_version": 1, "pages": {"/a": {"id": 7, "areas": {"Main": [1, 2]}, "live_version_id": 3}}}'
    )
    state = StateStore(path).load()
    assert state.pages["/a"].id == 7
    assert state.pages["/a"].live_version_id == 3
    assert "areas" not in state.pages["/a"].model_dump()
