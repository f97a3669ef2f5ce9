"""``pull --commit`` (issue 34 item 2): what pull would write, as one commit on a branch that is not checked out,
in a real git repository, pushed to a bare remote on disk; the checked-out branch, the index, the working tree
and the state untouched; clear refusals that leave the repository as it was."""

from __future__ import annotations

import hashlib
import io
import os
import signal
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import pytest
from click.testing import CliRunner

from cmssync.cli import cli
from cmssync.commands.pull import CommitOptions, run_pull
from cmssync.emulator.embedded import Sandbox
from cmssync.gitrepo.commit import open_branch_worktree
from cmssync.gitrepo.repo import GitError, open_repo
from cmssync.sync.pull_commit import PullCommit, pull_commit
from tests.support.editors import Editor
from tests.support.gitrepos import bare_remote, checkout_fingerprint, commit_all, git, init_repo
from tests.support.sites import Site, copy_example, set_sandbox_environment

WORDS = "<p>Write to us at the new office.</p>"
REPO = Path(__file__).resolve().parents[2]


@pytest.fixture
async def repo_site(tmp_path: Path, sandbox: Sandbox, monkeypatch: pytest.MonkeyPatch) -> Site:
    """The example content in ``repo/site`` (a subdirectory of a git repository), applied to the sandbox and
    committed on ``main``; its state in ``repo/site-state`` (ignored by git)."""
    root = copy_example(tmp_path / "repo" / "site", monkeypatch)
    site = Site(root, sandbox)
    report = await site.apply()
    assert not report.failed, site.last_output
    init_repo(tmp_path / "repo", ignore=("site-state/",))
    return site


def edit_on_site(sandbox: Sandbox, path: str, html: str, index: int = 0) -> int:
    """An editor changes block ``index`` of Main on ``path`` and approves it; the new live version's id."""
    editor = Editor(sandbox)
    try:
        return editor.edit_block(path, "Main", index, html)
    finally:
        editor.close()


async def commit_pull(site: Site, **options: object) -> PullCommit:
    return await pull_commit(site.root, overrides=site.overrides(), **options)  # type: ignore[arg-type]


def state_digest(site: Site) -> str:
    return hashlib.sha256(site.state_path.read_bytes()).hexdigest()


async def test_one_commit_on_the_branch_with_the_editors_words_and_nothing_else_touched(
    repo_site: Site, sandbox: Sandbox
) -> None:
    top = repo_site.root.parent
    version = edit_on_site(sandbox, "/contact", WORDS)
    before, state = checkout_fingerprint(top), state_digest(repo_site)
    head = git(top, "rev-parse", "HEAD").strip()

    result = await commit_pull(repo_site, branch="site-edits")

    assert result.exit_code == 0
    assert result.committed is not None
    assert result.committed.created
    assert checkout_fingerprint(top) == before, "the checked-out branch, index and working tree are untouched"
    assert state_digest(repo_site) == state, "the state still says what was applied"
    assert git(top, "worktree", "list", "--porcelain").count("worktree ") == 1, "the temporary worktree is gone"
    assert git(top, "rev-list", "main..site-edits").split() == [result.committed.commit], "exactly one commit"
    assert git(top, "rev-parse", "site-edits^").strip() == head, "created from HEAD"
    assert git(top, "diff", "--name-only", "main", "site-edits").split() == ["site/pages/contact.yaml"]
    on_branch = git(top, "show", "site-edits:site/pages/contact.yaml")
    assert WORDS in on_branch
    assert "# A block type cmssync has no model for" in on_branch, "the file's comments are kept"
    message = git(top, "log", "-1", "--format=%B", "site-edits")
    assert "page /contact" in message
    assert f"(site version {version}, approved " in message
    assert "areas.Main[0].value.content" in message
    assert "Write to us at the new office." in message, "a short value is in the message"
    assert [change.object for change in result.changes] == ["page /contact"]

    # Until it is merged, the plan lists the editor's change as a site change to bring back (drift: propose).
    before_merge = await repo_site.plan()
    assert [change.key for change in before_merge.site_changes] == ["/contact"]
    assert before_merge.actions == ()
    # Merged, the content equals the site: the plan is empty (plan --detailed-exitcode exits 0).
    git(top, "merge", "--quiet", "--ff-only", "site-edits")
    assert (await repo_site.plan()).is_empty


