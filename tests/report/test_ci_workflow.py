"""The example workflow keeps the plan and its HTML report as an artifact and links the report from the comment."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from ruamel.yaml import YAML

WORKFLOW = Path(__file__).resolve().parents[2] / "deploy" / "ci" / "github-actions.yml"


def _steps() -> list[dict[str, Any]]:
    workflow = YAML(typ="safe").load(WORKFLOW.read_text())
    steps: list[dict[str, Any]] = workflow["jobs"]["plan"]["steps"]
    return steps


def test_the_plan_job_renders_uploads_and_links_the_report() -> None:
    steps = _steps()
    names = [step.get("name") for step in steps]
    plan = steps[names.index("Plan")]
    assert "-o plan.json" in plan["run"]
    render = steps[names.index("Render the HTML report")]
    assert render["run"] == "cmssync show plan.json --format html --content site > plan-report.html"
    upload = steps[names.index("Keep the reviewed plan")]
    assert upload["uses"].startswith("actions/upload-artifact@")
    assert upload["with"]["path"].split() == ["plan.json", "plan.md", "plan-report.html"]
    comment = steps[names.index("Post the plan on the pull request")]
    assert comment["env"]["REPORT_URL"] == "${{ steps." + upload["id"] + ".outputs.artifact-url }}"
    assert '"$REPORT_URL" >> plan.md' in comment["run"]
    assert names.index("Plan") < names.index("Render the HTML report") < names.index("Keep the reviewed plan")
    assert names.index("Keep the reviewed plan") < names.index("Post the plan on the pull request")
