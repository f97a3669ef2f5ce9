"""Real git repositories on disk for the proposal tests: a repository holding a content directory, a bare remote,
and a fingerprint of everything a user has checked out (branch, index, working tree)."""

from __future__ import annotations

import hashlib
import subprocess
from pathlib import Path


def git(cwd: Path, *args: str) -> str:
    """``git args`` in ``cwd``; its stdout (fails the test with git's stderr when git fails)."""
    done = subprocess.run(["git", *args], cwd=cwd, capture_output=True, text=True, check=False)
    assert done.returncode == 0, f"git {' '.join(args)}: {done.stderr}"
    return done.stdout


def init_repo(top: Path, *, ignore: tuple[str, ...] = ()) -> Path:
    """A repository at ``top`` on branch ``main`` with a committer, ``.cmssync/`` and ``ignore`` in .gitignore,
    everything already in ``top`` committed."""
    top.mkdir(parents=True, exist_ok=True)
    git(top, "init", "--quiet", "--initial-branch=main")
    git(top, "config", "user.name", "Test Author")
    git(top, "config", "user.email", "author@example.com")
    (top / ".gitignore").write_text("\n".join([".cmssync/", *ignore]) + "\n")
    commit_all(top, "Content")
    return top


def commit_all(top: Path, message: str) -> str:
    git(top, "add", "--all")
    git(top, "commit", "--quiet", "-m", message)
    return git(top, "rev-parse", "HEAD").strip()


def bare_remote(repo: Path, path: Path, name: str = "origin") -> Path:
    """A bare repository at ``path``, added to ``repo`` as remote ``name``."""
    git(path.parent, "init", "--quiet", "--bare", str(path))
    git(repo, "remote", "add", name, str(path))
    return path


def checkout_fingerprint(top: Path) -> dict[str, str]:
    """What the user has checked out: HEAD's ref and commit, the index's bytes, ``git status``, and every file of
    the working tree git sees (tracked, or untracked and not ignored) by the hash of its bytes."""
    names = git(top, "ls-files", "-z", "--cached", "--others", "--exclude-standard").split("\0")
    files = sorted({name for name in names if name and (top / name).is_file()})
    return {
        "HEAD": (top / ".git" / "HEAD").read_text() + git(top, "rev-parse", "HEAD"),
        "index": hashlib.sha256((top / ".git" / "index").read_bytes()).hexdigest(),
        "status": git(top, "status", "--porcelain", "--ignored"),
        **{name: hashlib.sha256((top / name).read_bytes()).hexdigest() for name in files},
    }
