"""``cmssync.gitrepo`` on real repositories: where a content directory sits, a commit of exactly some files to the
checked-out branch (``drift: adopt``) that leaves whatever else is staged, and git's reasons in the errors."""

from __future__ import annotations

from pathlib import Path, PurePosixPath

import pytest

from cmssync.gitrepo.commit import commit_checked_out
from cmssync.gitrepo.repo import GitError, open_repo
from tests.support.gitrepos import git, init_repo


def test_the_content_directorys_place_and_the_refusals(tmp_path: Path) -> None:
    top = tmp_path / "repo"
    (top / "site" / "pages").mkdir(parents=True)
    (top / "site" / "pages" / "index.yaml").write_text("name: Home\n")
    init_repo(top)
    repo = open_repo(top / "site")
    assert repo.top == top.resolve()
    assert repo.content == PurePosixPath("site")
    assert open_repo(top).content == PurePosixPath(".")
    with pytest.raises(GitError, match="not in a git work tree"):
        open_repo(top / ".git")
    with pytest.raises(GitError, match="no such directory"):
        open_repo(top / "missing")
    with pytest.raises(GitError, match=r"git push nowhere main was refused: .*nowhere"):
        repo.push("nowhere", "main")


def test_only_the_given_files_are_committed_and_the_rest_stays_staged(tmp_path: Path) -> None:
    top = tmp_path / "repo"
    (top / "site" / "pages").mkdir(parents=True)
    about, notes = top / "site" / "pages" / "about.yaml", top / "NOTES.md"
    about.write_text("name: About\n")
    notes.write_text("draft\n")
    init_repo(top)
    repo = open_repo(top / "site")
    head = git(top, "rev-parse", "HEAD").strip()
    notes.write_text("draft, staged by someone\n")
    git(top, "add", "NOTES.md")
    assert commit_checked_out(repo, [about], "nothing changed") is None
    about.write_text("name: About us\n")
    commit = commit_checked_out(repo, [about], "Adopt site changes: page /about\n")
    assert commit == git(top, "rev-parse", "HEAD").strip()
    assert git(top, "rev-parse", "HEAD^").strip() == head
    assert git(top, "diff", "--name-only", "HEAD^", "HEAD").split() == ["site/pages/about.yaml"]
    assert git(top, "diff", "--cached", "--name-only").split() == ["NOTES.md"], "what else was staged stays staged"
    assert git(top, "log", "-1", "--format=%s").strip() == "Adopt site changes: page /about"
    git(top, "checkout", "--quiet", "--detach")
    about.write_text("name: About them\n")
    with pytest.raises(GitError, match="HEAD is detached"):
        commit_checked_out(repo, [about], "x")
