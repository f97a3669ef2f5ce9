"""One commit on a branch that is not checked out, without touching the checked-out branch, its files or the index.

`open_branch_worktree` checks the branch's tip (or, for a new branch, HEAD) out into a temporary linked worktree
(``git worktree add --detach``: its own files and its own index; the user's hooks are not run for it); whoever holds
it writes files there, then :meth:`BranchWorktree.commit` stages exactly the paths it is given, writes the tree and
the commit (``write-tree``, ``commit-tree``: no hook, no editor) and moves the branch with ``update-ref`` only if
it still points where the worktree started. The worktree is removed whatever happens (``close``), so a failure
leaves the repository as it was: no branch moved, no file changed outside the temporary directory.

A run killed outright (SIGKILL, the machine's power) cannot close it: its temporary directory
(``$TMPDIR/cmssync-commit-*``) and git's record of it stay. Each one holds a lock file its run keeps locked
(``flock``) while it lives; the next :func:`open_branch_worktree` removes every such worktree of the repository whose
lock it can take (its run is gone; one still running keeps it), then ``git worktree prune``.

:func:`commit_checked_out` is the other way, for ``drift: adopt``: files already written into the checkout,
committed to the checked-out branch.
"""

from __future__ import annotations

import fcntl
import os
import shutil
import tempfile
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path

from cmssync.gitrepo.repo import GitError, Repo, identity_env, run_git

NO_HOOKS = ("-c", "core.hooksPath=/dev/null")
SCRATCH_PREFIX = "cmssync-commit-"
LIVE = "cmssync-run.lock"
"""In a worktree's temporary directory: the file its run holds locked while it lives."""


@dataclass(frozen=True)
class Committed:
    """A commit made on ``branch``: its id, the commit it follows, whether the branch was created."""

    branch: str
    commit: str
    parent: str
    created: bool
    paths: tuple[str, ...]
    """The files it changed, relative to the repository's top."""


@dataclass
class BranchWorktree:
    """A temporary checkout of where ``branch`` goes next; ``content`` is the content directory inside it."""

    repo: Repo
    branch: str
    start: str
    """The commit checked out: the branch's tip, or HEAD for a branch that does not exist yet."""
    exists: bool
    top: Path
    live: int | None = field(default=None, repr=False)
    """The descriptor of the run's lock on :data:`LIVE` (held until ``close``)."""

    @property
    def content(self) -> Path:
        return self.top / self.repo.content

    def ignored(self, paths: Iterable[Path]) -> list[Path]:
        """Those of ``paths`` (files in this worktree) that ``.gitignore`` excludes: never committed."""
        names = [path.relative_to(self.top).as_posix() for path in paths]
        if not names:
            return []
        done = run_git(("check-ignore", "-z", "--stdin"), cwd=self.top, stdin="\0".join(names) + "\0")
        if done.returncode not in (0, 1):
            raise GitError(f"git check-ignore failed in {self.top}: {done.stderr.strip()}")
        return [self.top / name for name in done.stdout.split("\0") if name]

    def commit(self, paths: Iterable[Path], message: str) -> Committed | None:
        """Commit ``paths`` (files written in this worktree) on the branch; None when they hold what the start
        commit holds (nothing to commit: the branch is neither created nor moved)."""
        names = sorted({path.relative_to(self.top).as_posix() for path in paths})
        if not names:
            return None
        self.repo.git(
            "--literal-pathspecs",
            "add",
            "--all",
            "--pathspec-from-file=-",
            "--pathspec-file-nul",
            cwd=self.top,
            stdin="\0".join(names) + "\0",
            what="staging the pulled files",
        )
        changed = self.repo.git("diff", "--cached", "--name-only", "-z", self.start, cwd=self.top).split("\0")
        changed = [name for name in changed if name]
        if not changed:
            return None
        tree = self.repo.git("write-tree", cwd=self.top, what="writing the tree").strip()
        env = identity_env(self.repo)
        commit = self.repo.git(
            "commit-tree", tree, "-p", self.start, "-F", "-", cwd=self.top, env=env, stdin=message, what="committing"
        ).strip()
        self.repo.move_branch(
            self.branch, commit, self.start if self.exists else None, reason=f"cmssync: {message.splitlines()[0]}"
        )
        return Committed(self.branch, commit, self.start, not self.exists, tuple(changed))

    def close(self) -> None:
        """Remove the worktree and git's record of it (only that record: ``prune`` runs only when the removal
        failed, when git's record points at a directory that is gone)."""
        top = self.top
        removed = (
            top.exists() and run_git(("worktree", "remove", "--force", str(top)), cwd=self.repo.top).returncode == 0
        )
        shutil.rmtree(top.parent, ignore_errors=True)
        if not removed:
            run_git(("worktree", "prune"), cwd=self.repo.top)
        if self.live is not None:
            os.close(self.live)
            self.live = None


