"""The ``git`` binary, run for one repository: where a content directory sits in it, branches, pushes.

Every call is ``git -C <top> …`` through :func:`subprocess.run` with a timeout; a failure is a :class:`GitError`
carrying git's own reason (its ``fatal:``/``error:``/``remote:`` lines), credentials in URLs masked. Nothing here
touches the checked-out branch, the index or the working tree: the commit itself is built elsewhere
(:mod:`cmssync.gitrepo.commit`) in a worktree of its own.
"""

from __future__ import annotations

import os
import re
import subprocess
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path, PurePosixPath

from cmssync.errors import CmsSyncError

GIT_TIMEOUT = 120.0
"""Seconds any one git command may take (a push over a slow link included)."""

FALLBACK_IDENTITY = {
    "GIT_AUTHOR_NAME": "cmssync",
    "GIT_AUTHOR_EMAIL": "cmssync@localhost",
    "GIT_COMMITTER_NAME": "cmssync",
    "GIT_COMMITTER_EMAIL": "cmssync@localhost",
}
"""Who commits when git knows nobody (``user.name``/``user.email`` unset, as in a daemon's container)."""

_URL_CREDENTIALS = re.compile(r"(?i)\b([a-z][a-z0-9+.-]*://)[^/@\s]+@")
_REASON_PREFIXES = ("fatal:", "error:", "remote:", "warning:")


class GitError(CmsSyncError):
    """A git command failed or the repository cannot hold a proposal; the message says which and git's reason."""


@dataclass(frozen=True)
class Repo:
    """A repository's work tree (``top``) and the content directory's place in it (``content``, ``.`` at the top)."""

    top: Path
    content: PurePosixPath

    def git(
        self,
        *args: str,
        cwd: Path | None = None,
        env: Mapping[str, str] | None = None,
        stdin: str | None = None,
        what: str | None = None,
    ) -> str:
        """Run ``git args`` in ``cwd`` (the work tree by default) and return its stdout; a ``GitError`` naming
        ``what`` (or the command) and git's reason when it fails."""
        done = run_git(args, cwd=cwd or self.top, env=env, stdin=stdin)
        if done.returncode != 0:
            raise GitError(f"{what or 'git ' + ' '.join(args)} failed: {git_reason(done)}")
        return done.stdout

    def branch_tip(self, name: str) -> str | None:
        """The commit branch ``name`` points at, or None when there is no such branch."""
        done = run_git(("rev-parse", "--verify", "--quiet", f"refs/heads/{name}^{{commit}}"), cwd=self.top)
        return done.stdout.strip() if done.returncode == 0 else None

    def head_commit(self) -> str:
        """The commit of the checked-out branch; a ``GitError`` on a detached HEAD or a branch with no commit."""
        branch = run_git(("symbolic-ref", "--quiet", "HEAD"), cwd=self.top)
        if branch.returncode != 0:
            raise GitError(
                f"{self.top}: HEAD is detached (no branch checked out); check out the branch the proposal "
                "starts from (git switch main) and run again"
            )
        tip = run_git(("rev-parse", "--verify", "--quiet", "HEAD^{commit}"), cwd=self.top)
        if tip.returncode != 0:
            raise GitError(f"{self.top}: {branch.stdout.strip()} has no commit yet; commit the content first")
        return tip.stdout.strip()

    def current_branch(self) -> str:
        """The checked-out branch's name; a ``GitError`` on a detached HEAD."""
        self.head_commit()
        return self.git("symbolic-ref", "--quiet", "--short", "HEAD").strip()

    def worktrees(self) -> list[Path]:
        """Every linked worktree git records for this repository (not the main one), including those whose
        directory is gone."""
        listing = self.git("worktree", "list", "--porcelain", what="listing the worktrees")
        paths = [Path(line.removeprefix("worktree ")) for line in listing.splitlines() if line.startswith("worktree ")]
        return paths[1:]

    def checked_out(self) -> dict[str, Path]:
        """Branch name → the worktree that has it checked out (this one and every linked worktree)."""
        listing = self.git("worktree", "list", "--porcelain", what="listing the worktrees")
        found: dict[str, Path] = {}
        where = self.top
        for line in listing.splitlines():
            if line.startswith("worktree "):
                where = Path(line.removeprefix("worktree "))
            elif line.startswith("branch refs/heads/"):
                found[line.removeprefix("branch refs/heads/")] = where
        return found

    def ignored_files(self) -> list[PurePosixPath]:
        """The files in the content directory that ``.gitignore`` excludes and git does not track, relative to
        the repository's top."""
        listing = self.git(
            "ls-files",
            "-z",
            "--others",
            "--ignored",
            "--exclude-standard",
            "--",
            str(self.content),
            what="listing the ignored files",
        )
        return [PurePosixPath(name) for name in listing.split("\0") if name]

    def check_branch_name(self, name: str) -> None:
        done = run_git(("check-ref-format", "--branch", name), cwd=self.top)
        if done.returncode != 0 or not name or name.startswith("-"):
            raise GitError(f"{name!r} is not a valid branch name (git check-ref-format --branch)")

    def move_branch(self, name: str, new: str, old: str | None, *, reason: str) -> None:
        """Point branch ``name`` at ``new`` only if it still points at ``old`` (None: only if it does not exist),
        so a branch someone moved meanwhile is never overwritten."""
        expected = old if old is not None else "0" * 40
        done = run_git(("update-ref", "-m", reason, f"refs/heads/{name}", new, expected), cwd=self.top)
        if done.returncode != 0:
            raise GitError(
                f"branch {name} moved while cmssync was committing to it, left as it is (the commit {new[:12]} "
                f"is not on any branch): {git_reason(done)}"
            )

    def push(self, remote: str, name: str) -> str:
        """Push branch ``name`` to ``remote`` (same name there); git's summary of the update, or a ``GitError``
        with the reason it was refused (non-fast-forward, a hook, no such remote, authentication)."""
        ref = f"refs/heads/{name}"
        done = run_git(("push", "--porcelain", remote, f"{ref}:{ref}"), cwd=self.top)
        summary = _porcelain_summary(done.stdout, ref)
        if done.returncode != 0:
            reasons = [summary] if summary else []
            reasons += [line for line in _reason_lines(done.stderr) if line not in reasons]
            raise GitError(
                f"git push {remote} {name} was refused: {'; '.join(reasons) or f'git exited {done.returncode}'}"
            )
        return summary


