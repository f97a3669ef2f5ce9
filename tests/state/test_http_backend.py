"""The HTTP state backend against a Terraform-style state server on loopback: round trips, batched saves, locks
with ids, waiting, force-unlock, and bad answers (409/423 with a holder, 500, garbage) that change nothing."""

from __future__ import annotations

import json
import os
import re
import socket
import threading
import time
from pathlib import Path
from typing import Any

import pytest

from cmssync.config import StateSettings
from cmssync.errors import StateError, StateLockedError
from cmssync.state import http_backend
from cmssync.state.backends import force_unlock, waiting_lock
from cmssync.state.http_backend import HttpStateBackend, StateServerError
from cmssync.state.records import FileRecord, PageRecord, State, UserRecord
from tests.state.state_server import Scripted, StateServer

DIGEST = "sha256:" + "ab" * 32
KEY_HEX = "5e" * 32


@pytest.fixture(autouse=True)
def quick_retries(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(http_backend, "_RETRY_WAITS", (0.01, 0.01))


def backend(server: StateServer, tmp_path: Path, **settings: Any) -> HttpStateBackend:
    lock_timeout = settings.pop("lock_timeout", 0.0)
    key = settings.pop("key", None)
    chosen = StateSettings.model_validate(server.settings(**settings))
    return HttpStateBackend(
        chosen,
        key_path=tmp_path / "state.json.key",
        spool_path=tmp_path / "state.json.spool",
        key=key,
        lock_timeout=lock_timeout,
    )


def record(state: State, n: int) -> None:
    state.record_page(f"/p{n}", PageRecord(id=n, digest=DIGEST, live_version_id=1))


def test_round_trip_and_no_state_yet(server: StateServer, tmp_path: Path) -> None:
    store = backend(server, tmp_path)
    state = store.load()
    assert state == State()
    state.bind_site("http://cms.example", "/ccm/api/1.0")
    record(state, 1)
    state.record_file("logo.png", FileRecord(id="ab-cd", hash=DIGEST, url="http://cms.example/logo.png"))
    with store.try_lock("cmssync apply"):
        store.save(state)
    document = json.loads(server.documents["site"])
    assert document["format_version"] == 1
    assert set(document["pages"]) == {"/p1"}
    assert document["serial"] == 1
    again_store = backend(server, tmp_path)
    again = again_store.load()
    assert again == state
    with again_store.try_lock("cmssync apply"):
        record(again, 2)
        again_store.save(again)
        again_store.compact()
        again_store.compact(again)
    assert json.loads(server.documents["site"])["serial"] == 2  # one more per run, not per upload


def test_saves_are_batched_and_the_end_of_the_run_uploads(server: StateServer, tmp_path: Path) -> None:
    store = backend(server, tmp_path, save_interval=3600)
    state = store.load()
    with store.try_lock("cmssync apply") as holder:
        for n in range(200):
            record(state, n)
            store.save(state)
        assert server.requests("POST") == []  # 200 completed changes, no request yet
    posts = server.requests("POST")
    assert len(posts) == 1
    assert posts[0].query == {"ID": holder.id}  # written under the lock's id
    assert len(json.loads(server.documents["site"])["pages"]) == 200


def test_save_interval_zero_uploads_every_save(server: StateServer, tmp_path: Path) -> None:
    store = backend(server, tmp_path, save_interval=0)
    state = store.load()
    with store.try_lock("cmssync apply"):
        for n in range(5):
            record(state, n)
            store.save(state)
        assert len(server.requests("POST")) == 5


def test_a_held_lock_names_its_holder_and_refuses(server: StateServer, tmp_path: Path) -> None:
    first = backend(server, tmp_path)
    with (
        first.try_lock("cmssync apply") as holder,
        pytest.raises(StateLockedError) as caught,
        backend(server, tmp_path).try_lock("cmssync apply"),
    ):
        pass
    message = str(caught.value)
    assert f"pid {os.getpid()} on host {socket.gethostname()} (cmssync apply, since {holder.since}" in message
    assert f"lock id {holder.id}" in message
    assert f"`cmssync force-unlock {holder.id}`" in message
    assert caught.value.temporary
    assert server.locks == {}  # released at the end of the first run


def test_a_second_run_waits_with_a_lock_timeout_then_proceeds(server: StateServer, tmp_path: Path) -> None:
    first = backend(server, tmp_path)
    taken = threading.Event()

    def hold() -> None:
        with first.try_lock("cmssync apply"):
            taken.set()
            time.sleep(1.0)

    thread = threading.Thread(target=hold)
    thread.start()
    assert taken.wait(5)
    started = time.monotonic()
    second = backend(server, tmp_path, lock_timeout=20)
    with waiting_lock(second, "cmssync apply") as mine:
        waited = time.monotonic() - started
        assert server.locks["site"]["ID"] == mine.id
    thread.join()
    assert 0.5 < waited < 10


def test_a_lock_timeout_that_runs_out_says_how_long_it_waited(server: StateServer, tmp_path: Path) -> None:
    with backend(server, tmp_path).try_lock("cmssync apply"):
        started = time.monotonic()
        with (
            pytest.raises(StateLockedError, match=r"waited 0\.6 s for it"),
            waiting_lock(backend(server, tmp_path, lock_timeout=0.6), "cmssync apply"),
        ):
            pass
        assert time.monotonic() - started >= 0.6


@pytest.mark.parametrize("status", [409, 423])
def test_a_conflict_without_holder_details_is_still_clear(server: StateServer, tmp_path: Path, status: int) -> None:
    server.script.append(Scripted("LOCK", status, b"<html>locked</html>"))
    with (
        pytest.raises(StateLockedError, match=re.escape(f"does not say which ({status}: <html>locked</html>)")),
        backend(server, tmp_path).try_lock("cmssync apply"),
    ):
        pass


def test_a_server_error_is_retried_then_reported_and_changes_nothing(server: StateServer, tmp_path: Path) -> None:
    server.documents["site"] = b'{"format_version": 1}'
    server.script.extend(Scripted("GET", 500, b"database down") for _ in range(3))
    with pytest.raises(StateServerError) as caught:
        backend(server, tmp_path).load()
    assert "GET " + server.base + "/state/site: the state server answered 500 Internal Server Error" in str(
        caught.value
    )
    assert "(database down)" in str(caught.value)
    assert caught.value.temporary
    assert len(server.requests("GET")) == 3
    assert server.documents["site"] == b'{"format_version": 1}'


def test_one_server_error_is_retried_silently(server: StateServer, tmp_path: Path) -> None:
    server.script.append(Scripted("GET", 503))
    assert backend(server, tmp_path).load() == State()


@pytest.mark.parametrize(
    ("document", "reason"),
    [
        (b"<html>proxy login</html>", "the server's answer is not JSON"),
        (b'{"version": 4, "terraform_version": "1.9.0"}', "holds a Terraform state"),
        (b'["a"]', "not a cmssync state (no integer format_version)"),
        (b'{"format_version": 1, "pages": {"/a": {"id": "x"}}}', "the state is invalid: pages./a.id"),
        (b'{"format_version": 99}', "newer than this cmssync understands"),
    ],
)
def test_a_bad_document_is_a_clear_error(server: StateServer, tmp_path: Path, document: bytes, reason: str) -> None:
    server.documents["site"] = document
    with pytest.raises(StateError, match=re.escape(reason)):
        backend(server, tmp_path).load()
    assert server.documents["site"] == document


def test_an_unreachable_server_is_a_clear_error(tmp_path: Path) -> None:
    with socket.socket() as unused:
        unused.bind(("127.0.0.1", 0))
        port = unused.getsockname()[1]
    chosen = StateSettings(backend="http", address=f"http://127.0.0.1:{port}/state/site")
    store = HttpStateBackend(chosen, key_path=tmp_path / "k", spool_path=tmp_path / "s")
    with pytest.raises(StateServerError, match=r"the state server cannot be reached .* after 3 attempts"):
        store.load()


def test_a_final_upload_that_fails_fails_the_run_keeps_the_document_and_releases_the_lock(
    server: StateServer, tmp_path: Path
) -> None:
    server.documents["site"] = b'{"format_version": 1}'
    store = backend(server, tmp_path, save_interval=3600)
    state = store.load()
    server.script.extend(Scripted("POST", 500, b"disk full") for _ in range(3))
    record(state, 7)
    with pytest.raises(StateError) as caught, store.try_lock("cmssync apply"):
        store.save(state)
    assert "answered 500 Internal Server Error (disk full): could not save the state" in str(caught.value)
    assert f"the records of this run are kept in {store.spool.path}" in str(caught.value)
    assert server.documents["site"] == b'{"format_version": 1}'
    assert server.locks == {}
    recovered = backend(server, tmp_path).load()  # the next run on this machine carries on from the spool
    assert "/p7" in recovered.pages


def test_an_intermediate_upload_failure_is_retried_at_a_later_save(
    server: StateServer, tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    store = backend(server, tmp_path, save_interval=0)
    state = store.load()
    server.script.extend(Scripted("POST", 502) for _ in range(3))
    with store.try_lock("cmssync apply"):
        record(state, 1)
        store.save(state)  # fails (three attempts), logged, kept pending
        assert "site" not in server.documents
        record(state, 2)
        store.save(state)
        assert set(json.loads(server.documents["site"])["pages"]) == {"/p1", "/p2"}
    assert "could not save the state yet, will try again" in caplog.text


def test_a_write_without_the_lock_id_is_refused_by_the_server(server: StateServer, tmp_path: Path) -> None:
    with backend(server, tmp_path).try_lock("cmssync apply"):
        intruder = backend(server, tmp_path)
        state = State()
        record(state, 1)
        with pytest.raises(StateError, match="answered 409 Conflict"):
            intruder.compact(state)
    assert "site" not in server.documents or "/p1" not in json.loads(server.documents["site"]).get("pages", {})


def test_force_unlock_releases_a_lock_left_by_a_run_that_is_gone(server: StateServer, tmp_path: Path) -> None:
    server.locks["site"] = {
        "ID": "dead-beef",
        "Operation": "cmssync apply",
        "Info": "pid 4242",
        "Who": "ci@runner-17",
        "Created": "2026-11-23T10:00:00Z",
    }
    asked: list[str] = []

    def confirm(holder: Any) -> bool:
        asked.append(holder.describe())
        return True

    line = force_unlock(backend(server, tmp_path), "dead-beef", confirm=confirm)
    assert asked == [
        "pid 4242 on host runner-17 (cmssync apply, since 2026-11-23T10:00:00Z, user ci, lock id dead-beef)"
    ]
    assert line.startswith("released the lock dead-beef of pid 4242 on host runner-17")
    assert server.locks == {}
    assert [seen.method for seen in server.seen] == ["LOCK", "UNLOCK"]  # the probe, then the release


def test_force_unlock_refuses_a_live_holder_on_this_host_a_wrong_id_and_a_no(
    server: StateServer, tmp_path: Path
) -> None:
    store = backend(server, tmp_path)
    with store.try_lock("cmssync apply") as holder:
        with pytest.raises(StateError, match=f"its holder is running on this host.*`kill {os.getpid()}`"):
            force_unlock(backend(server, tmp_path), holder.id, confirm=lambda holder: True)
        with pytest.raises(StateError, match=f"under lock id {holder.id}, not wrong-id; nothing unlocked"):
            force_unlock(backend(server, tmp_path), "wrong-id", confirm=lambda holder: True)
        assert server.locks["site"]["ID"] == holder.id
    server.locks["site"] = {"ID": "x1", "Who": "ci@elsewhere", "Info": "pid 1"}
    with pytest.raises(StateError, match="not confirmed; nothing unlocked"):
        force_unlock(backend(server, tmp_path), "x1", confirm=lambda holder: False)
    assert server.locks["site"]["ID"] == "x1"


def test_force_unlock_of_a_free_state_does_nothing(server: StateServer, tmp_path: Path) -> None:
    assert "is not locked" in force_unlock(backend(server, tmp_path), "any", confirm=lambda holder: True)
    assert server.locks == {}


def test_gitlab_methods_and_basic_auth(tmp_path: Path) -> None:
    with StateServer(
        credentials=("gitlab-ci-token", "glpat-secret-token"), lock_status=409, require_serial=True
    ) as server:
        store = backend(
            server,
            tmp_path,
            lock_method="POST",
            unlock_method="DELETE",
            username="gitlab-ci-token",
            password="glpat-secret-token",
        )
        state = store.load()
        with store.try_lock("cmssync apply"):
            record(state, 1)
            store.save(state)
        assert [seen.method for seen in server.seen] == ["GET", "POST", "POST", "DELETE"]
        assert json.loads(server.documents["site"])["serial"] == 1
        wrong = backend(server, tmp_path, username="gitlab-ci-token", password="not-the-token")
        with pytest.raises(StateError) as caught:
            wrong.load()
        assert "answered 401 Unauthorized (bad credentials): could not read the state" in str(caught.value)
        assert "not-the-token" not in str(caught.value)


def test_the_password_key_never_travels_with_the_state(server: StateServer, tmp_path: Path) -> None:
    store = backend(server, tmp_path, key=bytes.fromhex(KEY_HEX), save_interval=0)
    state = store.load()
    digest = state.password_digest("jane", "pw-123456")
    state.record_user("jane", UserRecord(id=3, password_digest=digest))
    with store.try_lock("cmssync apply"):
        store.save(state)
    assert KEY_HEX.encode() not in server.documents["site"]
    assert not (tmp_path / "state.json.key").exists()  # the key came from CMSSYNC_STATE_KEY: nothing on disk
    assert backend(server, tmp_path, key=bytes.fromhex(KEY_HEX)).load().password_changed("jane", "pw-123456") is False
    without = backend(server, tmp_path).load()  # another key: every password counts as changed
    assert without.password_changed("jane", "pw-123456") is True


def test_without_a_key_variable_a_local_key_file_is_made_with_a_warning(
    server: StateServer, tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    state = backend(server, tmp_path).load()
    state.password_digest("jane", "pw-123456")
    assert (tmp_path / "state.json.key").exists()
    assert "set CMSSYNC_STATE_KEY instead" in caplog.text


def test_the_next_run_on_this_machine_recovers_what_a_killed_run_had_not_uploaded(
    server: StateServer, tmp_path: Path
) -> None:
    killed = backend(server, tmp_path, save_interval=3600)
    state = killed.load()
    for n in range(30):  # a run's saves; then it dies (its lock is not the point here)
        record(state, n)
        killed.save(state)
    assert "site" not in server.documents  # nothing uploaded yet: the interval is an hour

    survivor = backend(server, tmp_path)
    assert len(survivor.load().pages) == 30
    with survivor.try_lock("cmssync apply"):
        pass
    assert len(json.loads(server.documents["site"])["pages"]) == 30  # uploaded at the end of the next run
    assert not survivor.spool.meta_path.exists()  # and the spool is gone
    assert backend(server, tmp_path).load() == survivor.load()


def test_a_spool_older_than_the_remote_state_is_dropped(
    server: StateServer, tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    killed = backend(server, tmp_path, save_interval=3600)
    state = killed.load()
    record(state, 1)
    killed.save(state)  # and dies
    other = backend(server, tmp_path.parent / "elsewhere")  # another machine writes twice meanwhile
    for n in (2, 3):
        theirs = other.load()
        with other.try_lock("cmssync apply"):
            record(theirs, n)
            other.save(theirs)
    assert set(backend(server, tmp_path).load().pages) == {"/p2", "/p3"}
    assert "was written by another run since this one was interrupted" in caplog.text


def test_the_spool_of_a_live_run_is_not_taken_by_a_reader(server: StateServer, tmp_path: Path) -> None:
    running = backend(server, tmp_path, save_interval=3600)
    state = running.load()
    with running.try_lock("cmssync apply"):
        record(state, 1)
        running.save(state)
        meta = json.loads(running.spool.meta_path.read_text())
        meta["pid"] = os.getppid()  # the spool of another live process on this host (pytest's parent)
        running.spool.meta_path.write_text(json.dumps(meta))
        assert backend(server, tmp_path).load().pages == {}  # `plan` beside a running apply reads the server


def test_a_killed_run_that_never_uploaded_does_not_take_another_runs_upload_for_its_own(
    server: StateServer, tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    """Issue 29 item 6: serial = start + 1 is another checkout's upload unless this spool noted it uploaded it."""
    killed = backend(server, tmp_path, save_interval=3600)
    state = killed.load()
    record(state, 1)
    killed.save(state)  # and dies before any upload
    other = backend(server, tmp_path.parent / "other-checkout")
    theirs = other.load()
    with other.try_lock("cmssync apply"):
        record(theirs, 2)
        other.save(theirs)
    assert json.loads(server.documents["site"])["serial"] == 1

    assert set(backend(server, tmp_path).load().pages) == {"/p2"}
    assert "was written by another run since this one was interrupted" in caplog.text


def test_a_killed_run_recovers_over_its_own_upload(server: StateServer, tmp_path: Path) -> None:
    killed = backend(server, tmp_path, save_interval=0)
    state = killed.load()
    record(state, 1)
    killed.save(state)  # uploaded (serial 1)
    killed.save_interval = 3600
    record(state, 2)
    killed.save(state)  # only in the spool; then the run dies
    assert set(json.loads(server.documents["site"])["pages"]) == {"/p1"}

    assert set(backend(server, tmp_path).load().pages) == {"/p1", "/p2"}