def open_branch_worktree(repo: Repo, branch: str) -> BranchWorktree:
    """A temporary worktree at ``branch``'s tip (created from HEAD when missing); the caller closes it.

    Refused, before anything is checked out: an invalid branch name, a detached HEAD or a branch with no commit,
    and a ``branch`` that is checked out in a worktree (moving it would change that worktree's files' meaning)."""
    repo.check_branch_name(branch)
    head = repo.head_commit()
    holders = repo.checked_out()
    if branch in holders:
        where = "the checked-out branch" if holders[branch] == repo.top else f"checked out in {holders[branch]}"
        raise GitError(
            f"branch {branch} is {where}; cmssync commits site changes to a branch that is not checked out "
            "(choose another with --branch)"
        )
    tip = repo.branch_tip(branch)
    start = tip or head
    remove_abandoned(repo)
    scratch = Path(tempfile.mkdtemp(prefix=SCRATCH_PREFIX))
    tree = BranchWorktree(repo, branch, start, tip is not None, scratch / "tree", _hold(scratch / LIVE))
    try:
        repo.git(
            *NO_HOOKS, "worktree", "add", "--detach", "--quiet", str(tree.top), start, what="checking out a worktree"
        )
    except BaseException:
        tree.close()
        raise
    return tree


def _hold(path: Path) -> int:
    """Lock ``path`` (created) for as long as the descriptor returned is open."""
    fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o600)
    fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    return fd


def _abandoned(scratch: Path) -> bool:
    """Whether the run that made the temporary directory ``scratch`` is gone: its lock can be taken (or it has
    none: made before locks were, or killed before it wrote one)."""
    try:
        fd = os.open(scratch / LIVE, os.O_RDWR)
    except FileNotFoundError:
        return True
    except OSError:
        return False
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except OSError:
        return False  # held: its run is alive
    finally:
        os.close(fd)
    return True


def remove_abandoned(repo: Repo) -> list[Path]:
    """Remove the repository's temporary worktrees whose run was killed (see the module docstring), then let git
    forget the records of worktrees that are gone; the worktrees removed."""
    removed: list[Path] = []
    for where in repo.worktrees():
        scratch = where.parent
        if where.name != "tree" or not scratch.name.startswith(SCRATCH_PREFIX) or not _abandoned(scratch):
            continue
        run_git(("worktree", "remove", "--force", str(where)), cwd=repo.top)
        shutil.rmtree(scratch, ignore_errors=True)
        removed.append(where)
    run_git(("worktree", "prune"), cwd=repo.top)
    return removed


def commit_checked_out(repo: Repo, paths: Iterable[Path], message: str) -> str | None:
    """Commit exactly ``paths`` (files of the work tree) to the checked-out branch (``git commit --only``: whatever
    else is staged stays staged, uncommitted); the new commit, or None when they hold what HEAD holds. No hook runs
    (``--no-verify``): the daemon commits unattended. Refused on a detached HEAD."""
    repo.head_commit()
    top = repo.top.resolve()
    names = sorted({path.resolve().relative_to(top).as_posix() for path in paths})
    if not names:
        return None
    pathspecs = "\0".join(names) + "\0"
    repo.git(
        "--literal-pathspecs", "add", "--all", "--pathspec-from-file=-", "--pathspec-file-nul",
        stdin=pathspecs, what="staging the adopted files",
    )  # fmt: skip
    staged = set(repo.git("diff", "--cached", "--name-only", "-z", "HEAD").split("\0"))
    if not staged & set(names):
        return None
    with tempfile.NamedTemporaryFile("w", encoding="utf-8", suffix=".txt", prefix="cmssync-message-") as note:
        note.write(message)
        note.flush()
        repo.git(
            *NO_HOOKS, "--literal-pathspecs", "commit", "--quiet", "--no-verify", "--only", "-F", note.name,
            "--pathspec-from-file=-", "--pathspec-file-nul",
            env=identity_env(repo), stdin=pathspecs, what="committing the adopted files",
        )  # fmt: skip
    return repo.git("rev-parse", "HEAD").strip()
