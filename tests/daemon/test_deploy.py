"""The deployment examples parse and say what the design needs (no Docker, Kubernetes or GitHub needed)."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest
from ruamel.yaml import YAML

from cmssync.config import Settings, load_settings

DEPLOY = Path(__file__).resolve().parents[2] / "deploy"


def load(name: str) -> Any:
    return YAML(typ="safe").load((DEPLOY / name).read_text())


def test_compose_runs_the_daemon_against_the_sandbox() -> None:
    compose = load("compose.yaml")
    sandbox, daemon = compose["services"]["sandbox"], compose["services"]["cmssync"]
    assert sandbox["command"][:3] == ["emulator", "--host", "0.0.0.0"]
    assert daemon["command"][:2] == ["daemon", "/content"]
    assert daemon["depends_on"]["sandbox"]["condition"] == "service_healthy"
    assert "../content-example:/content:ro" in daemon["volumes"]
    assert any(v.endswith(":/state") for v in daemon["volumes"])
    settings = Settings.model_validate(load("compose/cmssync.yaml"))
    assert settings.site.url == "http://sandbox:8765"
    assert settings.daemon.health == "0.0.0.0:9090"


def test_kubernetes_two_replicas_fail_over_on_a_postgresql_state_with_probes_and_secrets() -> None:
    documents = list(YAML(typ="safe").load_all((DEPLOY / "kubernetes.yaml").read_text()))
    [deployment] = [d for d in documents if d["kind"] == "Deployment"]
    spec = deployment["spec"]
    assert spec["replicas"] == 2  # one leads, one stands by (tests/daemon/test_daemon_replicas.py)
    assert spec["strategy"]["type"] == "RollingUpdate"
    pod = spec["template"]["spec"]
    [daemon] = [c for c in pod["containers"] if c["name"] == "cmssync"]
    assert daemon["livenessProbe"]["httpGet"]["path"] == "/livez"
    assert daemon["startupProbe"]["httpGet"]["path"] == "/livez"
    assert daemon["readinessProbe"]["httpGet"]["path"] == "/readyz"  # ready while serving, leader or standby
    env = {variable["name"]: variable.get("value") for variable in daemon["env"]}
    settings = Settings.model_validate({"state": env["CMSSYNC_STATE"]}).state_settings
    assert settings.backend == "postgresql"
    assert settings.name == "site-production"
    secrets = {ref["secretRef"]["name"] for ref in daemon["envFrom"]}
    state_secret = next(d for d in documents if d["kind"] == "Secret" and d["metadata"]["name"] == "cmssync-state")
    assert "cmssync-state" in secrets
    assert set(state_secret["stringData"]) == {"PGPASSWORD", "CMSSYNC_STATE_KEY"}  # libpq's variable, no file
    # git-sync: a one-time clone first (cmssync never starts before the content exists), then a native sidecar.
    clone, sidecar = pod["initContainers"]
    assert {"name": "GITSYNC_ONE_TIME", "value": "true"} in clone["env"]
    assert "restartPolicy" not in clone
    assert sidecar["restartPolicy"] == "Always"
    assert "GITSYNC_ONE_TIME" not in {variable["name"] for variable in sidecar["env"]}
    assert not [c for c in pod["containers"] if "git-sync" in c["image"]]
    mounts = {m["mountPath"]: m for m in daemon["volumeMounts"]}
    assert mounts["/run/secrets"]["readOnly"] is True
    assert mounts["/git"]["readOnly"] is True
    assert pod["securityContext"]["runAsNonRoot"] is True
    assert pod["automountServiceAccountToken"] is False  # /run/secrets would hide the token mount
    credentials = next(d for d in documents if d["kind"] == "Secret" and d["metadata"]["name"] == "cmssync-credentials")
    assert set(credentials["stringData"]) == {"cmssync_client_secret", "cmssync_password"}


def test_ci_plans_pull_requests_and_applies_on_merge() -> None:
    workflow = load("ci/github-actions.yml")
    plan, apply = workflow["jobs"]["plan"], workflow["jobs"]["apply"]
    assert "pull_request" in plan["if"]
    plan_steps = " ".join(step.get("run", "") for step in plan["steps"])
    assert "cmssync plan site --format markdown" in plan_steps
    assert "gh pr comment" in plan_steps
    assert "refs/heads/main" in apply["if"]
    assert apply["concurrency"]["cancel-in-progress"] is False
    # The merge applies exactly the reviewed plan (the pull request's artifact), never a new plan of main; the
    # state lives on a branch, not in the evictable cache (tests/e2e/test_ci_workflow.py runs the apply step).
    uploads = [step for step in plan["steps"] if str(step.get("uses", "")).startswith("actions/upload-artifact")]
    assert "plan.json" in uploads[0]["with"]["path"]
    apply_steps = " ".join(step.get("run", "") for step in apply["steps"])
    assert "cmssync apply site reviewed/plan.json" in apply_steps
    assert "cmssync apply site --yes" not in apply_steps
    assert "plan file is stale" in apply_steps
    assert not any("actions/cache" in str(step.get("uses", "")) for job in (plan, apply) for step in job["steps"])
    assert 'git push --quiet origin "$STATE_BRANCH"' in apply_steps


def test_the_docs_say_what_the_image_does_with_the_health_address(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The image sets CMSSYNC_HEALTH=0.0.0.0:9090, which wins over daemon.health: the docs used to ask for a
    cmssync.yaml setting that the environment overrides anyway (issue 27)."""
    (tmp_path / "cmssync.yaml").write_text('daemon: {health: "127.0.0.1:9090"}\n')
    monkeypatch.setenv("CMSSYNC_HEALTH", "0.0.0.0:9090")
    assert load_settings(tmp_path).daemon.health == "0.0.0.0:9090"
    assert "CMSSYNC_HEALTH=0.0.0.0:9090" in (DEPLOY.parent / "Dockerfile").read_text()
    for doc in (DEPLOY / "kubernetes.yaml", DEPLOY.parent / "docs" / "daemon.md"):
        assert not re.search(r"must let the probes in|set `daemon\.health: \"0\.0\.0\.0:9090\"` in", doc.read_text())