async def test_the_branch_is_updated_with_the_next_change_and_left_alone_when_nothing_changed(
    repo_site: Site, sandbox: Sandbox
) -> None:
    top = repo_site.root.parent
    edit_on_site(sandbox, "/contact", WORDS)
    first = await commit_pull(repo_site, branch="site-edits", message="Contact page: new office")
    assert first.committed is not None
    assert git(top, "log", "-1", "--format=%s", "site-edits").strip() == "Contact page: new office"

    again = await commit_pull(repo_site, branch="site-edits")
    assert again.committed is None, "nothing new on the site: no commit"
    assert git(top, "rev-parse", "site-edits").strip() == first.committed.commit

    edit_on_site(sandbox, "/about", "<p>About us, rewritten by an editor.</p>", 1)
    second = await commit_pull(repo_site, branch="site-edits")
    assert second.committed is not None
    assert not second.committed.created
    assert second.committed.parent == first.committed.commit, "updated on top of the branch's tip"
    assert git(top, "diff", "--name-only", "site-edits^", "site-edits").split() == ["site/pages/about.yaml"]
    assert WORDS in git(top, "show", "site-edits:site/pages/contact.yaml"), "the first change stays"

    # The same page again: the branch's file (the first proposal) is merged with the site's newer words.
    edit_on_site(sandbox, "/contact", "<p>Write to us at the newest office.</p>")
    third = await commit_pull(repo_site, branch="site-edits")
    assert third.exit_code == 0
    assert third.committed is not None
    contact = git(top, "show", "site-edits:site/pages/contact.yaml")
    assert "newest office" in contact
    assert "# A block type cmssync has no model for" in contact


async def test_push_to_a_bare_remote_and_a_refused_push_says_gits_reason(
    repo_site: Site, sandbox: Sandbox, tmp_path: Path
) -> None:
    top = repo_site.root.parent
    remote = bare_remote(top, tmp_path / "remote.git")
    edit_on_site(sandbox, "/contact", WORDS)
    result = await commit_pull(repo_site, branch="site-edits", push="origin")
    assert result.exit_code == 0
    assert result.push_error is None
    assert result.committed is not None
    assert "new branch" in (result.pushed or "")
    assert git(remote, "rev-parse", "site-edits").strip() == result.committed.commit

    # Someone else pushed to the branch meanwhile: the next push is refused, the local commit stays.
    other = tmp_path / "other"
    git(tmp_path, "clone", "--quiet", "--branch", "site-edits", str(remote), str(other))
    (other / "NOTES.md").write_text("review notes\n")
    git(other, "add", "NOTES.md")
    git(other, "-c", "user.name=R", "-c", "user.email=r@example.com", "commit", "--quiet", "-m", "notes")
    git(other, "push", "--quiet", "origin", "site-edits")
    edit_on_site(sandbox, "/about", "<p>About us, once more.</p>", 1)
    refused = await commit_pull(repo_site, branch="site-edits", push="origin")
    assert refused.exit_code == 1
    assert refused.push_error is not None
    assert "rejected" in refused.push_error
    assert "fetch first" in refused.push_error or "non-fast-forward" in refused.push_error
    assert refused.committed is not None
    assert git(top, "rev-parse", "site-edits").strip() == refused.committed.commit


async def test_refusals_leave_the_repository_as_it_was(repo_site: Site, sandbox: Sandbox, tmp_path: Path) -> None:
    top = repo_site.root.parent
    edit_on_site(sandbox, "/contact", WORDS)
    before = checkout_fingerprint(top)
    with pytest.raises(GitError, match="is the checked-out branch"):
        await commit_pull(repo_site, branch="main")
    with pytest.raises(GitError, match="not a valid branch name"):
        await commit_pull(repo_site, branch="bad..name")
    git(top, "checkout", "--quiet", "--detach")
    detached = checkout_fingerprint(top)
    with pytest.raises(GitError, match="HEAD is detached"):
        await commit_pull(repo_site, branch="site-edits")
    assert checkout_fingerprint(top) == detached
    git(top, "checkout", "--quiet", "main")
    assert checkout_fingerprint(top) == before
    assert git(top, "branch", "--list", "site-edits") == "", "no branch was created"
    assert git(top, "worktree", "list", "--porcelain").count("worktree ") == 1

    alone = copy_example(tmp_path / "alone")
    with pytest.raises(GitError, match="is not in a git repository"):
        await pull_commit(alone, overrides=Site(alone, sandbox).overrides())


async def test_files_gitignore_excludes_are_not_committed(repo_site: Site, sandbox: Sandbox) -> None:
    top = repo_site.root.parent
    (top / ".gitignore").write_text(".cmssync/\nsite-state/\nsite/users.yaml\n")
    git(top, "rm", "--quiet", "--cached", "site/users.yaml")
    commit_all(top, "users.yaml stays out of git")
    from tests.support.editors import AccountEditor

    accounts = AccountEditor(sandbox)
    try:
        accounts.edit_user("jane.editor", email="jane@newmail.example")
    finally:
        accounts.close()
    edit_on_site(sandbox, "/contact", WORDS)
    result = await commit_pull(repo_site, branch="site-edits")
    assert result.ignored == ["site/users.yaml"], "pull merged the site into the ignored file, as it would here"
    assert git(top, "diff", "--name-only", "main", "site-edits").split() == ["site/pages/contact.yaml"]
    assert "jane@newmail.example" not in (top / "site/users.yaml").read_text(), "the checkout is untouched"