def open_repo(directory: Path) -> Repo:
    """The repository ``directory`` is in, with the directory's place in it; a ``GitError`` saying what is wrong
    (no such directory, not in a repository, inside ``.git`` or a bare repository)."""
    directory = directory.resolve()
    if not directory.is_dir():
        raise GitError(f"{directory}: no such directory")
    inside = run_git(("rev-parse", "--is-inside-work-tree"), cwd=directory)
    if inside.returncode != 0:
        raise GitError(
            f"{directory} is not in a git repository ({git_reason(inside)}); run git init, or pull without --commit"
        )
    if inside.stdout.strip() != "true":
        raise GitError(f"{directory} is not in a git work tree (inside .git, or a bare repository)")
    where = run_git(("rev-parse", "--show-toplevel", "--show-prefix"), cwd=directory).stdout.splitlines()
    top, prefix = [*where, "", ""][:2]
    return Repo(top=Path(top), content=PurePosixPath(prefix.rstrip("/") or "."))


def run_git(
    args: Sequence[str], *, cwd: Path, env: Mapping[str, str] | None = None, stdin: str | None = None
) -> subprocess.CompletedProcess[str]:
    """``git args`` in ``cwd``, never prompting (a daemon has no terminal), in the C locale (git's reasons are
    matched and shown as git writes them)."""
    environment = {**os.environ, "GIT_TERMINAL_PROMPT": "0", "LC_ALL": "C", **(env or {})}
    try:
        return subprocess.run(
            ["git", *args],
            cwd=cwd,
            env=environment,
            input=stdin,
            capture_output=True,
            text=True,
            timeout=GIT_TIMEOUT,
            check=False,
        )
    except FileNotFoundError as exc:
        raise GitError("the git command is not installed (cmssync commits through it); install git") from exc
    except subprocess.TimeoutExpired as exc:
        raise GitError(f"git {' '.join(args)} did not finish within {GIT_TIMEOUT:.0f} s") from exc


def git_reason(done: subprocess.CompletedProcess[str]) -> str:
    """Git's own reason for a failure: its ``fatal:``/``error:``/``remote:`` lines, else its last line of output."""
    lines = _reason_lines(done.stderr)
    if not lines:
        rest = [line.strip() for line in (done.stderr + done.stdout).splitlines() if line.strip()]
        lines = rest[-1:] or [f"git exited {done.returncode}"]
    return "; ".join(lines)


def identity_env(repo: Repo) -> dict[str, str]:
    """``FALLBACK_IDENTITY`` when git has no committer configured for ``repo``, else nothing (git's own)."""
    done = run_git(("var", "GIT_COMMITTER_IDENT"), cwd=repo.top)
    return {} if done.returncode == 0 else dict(FALLBACK_IDENTITY)


def _reason_lines(text: str) -> list[str]:
    return [
        _URL_CREDENTIALS.sub(r"\1", line.strip())
        for line in text.splitlines()
        if line.strip().startswith(_REASON_PREFIXES) and line.strip() not in ("remote:", "error:")
    ]


def _porcelain_summary(stdout: str, ref: str) -> str:
    """The summary ``git push --porcelain`` gives the ref: ``[new branch]``, ``abc..def``, ``[rejected] (fetch
    first)``, ``[remote rejected] (pre-receive hook declined)``."""
    for line in stdout.splitlines():
        parts = line.split("\t")
        if len(parts) >= 3 and parts[1].endswith(f":{ref}"):
            return _URL_CREDENTIALS.sub(r"\1", parts[2].strip())
    return ""
