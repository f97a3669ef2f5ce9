"""The example GitHub workflow's apply step, run as the runner would run it (bash, the ``cmssync`` command, a
``$GITHUB_STEP_SUMMARY`` file) against the sandbox: the reviewed plan is applied exactly, and a stale one is
refused, planned again into the job summary, and the step fails having written nothing."""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from ruamel.yaml import YAML

from cmssync.emulator.embedded import Sandbox
from tests.support.sites import EXAMPLE, PASSWORDS, Site

WORKFLOW = Path(__file__).resolve().parents[2] / "deploy" / "ci" / "github-actions.yml"


def step(job: str, name: str) -> str:
    workflow: Any = YAML(typ="safe").load(WORKFLOW.read_text())
    [found] = [s for s in workflow["jobs"][job]["steps"] if s.get("name") == name]
    return str(found["run"])


@pytest.fixture
def runner(tmp_path: Path, sandbox: Sandbox) -> tuple[Path, dict[str, str]]:
    """A job's working directory (the content under site/) and its environment."""
    workspace = tmp_path / "workspace"
    shutil.copytree(EXAMPLE, workspace / "site", ignore=shutil.ignore_patterns(".cmssync"))
    (workspace / "reviewed").mkdir()
    summary = tmp_path / "summary.md"
    summary.write_text("")
    env = {
        **os.environ,
        **PASSWORDS,
        "PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ.get('PATH', '')}",
        "CMSSYNC_URL": sandbox.url,
        "CMSSYNC_CLIENT_SECRET": sandbox.client_secret,
        "CMSSYNC_PASSWORD": sandbox.admin_password,
        "CMSSYNC_STATE": str(workspace / ".cmssync-state" / "state.json"),
        "GITHUB_STEP_SUMMARY": str(summary),
    }
    return workspace, env


def bash(script: str, workspace: Path, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        ["bash", "-e", "-c", script], cwd=workspace, env=env, capture_output=True, text=True, timeout=120, check=False
    )


def test_the_reviewed_plan_is_applied_exactly(runner: tuple[Path, dict[str, str]]) -> None:
    workspace, env = runner
    assert shutil.which("cmssync", path=env["PATH"]) is not None
    plan = bash(step("plan", "Plan"), workspace, {**env, "GITHUB_OUTPUT": str(workspace / "out.txt")})
    assert plan.returncode == 0, plan.stderr
    assert (workspace / "out.txt").read_text() == "changes=true\n"
    assert "| create | update | delete | move |" in Path(env["GITHUB_STEP_SUMMARY"]).read_text()
    shutil.copy(workspace / "plan.json", workspace / "reviewed" / "plan.json")

    applied = bash(step("apply", "Apply exactly the reviewed plan"), workspace, env)
    assert applied.returncode == 0, applied.stderr
    events = [json.loads(line) for line in (workspace / "apply.ndjson").read_text().splitlines()]
    reviewed = json.loads((workspace / "plan.json").read_text())
    assert {e["id"] for e in events if e["event"] == "outcome"} == {
        f"{a['kind']}:{a['key']}" for a in reviewed["actions"]
    }
    assert events[-1]["status"] == "complete"


def test_a_stale_plan_is_refused_planned_again_and_fails(runner: tuple[Path, dict[str, str]]) -> None:
    workspace, env = runner
    assert bash(step("plan", "Plan"), workspace, {**env, "GITHUB_OUTPUT": os.devnull}).returncode == 0
    shutil.copy(workspace / "plan.json", workspace / "reviewed" / "plan.json")
    about = workspace / "site" / "pages" / "about.yaml"  # main moved on after the review
    about.write_text(about.read_text().replace("About us", "About the team"))
    Path(env["GITHUB_STEP_SUMMARY"]).write_text("")

    applied = bash(step("apply", "Apply exactly the reviewed plan"), workspace, env)
    assert applied.returncode == 1
    assert "::error::the reviewed plan is stale; nothing was applied" in applied.stdout
    summary = Path(env["GITHUB_STEP_SUMMARY"]).read_text()
    assert summary.startswith("## The reviewed plan is stale: nothing was applied")
    assert "| create | update | delete | move |" in summary  # the plan as it is now
    state = workspace / ".cmssync-state" / "state.json"
    recorded = json.loads(state.read_text()) if state.exists() else {}
    assert not any(recorded.get(kind) for kind in ("pages", "files", "users", "groups"))  # nothing was applied