def test_the_command_commits_and_says_where(tmp_path: Path, sandbox: Sandbox, monkeypatch: pytest.MonkeyPatch) -> None:
    """Through the command line, as CI runs it (the site from CMSSYNC_* variables)."""
    set_sandbox_environment(monkeypatch, sandbox, tmp_path / "state")
    root = copy_example(tmp_path / "repo" / "site")
    runner = CliRunner()
    applied = runner.invoke(cli, ["apply", "--yes", str(root)])
    assert applied.exit_code == 0, applied.output
    top = init_repo(tmp_path / "repo")
    edit_on_site(sandbox, "/contact", WORDS)
    refused = runner.invoke(cli, ["pull", str(root), "--branch", "x"])
    assert refused.exit_code == 2
    assert "--branch, --push and --message go with --commit" in refused.output
    result = runner.invoke(cli, ["pull", str(root), "--commit", "--branch", "site-edits"])
    assert result.exit_code == 0, result.output
    commit = git(top, "rev-parse", "site-edits").strip()
    assert f"committed {commit[:12]} on branch site-edits (created; the checkout is untouched):" in result.output
    assert "page /contact (site version" in result.output
    assert "everything pulled is now managed" not in result.output
    assert git(top, "status", "--porcelain") == ""


async def test_the_command_function_prints_the_commit(repo_site: Site, sandbox: Sandbox) -> None:
    edit_on_site(sandbox, "/contact", WORDS)
    out = io.StringIO()
    code = await run_pull(
        repo_site.root, out=out, commit=CommitOptions(branch="site-edits"), overrides=repo_site.overrides()
    )
    assert code == 0, out.getvalue()
    assert "pull into branch site-edits:" in out.getvalue()
    assert "areas.Main[0].value.content" in out.getvalue()


def _scratch(tmp: Path) -> list[Path]:
    return sorted(tmp.glob("cmssync-commit-*"))


def _kill_with_its_worktree(root: Path, tmp: Path, state: Path) -> None:
    """``pull --commit`` of ``root`` (temporary files in ``tmp``) SIGKILLed once its worktree is checked out; its
    site takes the connection and never answers, so the run waits there."""
    with socket.socket() as silent:
        silent.bind(("127.0.0.1", 0))
        silent.listen(8)
        env = {k: v for k, v in os.environ.items() if not k.startswith("CMSSYNC_")}
        env.update(
            TMPDIR=str(tmp),
            CMSSYNC_URL=f"http://127.0.0.1:{silent.getsockname()[1]}",
            CMSSYNC_STATE=str(state),
            CMSSYNC_CLIENT_SECRET="x",
            CMSSYNC_PASSWORD="x",
        )
        command = [sys.executable, "-m", "cmssync", "pull", str(root), "--commit", "--branch", "site-edits"]
        run = subprocess.Popen(command, cwd=REPO, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
        try:
            for _ in range(600):  # until its worktree is checked out (at most 60 s)
                if any((scratch / "tree" / root.name / "pages").is_dir() for scratch in _scratch(tmp)):
                    break
                assert run.poll() is None, run.stderr.read() if run.stderr else ""
                time.sleep(0.1)
            run.send_signal(signal.SIGKILL)
        finally:
            run.wait(timeout=30)
            if run.stderr is not None:
                run.stderr.close()


async def test_a_killed_pull_commits_worktree_is_removed_by_the_next_run(
    repo_site: Site, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A ``pull --commit`` SIGKILLed while its temporary worktree exists leaves the directory and git's record of
    it (``close`` never ran); the next run removes both, and keeps the worktree of a run still alive."""
    top = repo_site.root.parent
    tmp = tmp_path / "tmp"
    tmp.mkdir()
    _kill_with_its_worktree(repo_site.root, tmp, tmp_path / "other-state.json")
    [left] = _scratch(tmp)
    assert str(left / "tree") in git(top, "worktree", "list")

    monkeypatch.setenv("TMPDIR", str(tmp))
    monkeypatch.setattr(tempfile, "tempdir", None)  # gettempdir() reads TMPDIR again
    repo = open_repo(repo_site.root)
    alive = open_branch_worktree(repo, "another")  # a run still going: its worktree stays
    try:
        edit_on_site(repo_site.sandbox, "/contact", WORDS)
        result = await commit_pull(repo_site, branch="site-edits")
        assert result.committed is not None
        assert _scratch(tmp) == [alive.top.parent]
        assert alive.content.is_dir()
        listed = git(top, "worktree", "list", "--porcelain")
        assert str(left) not in listed
        assert str(alive.top) in listed
    finally:
        alive.close()
    assert _scratch(tmp) == []
    assert git(top, "worktree", "list", "--porcelain").count("worktree ") == 1
