"""The example workflow that proposes the site's changes (deploy/ci/site-changes.yml), its steps run as the runner
would run them (bash, the ``cmssync`` and ``git`` commands) against the sandbox, a real repository and a bare remote
on disk; ``gh`` is a stand-in script that records what it was asked (there is no GitHub here)."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from ruamel.yaml import YAML

from cmssync.emulator.embedded import Sandbox
from tests.support.editors import Editor
from tests.support.gitrepos import bare_remote, git, init_repo
from tests.support.sites import EXAMPLE, PASSWORDS

WORKFLOW = Path(__file__).resolve().parents[2] / "deploy" / "ci" / "site-changes.yml"
FAKE_GH = """#!/bin/sh
echo "$*" >> "$GH_LOG"
case "$1 $2" in
  "pr view") exit 1 ;;
  "pr create") echo "https://github.com/example/site/pull/1" ;;
esac
"""


def step(name: str) -> str:
    workflow: Any = YAML(typ="safe").load(WORKFLOW.read_text())
    [found] = [s for s in workflow["jobs"]["propose"]["steps"] if s.get("name") == name]
    return str(found["run"])


def bash(script: str, workspace: Path, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        ["bash", "-e", "-c", script], cwd=workspace, env=env, capture_output=True, text=True, timeout=120, check=False
    )


@pytest.fixture
def job(tmp_path: Path, sandbox: Sandbox) -> tuple[Path, dict[str, str]]:
    """A checkout of ``main`` (the example under ``site/``) whose content is applied, with ``origin`` a bare
    repository, the state where content.yml keeps it, and the workflow's environment."""
    workspace = tmp_path / "workspace"
    shutil.copytree(EXAMPLE, workspace / "site", ignore=shutil.ignore_patterns(".cmssync"))
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    (bin_dir / "gh").write_text(FAKE_GH)
    (bin_dir / "gh").chmod(0o755)
    env = {
        **os.environ,
        **PASSWORDS,
        "PATH": os.pathsep.join([str(bin_dir), str(Path(sys.executable).parent), os.environ.get("PATH", "")]),
        "CMSSYNC_URL": sandbox.url,
        "CMSSYNC_CLIENT_SECRET": sandbox.client_secret,
        "CMSSYNC_PASSWORD": sandbox.admin_password,
        "CMSSYNC_STATE": str(workspace / ".cmssync-state" / "state.json"),
        "PROPOSAL_BRANCH": "cmssync/site-changes",
        "BASE_BRANCH": "main",
        "GH_LOG": str(tmp_path / "gh.log"),
    }
    init_repo(workspace, ignore=(".cmssync-state/",))
    bare_remote(workspace, tmp_path / "origin.git")
    git(workspace, "push", "--quiet", "origin", "main")
    applied = bash("cmssync apply site --yes", workspace, env)
    assert applied.returncode == 0, applied.stderr
    return workspace, env


def test_the_site_changes_become_a_pushed_branch_and_one_pull_request(
    job: tuple[Path, dict[str, str]], sandbox: Sandbox, tmp_path: Path
) -> None:
    workspace, env = job
    quiet = bash(step("Commit the site's changes"), workspace, env)
    assert quiet.returncode == 0, quiet.stderr
    assert "nothing to commit" in quiet.stdout
    nothing = bash(step("Open the pull request"), workspace, env)
    assert "no site changes to propose" in nothing.stdout
    assert not (tmp_path / "gh.log").exists()

    editor = Editor(sandbox)
    try:
        editor.edit_block("/contact", "Main", 0, "<p>Write to our new office.</p>")
    finally:
        editor.close()
    head = git(workspace, "rev-parse", "HEAD")
    committed = bash(step("Commit the site's changes"), workspace, env)
    assert committed.returncode == 0, committed.stderr
    assert "committed" in committed.stdout
    origin = tmp_path / "origin.git"
    assert git(origin, "diff", "--name-only", "main", "cmssync/site-changes").split() == ["site/pages/contact.yaml"]
    assert git(workspace, "rev-parse", "HEAD") == head, "main is not touched"
    opened = bash(step("Open the pull request"), workspace, env)
    assert opened.returncode == 0, opened.stderr
    calls = (tmp_path / "gh.log").read_text().splitlines()
    assert calls[0].startswith("pr view cmssync/site-changes")
    assert calls[1].startswith("pr create --head cmssync/site-changes --base main --title Site changes")