def workflow_environment(workspace: Path, variables: dict[str, str], secrets: dict[str, str]) -> dict[str, str]:
    """The workflow's own ``env:`` as GitHub would give it to a step: ``${{ vars.X }}`` and ``${{ secrets.X }}``
    from the repository's settings (empty when not defined), ``${{ github.workspace }}`` the checkout."""
    workflow: Any = YAML(typ="safe").load(WORKFLOW.read_text())
    env: dict[str, str] = {}
    for name, value in workflow["env"].items():
        text = str(value).replace("${{ github.workspace }}", str(workspace))
        for scope, values in (("vars", variables), ("secrets", secrets)):
            text = re.sub(rf"\$\{{\{{ {scope}\.(\w+) \}}\}}", lambda m, v=values: v.get(m.group(1), ""), text)
        env[name] = text
    return env


async def test_the_workflow_works_as_written_with_the_config_pull_writes(tmp_path: Path, sandbox: Sandbox) -> None:
    """The setup docs/ci.md describes: `cmssync pull` writes cmssync.yaml (credentials as ${env:CMSSYNC_…}), the
    repository defines the variables and secrets the workflow's header names, and the plan job's steps and the
    apply step run as written (it failed with "auth.grant password needs auth.client_id" before the workflow named
    CMSSYNC_CLIENT_ID and CMSSYNC_USERNAME)."""
    pulled = Site(tmp_path / "pulled", sandbox)
    pulled.root.mkdir()
    await pulled.pull()
    starter = (pulled.root / "cmssync.yaml").read_text()
    assert "${env:CMSSYNC_CLIENT_ID}" in starter
    assert (pulled.root / ".gitignore").read_text().splitlines()[-1] == ".cmssync/"

    workspace = tmp_path / "workspace"
    shutil.copytree(EXAMPLE, workspace / "site", ignore=shutil.ignore_patterns(".cmssync"))
    # The example's content with the config pull wrote, its folders named as the starter's comment asks.
    assert "folders: {}" in starter
    named = starter.replace("folders: {}", "folders:\n  /images: 10\n  /documents: 11")
    (workspace / "site" / "cmssync.yaml").write_text(named)
    (workspace / "reviewed").mkdir()
    summary = tmp_path / "summary.md"
    summary.write_text("")
    variables = {"CMSSYNC_URL": sandbox.url, "CMSSYNC_CLIENT_ID": sandbox.client_id}
    variables["CMSSYNC_USERNAME"] = sandbox.admin_username
    secrets = {"CMSSYNC_CLIENT_SECRET": sandbox.client_secret, "CMSSYNC_PASSWORD": sandbox.admin_password}
    secrets["CMSSYNC_STATE_KEY"] = "7a" * 32
    runner_env = {name: value for name, value in os.environ.items() if not name.startswith("CMSSYNC_")}
    env = {
        **runner_env,
        **workflow_environment(workspace, variables, secrets),
        **PASSWORDS,  # the users' password variables, added to the workflow's env as its header says
        "PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ.get('PATH', '')}",
        "GITHUB_STEP_SUMMARY": str(summary),
        "GITHUB_OUTPUT": str(workspace / "out.txt"),
    }
    for name in ("Read the state (branch cmssync-state; none before the first apply)", "Validate", "Plan"):
        done = bash(step("plan", name), workspace, env)
        assert done.returncode == 0, f"{name}: {done.stdout}{done.stderr}"
    assert (workspace / "out.txt").read_text() == "changes=true\n"
    shutil.copy(workspace / "plan.json", workspace / "reviewed" / "plan.json")
    applied = bash(step("apply", "Apply exactly the reviewed plan"), workspace, env)
    assert applied.returncode == 0, applied.stderr
    assert json.loads((workspace / "apply.ndjson").read_text().splitlines()[-1])["status"] == "complete"
