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
    the working tree (``.git`` aside) by the hash of its bytes."""
    files = sorted(p for p in top.rglob("*") if p.is_file() and ".git" not in p.relative_to(top).parts[:1])
    return {
        "HEAD": (top / ".git" / "HEAD").read_text() + git(top, "rev-parse", "HEAD"),
        "index": hashlib.sha256((top / ".git" / "index").read_bytes()).hexdigest(),
        "status": git(top, "status", "--porcelain", "--ignored"),
        **{str(p.relative_to(top)): hashlib.sha256(p.read_bytes()).hexdigest() for p in files},
    }
