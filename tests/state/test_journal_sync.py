"""The journal's grouped fdatasync runs beside the caller, not in it (``cmssync.state.journal``).

The executor saves from its event loop; an fdatasync there (3 ms or more on a busy disk) held every request in
flight. These tests pin the contract without timing anything: the grouped sync happens in the writer's own thread,
a save does not wait for a slow one, closing the journal (compaction, end of a run) waits for it and syncs what is
left, and a failed background sync is reported by the next save.
"""

from __future__ import annotations

import os
import threading
from pathlib import Path

import pytest

from cmssync.errors import StateError
from cmssync.state import journal
from cmssync.state.records import PageRecord
from cmssync.state.store import StateStore


class SlowDisk:
    """Stands in for ``os.fdatasync``: records which thread synced, and holds the first background sync until
    ``release`` is set, like a disk that takes long."""

    def __init__(self) -> None:
        self.calls: list[str] = []
        self.release = threading.Event()
        self.entered = threading.Event()
        self.fail_next = False

    def __call__(self, fd: int) -> None:
        name = threading.current_thread().name
        self.calls.append(name)
        if name != threading.main_thread().name:
            self.entered.set()
            assert self.release.wait(10), "the test never released the background sync"
            if self.fail_next:
                self.fail_next = False
                raise OSError(5, "Input/output error")


@pytest.fixture
def disk(monkeypatch: pytest.MonkeyPatch) -> SlowDisk:
    slow = SlowDisk()
    monkeypatch.setattr(journal.os, "fdatasync", slow)
    monkeypatch.setattr(journal, "SYNC_INTERVAL", 0.0)  # every append asks for a sync
    return slow


def _store_with_snapshot(tmp_path: Path) -> StateStore:
    store = StateStore(tmp_path / "state.json")
    state = store.load()
    state.record_page("/a", PageRecord(id=1))
    store.save(state)  # the first save writes the snapshot; saves of a loaded state append to the journal
    return store


def test_a_save_does_not_wait_for_a_slow_sync_and_closing_waits_for_it(tmp_path: Path, disk: SlowDisk) -> None:
    store = _store_with_snapshot(tmp_path)
    state = store.load()
    state.record_page("/b", PageRecord(id=2))
    store.save(state)  # asks for a sync, which the disk holds
    assert disk.entered.wait(10)
    state.record_page("/c", PageRecord(id=3))
    store.save(state)  # returns although the sync in progress has not finished
    assert [name for name in disk.calls if name != threading.main_thread().name] == ["cmssync-journal-sync"]

    releaser = threading.Timer(0.05, disk.release.set)
    releaser.start()
    store.compact()  # closes the journal: waits for the held sync, then syncs the rest
    releaser.join()
    assert disk.release.is_set()
    assert not any(thread.name == "cmssync-journal-sync" for thread in threading.enumerate())
    assert StateStore(tmp_path / "state.json").load().pages.keys() == {"/a", "/b", "/c"}


def test_a_failed_background_sync_is_reported_by_the_next_save(tmp_path: Path, disk: SlowDisk) -> None:
    store = _store_with_snapshot(tmp_path)
    state = store.load()
    disk.fail_next = True
    disk.release.set()
    state.record_page("/b", PageRecord(id=2))
    store.save(state)
    writer = store._journal
    assert writer is not None
    assert writer._syncer is not None
    writer._stop_syncer()  # let the failed sync finish before the next save looks
    state.record_page("/c", PageRecord(id=3))
    with pytest.raises(StateError, match="Input/output error"):
        store.save(state)


def test_closing_syncs_what_the_background_did_not_cover(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    synced: list[int] = []
    monkeypatch.setattr(journal.os, "fdatasync", lambda fd: synced.append(os.fstat(fd).st_size))
    writer = journal.JournalWriter(tmp_path / "j", valid_length=0, format_version=1)
    writer.append([("pages", "/a", {"id": 1})])  # within the interval: no sync asked for
    writer.close()
    assert synced == [(tmp_path / "j").stat().st_size]  # one sync, in close, covering every line
