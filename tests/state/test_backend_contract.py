"""What every state backend promises (``cmssync.state.backends.StateBackend``), checked on each: the local file,
the HTTP server and PostgreSQL (a real server: tests.support.postgres). A later backend joins by adding one factory
to ``BACKENDS``."""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from cmssync.config import Settings, StateSettings
from cmssync.errors import StateLockedError
from cmssync.state import http_backend
from cmssync.state.backends import LocalStateBackend, StateBackend, force_unlock, waiting_lock
from cmssync.state.http_backend import HttpStateBackend
from cmssync.state.postgres_backend import PostgresStateBackend
from cmssync.state.records import FileRecord, KindRecord, PageRecord, State
from tests.state.state_server import StateServer

DIGEST = "sha256:" + "cd" * 32
Open = Callable[..., StateBackend]
"""A fresh backend on the same stored state (``lock_timeout`` in seconds), as a second run would open it."""


def _local(tmp_path: Path, request: pytest.FixtureRequest) -> Iterator[Open]:
    yield lambda lock_timeout=0.0: LocalStateBackend(tmp_path / "state.json", lock_timeout=lock_timeout)


def _http(tmp_path: Path, request: pytest.FixtureRequest) -> Iterator[Open]:
    with StateServer() as server:

        def open_backend(lock_timeout: float = 0.0) -> StateBackend:
            return HttpStateBackend(
                StateSettings.model_validate(server.settings()),
                key_path=tmp_path / "state.json.key",
                spool_path=tmp_path / "state.json.spool",
                lock_timeout=lock_timeout,
            )

        yield open_backend


def _postgresql(tmp_path: Path, request: pytest.FixtureRequest) -> Iterator[Open]:
    url = request.getfixturevalue("postgres_state")  # skips when PostgreSQL is not installed
    settings = Settings.model_validate({"state": url}).state_settings
    yield lambda lock_timeout=0.0: PostgresStateBackend(
        settings, key_path=tmp_path / "state.json.key", lock_timeout=lock_timeout
    )


BACKENDS = {"file": _local, "http": _http, "postgresql": _postgresql}


@pytest.fixture(params=sorted(BACKENDS))
def opened(request: pytest.FixtureRequest, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Open]:
    monkeypatch.setattr(http_backend, "_RETRY_WAITS", (0.01, 0.01))
    yield from BACKENDS[request.param](tmp_path, request)


def _recorded(n: int) -> State:
    state = State()
    state.bind_site("http://cms.example", "/ccm/api/1.0")
    for i in range(1, n + 1):
        state.record_page(f"/p{i}", PageRecord(id=i, digest=DIGEST, live_version_id=1))
    state.record_file("logo.png", FileRecord(id="ab-cd", hash=DIGEST, url="http://cms.example/logo.png"))
    return state


def test_nothing_stored_yet_loads_an_empty_state(opened: Open) -> None:
    assert opened().load() == State()


def test_what_a_run_saves_the_next_run_loads(opened: Open) -> None:
    store = opened()
    with store.try_lock("cmssync apply"):
        store.save(_recorded(1))
        bigger = _recorded(3)
        store.save(bigger)
    assert opened().load() == bigger


def test_a_registered_kinds_records_are_saved_loaded_and_forgotten(opened: Open) -> None:
    """A kind registered with cmssync.sync.kinds keeps its records in the state like the built-in kinds: saved
    (journaled by the file backend) and loaded by every backend; forgetting the last one leaves no trace."""
    store = opened()
    with store.try_lock("cmssync apply"):
        state = store.load()
        state.record("team", "Team B", KindRecord(id=7, digest=DIGEST, values={"members": 3}))
        state.record("team", "Team A", KindRecord(id=6))
        store.save(state)
        loaded = opened().load()  # before the end of the run: from the journal, or what was uploaded
        assert loaded.records_of("team")["Team B"] == KindRecord(id=7, digest=DIGEST, values={"members": 3})
    assert opened().load() == state
    plain = _recorded(1)
    with store.try_lock("cmssync apply"):
        state = store.load()
        state.forget("team", "Team A")
        state.forget("team", "Team B")
        state.bind_site("http://cms.example", "/ccm/api/1.0")
        state.record_page("/p1", plain.pages["/p1"])
        store.save(state)
    again = opened().load()
    assert again.records_of("team") == {}
    assert again == state
    assert "kinds" not in again.model_dump(mode="json")  # written as a state without registered kinds


def test_compact_makes_the_saves_durable_while_the_run_goes_on(opened: Open) -> None:
    store = opened()
    with store.try_lock("cmssync apply"):
        state = _recorded(2)
        store.save(state)
        store.compact(state)
        assert opened().load() == state


def test_a_held_lock_refuses_a_second_run_and_names_its_holder(opened: Open) -> None:
    with opened().try_lock("cmssync apply") as holder:
        with pytest.raises(StateLockedError, match=holder.id) as caught, opened().try_lock("cmssync plan"):
            pass
        assert caught.value.temporary
        seen = opened().inspect_lock()  # force-unlock's view of the holder
        assert seen is not None
        assert seen.id == holder.id
        recorded = opened().lock_holder()  # status's view: the holder, or None where the backend cannot tell
        assert recorded is None or recorded.id == holder.id
    with opened().try_lock("cmssync apply"):  # released at the end of the run
        pass


def test_a_second_run_with_a_lock_timeout_waits_for_the_first(opened: Open) -> None:
    taken = threading.Event()

    def first_run() -> None:
        with opened().try_lock("cmssync apply"):
            taken.set()
            time.sleep(0.6)

    thread = threading.Thread(target=first_run)
    thread.start()
    assert taken.wait(5)
    started = time.monotonic()
    with waiting_lock(opened(lock_timeout=20), "cmssync apply"):
        waited = time.monotonic() - started
    thread.join()
    assert 0.3 < waited < 10


def test_force_unlock_of_a_free_state_does_nothing(opened: Open) -> None:
    assert "is not locked" in force_unlock(opened(), "any", confirm=lambda holder: True)
    with opened().try_lock("cmssync apply"):
        pass
