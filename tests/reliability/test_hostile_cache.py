"""Issue 29, item 1: a content repository cannot make cmssync run code or trust derived data it did not make.

A pull request may add any file to the content directory, with the owner and mode ``git checkout`` gives it. The
parse cache is pickled (code), so it lives in the per-user cache and is read only when signed with this user's key
(cmssync/usercache.py); the file-hash cache lives there too. These tests plant a pickle whose loading would create a
marker file, in the old place inside the content and in the new per-user place, run ``cmssync plan`` as a separate
process the way CI does, and show the marker never appears, and that no derived file is written into the content.
"""

from __future__ import annotations

import hashlib
import os
import pickle
import secrets
import subprocess
import sys
from pathlib import Path

import pytest

from cmssync.emulator.embedded import Sandbox
from cmssync.usercache import KEY_FILE, derived_cache_dir, sign, usable_root
from tests.support.reliability_report import ReliabilityReport
from tests.support.sites import sandbox_environment


class _Hostile:
    def __init__(self, marker: Path) -> None:
        self.marker = marker

    def __reduce__(self) -> tuple[object, tuple[str, ...]]:
        return (os.system, (f"touch {self.marker}",))


def _content(root: Path) -> Path:
    (root / "pages").mkdir(parents=True)
    (root / "pages/index.yaml").write_text("name: Home\n")
    return root


def _plan(root: Path, environment: dict[str, str]) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "cmssync", "plan", str(root)],
        env={**os.environ, **environment},
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )


def test_a_cache_committed_to_the_content_runs_nothing(tmp_path: Path, sandbox: Sandbox) -> None:
    root, marker = _content(tmp_path / "site"), tmp_path / "PWNED"
    hostile = pickle.dumps(_Hostile(marker))
    (root / ".cmssync").mkdir()
    for name in ("parse-cache.pickle", "file-hashes.json"):
        (root / ".cmssync" / name).write_bytes(hostile)
        (root / ".cmssync" / name).chmod(0o644)  # what git checkout gives
    (root / "cmssync.yaml").write_text("{}\n")
    environment = sandbox_environment(sandbox, tmp_path / "state" / "state.json")
    result = _plan(root, environment)
    assert result.returncode in (0, 2), result.stderr
    assert not marker.exists()
    assert sorted(path.name for path in (root / ".cmssync").iterdir()) == ["file-hashes.json", "parse-cache.pickle"]
    assert (root / ".cmssync/parse-cache.pickle").read_bytes() == hostile  # not read, not rewritten


def test_a_planted_per_user_cache_runs_nothing_and_is_replaced(tmp_path: Path, sandbox: Sandbox) -> None:
    root, marker = _content(tmp_path / "site"), tmp_path / "PWNED"
    cache_root = usable_root([root, tmp_path / "state"])
    assert cache_root is not None
    derived = derived_cache_dir(cache_root, root)
    assert derived is not None
    assert not str(derived.resolve()).startswith(str(root.resolve()))
    planted = derived / "parse-cache.pickle"
    planted.write_bytes(pickle.dumps(_Hostile(marker)))
    planted.chmod(0o600)  # even private and owned by this user, an unsigned file is not ours
    environment = sandbox_environment(sandbox, tmp_path / "state" / "state.json")
    first = _plan(root, environment)
    assert first.returncode in (0, 2), first.stderr
    assert not marker.exists()
    assert planted.read_bytes() != pickle.dumps(_Hostile(marker))  # rebuilt, signed, by the run
    second = _plan(root, environment)
    assert second.returncode == first.returncode
    assert not marker.exists()


def _plant_signed(cache_home: Path, content: Path, marker: Path) -> None:
    """What a repository can commit when ``XDG_CACHE_HOME`` points into it: a cache key (mode 0600, as a clone under
    umask 077 makes it) and, in the content's derived directory, a parse cache signed with that key."""
    root = cache_home / "cmssync"
    digest = hashlib.sha256(str(content.resolve()).encode()).hexdigest()[:32]
    derived = root / "content" / digest
    derived.mkdir(parents=True)
    for directory in (cache_home, root, root / "content", derived):
        directory.chmod(0o700)
    key = secrets.token_bytes(32)
    (root / KEY_FILE).write_bytes(key)
    (derived / "parse-cache.pickle").write_bytes(sign(key, pickle.dumps(_Hostile(marker))))
    for path in (root / KEY_FILE, derived / "parse-cache.pickle"):
        path.chmod(0o600)


@pytest.mark.parametrize("place", ["the content's repository", "the state's folder"])
def test_a_key_and_signed_cache_planted_in_a_repository_run_nothing(
    place: str, tmp_path: Path, sandbox: Sandbox, reliability_report: ReliabilityReport
) -> None:
    """Issue 37 item 2: a cache root inside the git work tree holding the content (a CI caching pattern) or inside
    the state's folder (committed by the documented CI workflow) is refused, key and caches alike."""
    repository = tmp_path / "checkout"
    subprocess.run(["git", "init", "-q", str(repository)], check=True)
    root, marker, state = _content(repository / "site"), tmp_path / "PWNED", tmp_path / "state-branch"
    cache_home = repository / ".ci-cache" if place == "the content's repository" else state
    _plant_signed(cache_home, root, marker)
    planted = sorted(path for path in cache_home.rglob("*"))
    environment = {**sandbox_environment(sandbox, state / "state.json"), "XDG_CACHE_HOME": str(cache_home)}
    result = _plan(root, environment)
    reliability_report.add(cases_tried=1, planted_caches=1, code_executed_from_planted_cache=int(marker.exists()))
    assert result.returncode in (0, 2), result.stderr
    assert not marker.exists()
    assert sorted(path for path in cache_home.rglob("*")) == planted  # nothing written there either
