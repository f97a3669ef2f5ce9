"""write_atomically's permissions: content follows the umask (or keeps an existing file's bits), secrets are 0600."""

from __future__ import annotations

import os
import stat
from collections.abc import Iterator
from pathlib import Path

import pytest

from cmssync.api.auth import write_secret_file
from cmssync.fileio import TEMP_SUFFIX, move_atomically, write_atomically
from cmssync.state.records import State
from cmssync.state.store import StateStore


@pytest.fixture
def umask() -> Iterator[None]:
    previous = os.umask(0o022)
    try:
        yield
    finally:
        os.umask(previous)


def _mode(path: Path) -> int:
    return stat.S_IMODE(path.stat().st_mode)


def test_a_new_file_gets_the_umask_mode(tmp_path: Path, umask: None) -> None:
    target = tmp_path / "pages" / "about.yaml"
    write_atomically(target, "name: About\n", durable=False)
    assert _mode(target) == 0o644
    assert target.read_text() == "name: About\n"
    os.umask(0o007)
    other = tmp_path / "shared.yaml"
    write_atomically(other, b"x")
    assert _mode(other) == 0o660


def test_an_existing_file_keeps_its_mode(tmp_path: Path, umask: None) -> None:
    target = tmp_path / "users.yaml"
    target.write_text("old\n")
    target.chmod(0o664)
    write_atomically(target, "new\n")
    assert (_mode(target), target.read_text()) == (0o664, "new\n")


def test_a_moved_file_gets_the_mode_a_written_one_would(tmp_path: Path, umask: None) -> None:
    staged = tmp_path / ".cmssync" / "staging" / "1-logo.png"
    staged.parent.mkdir(parents=True)
    staged.write_bytes(b"new")
    staged.chmod(0o600)  # as a download's temporary file is made
    target = tmp_path / "files" / "logo.png"
    move_atomically(staged, target, durable=False)
    assert (_mode(target), target.read_bytes(), staged.exists()) == (0o644, b"new", False)
    again = staged.parent / "2-logo.png"
    again.write_bytes(b"newer")
    target.chmod(0o664)
    move_atomically(again, target)
    assert (_mode(target), target.read_bytes()) == (0o664, b"newer")
    assert not list(target.parent.glob(f"*{TEMP_SUFFIX}"))


def test_an_explicit_mode_wins_and_no_temporary_file_is_left(tmp_path: Path, umask: None) -> None:
    target = tmp_path / "secret.json"
    target.write_text("{}")
    target.chmod(0o644)
    write_atomically(target, "{}", mode=0o600)
    assert _mode(target) == 0o600
    assert not list(tmp_path.glob(f"*{TEMP_SUFFIX}"))


def test_secrets_and_the_state_stay_private(tmp_path: Path, umask: None) -> None:
    tokens = tmp_path / ".cmssync" / "tokens.json"
    write_secret_file(tokens, '{"refresh_token": "r"}')
    assert _mode(tokens) == 0o600
    store = StateStore(tmp_path / ".cmssync" / "state.json")
    store.save(State())
    assert _mode(tmp_path / ".cmssync" / "state.json") == 0o600


def test_a_failed_write_leaves_the_old_file(tmp_path: Path, umask: None) -> None:
    target = tmp_path / "page.yaml"
    target.write_text("old\n")

    with pytest.raises(TypeError):
        write_atomically(target, 42)  # type: ignore[arg-type]
    assert target.read_text() == "old\n"
    assert not list(tmp_path.glob(f"*{TEMP_SUFFIX}"))
