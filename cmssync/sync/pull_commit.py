"""``cmssync pull --commit``: what pull would write, as one commit on a branch that is not checked out.

The branch (default ``cmssync/site-changes``) is checked out into a temporary worktree at its tip — created from HEAD
when it does not exist — and the pull is merged into the content directory there, from the settings and the state
of the real content directory (``cmssync.sync.pull.pull_site`` with ``into``); the files it wrote become one commit
and the branch moves to it (``cmssync.gitrepo.commit``). The checked-out branch, its files, the index and the state
are not touched: the editor's change reaches the content only when the branch is merged, and until then the state
still says what cmssync last applied, so a plan keeps telling the change apart from the content's own.

Each file is merged field by field into the branch's version of it, as pull merges (what the branch changed and
the site did not since the state's base stays as the branch has it), and the result is written whatever the file
held before: on the branch there is no unsaved work to keep back — an earlier proposal's file, or HEAD's where the
checkout has uncommitted edits — and the commit is reviewed before it reaches the content (``--force`` is implied).

What pull reads in the directory and the branch does not hold — the files ``.gitignore`` excludes, the pull
manifest (``.cmssync/pulled.json``), an uncommitted ``cmssync.yaml`` — is lent to the worktree, so pull decides
each file as it would in the directory; none of it is committed (an ignored file pull changed is listed).
Uncommitted edits of tracked files are not lent: the commit starts from the branch, never from work in progress.
With ``push`` the branch is then pushed; a refused push leaves the commit on the local branch and says git's reason.
"""

from __future__ import annotations

import asyncio
import os
import shutil
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ruamel.yaml import YAML
from ruamel.yaml.error import YAMLError

from cmssync.config import DEFAULT_PROPOSAL_BRANCH
from cmssync.content import writer
from cmssync.errors import EXIT_ERROR
from cmssync.gitrepo.commit import BranchWorktree, Committed, commit_checked_out, open_branch_worktree
from cmssync.gitrepo.repo import GitError, Repo, open_repo, run_git
from cmssync.secrets import url_without_credentials
from cmssync.sync.pull import pull_site
from cmssync.sync.pull_writes import MANIFEST, WRITES, Pulled, Staged
from cmssync.sync.pulled_changes import (
    NAMED_LISTS,
    FieldValues,
    PulledChange,
    commit_message,
    field_changes,
    named_once,
)

LENT = (MANIFEST, Path("cmssync.yaml"))
"""What pull reads from the content directory besides the content, lent to the worktree when the branch lacks it."""


@dataclass
class PullCommit:
    """What ``pull --commit`` did: the pull, the commit (None: nothing changed), the changes it carries."""

    pulled: Pulled
    branch: str
    committed: Committed | None
    changes: list[PulledChange] = field(default_factory=list)
    ignored: list[str] = field(default_factory=list)
    """Files pull wrote that ``.gitignore`` excludes: not committed."""
    pushed: str | None = None
    """Git's summary of the push (``[new branch]``, ``abc..def``, ``[up to date]``), when pushed."""
    push_error: str | None = None

    @property
    def exit_code(self) -> int:
        return EXIT_ERROR if self.push_error else self.pulled.exit_code


async def pull_commit(
    directory: Path,
    *,
    branch: str = DEFAULT_PROPOSAL_BRANCH,
    push: str | None = None,
    message: str | None = None,
    **options: Any,
) -> PullCommit:
    """Pull into a worktree of ``branch`` and commit what was written (see the module docstring); ``options`` are
    :func:`cmssync.sync.pull.pull_site`'s (``pages``, ``overrides``, ``take_all``, ``kinds``; ``force`` is implied)."""
    repo = await asyncio.to_thread(open_repo, directory)
    tree = await asyncio.to_thread(open_branch_worktree, repo, branch)
    try:
        root = tree.content
        await asyncio.to_thread(_lend, directory, tree)
        pulled = await pull_site(directory, into=root, **{**options, "force": True})
        result = await asyncio.to_thread(_commit, tree, pulled, message)
    finally:
        await asyncio.to_thread(tree.close)
    if push is not None:
        await asyncio.to_thread(_push, repo, push, result)
    return result


