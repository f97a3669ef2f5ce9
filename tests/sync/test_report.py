from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from cmssync.plan.actions import Plan
from cmssync.render.markdown import render_markdown
from cmssync.render.text import render_json, render_text
from tests.support.plans import SECRET, sample_plan

GOLDEN = Path(__file__).parent / "golden"
RENDERERS = {
    "plan.txt": lambda plan: render_text(plan),
    "plan.md": render_markdown,
    "plan.json": render_json,
}


@pytest.mark.parametrize("name", sorted(RENDERERS))
def test_renderings_match_the_golden_files(name: str) -> None:
    rendered = RENDERERS[name](sample_plan())
    golden = GOLDEN / name
    if os.environ.get("UPDATE_GOLDEN"):
        golden.write_text(rendered)
    assert rendered == golden.read_text(), f"re-run with UPDATE_GOLDEN=1 and review the diff of {golden}"


@pytest.mark.parametrize("name", sorted(RENDERERS))
def test_a_secret_is_never_rendered(name: str) -> None:
    assert SECRET not in RENDERERS[name](sample_plan())


def test_json_is_versioned_and_summarised() -> None:
    document = json.loads(render_json(sample_plan()))
    assert document["format_version"] == 2
    assert document["has_changes"] is True
    assert document["summary"] == {"create": 1, "update": 2, "delete": 1, "move": 0, "replace": 1}
    assert [a["id"] for a in document["actions"]][:2] == ["group:Content Team", "file:images/logo.png"]


def test_an_empty_plan_says_so_in_every_format() -> None:
    empty = Plan(site="https://www.example.com", content_digest="00")
    assert "No changes." in render_text(empty)
    assert "**No changes.**" in render_markdown(empty)
    assert json.loads(render_json(empty))["has_changes"] is False


def test_colour_only_when_asked() -> None:
    assert "\x1b[" not in render_text(sample_plan())
    assert "\x1b[" in render_text(sample_plan(), color=True)


def test_a_plan_file_never_holds_a_secret() -> None:
    assert SECRET not in sample_plan().model_dump_json()


def test_a_plan_file_round_trips() -> None:
    plan = sample_plan()
    assert Plan.model_validate_json(plan.model_dump_json()) == plan