def _commit(tree: BranchWorktree, pulled: Pulled, message: str | None) -> PullCommit:
    """Commit the files pull wrote in the worktree, but those ``.gitignore`` excludes."""
    written = [staged for staged, decision in pulled.settled.decisions.values() if decision in WRITES]
    ignored = set(tree.ignored([staged.target for staged in written]))
    kept = [staged for staged in written if staged.target not in ignored]
    changes = [change for staged in kept if (change := _change(tree, pulled, staged, tree.start)) is not None]
    site = url_without_credentials(pulled.site_url)
    committed = tree.commit([staged.target for staged in kept], commit_message(changes, site=site, subject=message))
    result = PullCommit(pulled, tree.branch, committed, changes if committed else [])
    result.ignored = sorted(path.relative_to(tree.top).as_posix() for path in ignored)
    return result


def _lend(directory: Path, tree: BranchWorktree) -> None:
    """Lend the worktree what pull reads in ``directory`` and the branch cannot hold: the files ``.gitignore``
    excludes (pull merges into them as it would here; they are never committed), the manifest and ``cmssync.yaml``
    when the branch lacks them. Linked where the filesystem allows (pull replaces a file, never writes through it)."""
    root = tree.content
    root.mkdir(parents=True, exist_ok=True)
    lent = [(directory / name, root / name) for name in LENT]
    for name in tree.repo.ignored_files():
        relative = Path(name).relative_to(Path(tree.repo.content))
        if relative.parts[:1] != (".cmssync",):
            lent.append((directory / relative, root / relative))
    for source, target in lent:
        if source.is_file() and not target.exists():
            target.parent.mkdir(parents=True, exist_ok=True)
            try:
                os.link(source, target)
            except OSError:
                shutil.copyfile(source, target)


def _change(tree: BranchWorktree | Repo, pulled: Pulled, staged: Staged, start: str) -> PulledChange | None:
    """What one written file changed, against its version in the commit ``start``."""
    name = staged.target.resolve().relative_to(tree.top.resolve()).as_posix()
    page = pulled.pages.get(staged.key) if staged.kind in ("page", "stack") else None
    version, approved = (page.live_version_id, page.approved) if page is not None else (None, None)
    if staged.text is None:  # an asset, written because its bytes differ: its size before and after
        size = run_git(("cat-file", "-s", f"{start}:{name}"), cwd=tree.top)
        before = int(size.stdout) if size.returncode == 0 else None
        return PulledChange(
            staged.kind,
            staged.key,
            name,
            (FieldValues("bytes", before, staged.target.stat().st_size),),
            version,
            approved,
        )
    old = run_git(("cat-file", "blob", f"{start}:{name}"), cwd=tree.top)
    before = _plain(old.stdout) if old.returncode == 0 else None
    after = writer.read_plain(staged.target)
    fields = field_changes(before, after, named_by=NAMED_LISTS.get(staged.kind))
    return PulledChange(staged.kind, staged.key, name, fields, version, approved) if fields else None


def _plain(text: str) -> Any:
    try:
        return YAML(typ="safe").load(text)
    except YAMLError:
        return None


def _push(repo: Repo, remote: str, result: PullCommit) -> None:
    if repo.branch_tip(result.branch) is not None:  # else nothing committed and no branch: nothing to push
        result.pushed, result.push_error = _pushed(repo, remote, result.branch)


@dataclass
class Adoption:
    """What ``drift: adopt`` wrote into the content, committed to the checked-out branch (None: nothing changed)."""

    branch: str
    commit: str | None
    changes: list[PulledChange]
    pushed: str | None = None
    push_error: str | None = None


def commit_adopted(directory: Path, pulled: Pulled, *, push: str | None = None) -> Adoption:
    """Commit the files a ``drift: adopt`` pull wrote into ``directory`` to the checked-out branch (only them), with
    a message listing each field and site version; then push that branch to ``push`` when given."""
    repo = open_repo(directory)
    written = [staged for staged, decision in pulled.settled.decisions.values() if decision in WRITES]
    head = repo.head_commit()
    changes = [change for staged in written if (change := _change(repo, pulled, staged, head)) is not None]
    site = url_without_credentials(pulled.site_url)
    subject = "Adopt site changes: " + ", ".join(named_once(changes)[:3])
    message = commit_message(changes, site=site, subject=subject if changes else None)
    commit = commit_checked_out(repo, [staged.target for staged in written], message)
    result = Adoption(repo.current_branch(), commit, changes if commit else [])
    if push is not None and commit is not None:
        result.pushed, result.push_error = _pushed(repo, push, result.branch)
    return result


def _pushed(repo: Repo, remote: str, branch: str) -> tuple[str | None, str | None]:
    """Git's summary of pushing ``branch`` to ``remote``, or the reason it was refused."""
    try:
        return repo.push(remote, branch), None
    except GitError as exc:
        return None, str(exc)
