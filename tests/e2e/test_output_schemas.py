"""The JSON Schemas of ``cmssync schema --kind plan|events|status`` validate the real outputs against the sandbox:
a plan with creates, one with a conflict held back, every line of ``apply --format json`` and ``status --format
json``; and they refuse what breaks the contract (another format_version, a missing field)."""

from __future__ import annotations

import io
import json
from typing import Any

import pytest
from jsonschema import Draft202012Validator
from jsonschema.exceptions import ValidationError

from cmssync.cli import main
from cmssync.commands.apply import run_apply
from cmssync.commands.status import run_status
from cmssync.plan.actions import OUTPUT_FORMAT_VERSION
from cmssync.render.schemas import output_schema
from cmssync.render.text import render_json
from cmssync.sync.applying import ApplyRequest
from tests.support.editors import Editor
from tests.support.sites import Site


def validator(kind: str) -> Draft202012Validator:
    schema = output_schema(kind)  # type: ignore[arg-type]
    Draft202012Validator.check_schema(schema)
    return Draft202012Validator(schema)


def test_the_command_prints_each_schema(capsys: pytest.CaptureFixture[str]) -> None:
    for kind in ("plan", "events", "status"):
        assert main(["schema", "--kind", kind]) in (0, None)
        printed = json.loads(capsys.readouterr().out)
        assert printed == json.loads(json.dumps(output_schema(kind)))  # type: ignore[arg-type]
        Draft202012Validator.check_schema(printed)


async def test_plans_and_apply_events_validate(example: Site, editor: Editor) -> None:
    plans = validator("plan")
    first = json.loads(render_json(await example.plan()))
    assert first["actions"]
    plans.validate(first)

    out = io.StringIO()
    code = await run_apply(example.workspace(), ApplyRequest(), out=out, yes=True, output_format="json")
    assert code == 0
    lines = [json.loads(line) for line in out.getvalue().splitlines()]
    assert lines[0]["event"] == "plan"
    assert any(line["event"] == "outcome" for line in lines)
    assert lines[-1]["event"] == "summary"
    assert {line["format_version"] for line in lines} == {OUTPUT_FORMAT_VERSION}
    events = validator("events")
    for line in lines:
        events.validate(line)
    empty = json.loads(render_json(await example.plan()))
    assert empty["is_empty"]
    plans.validate(empty)

    editor.edit("/about", description="Written by the editor.")
    about = example.root / "pages" / "about.yaml"
    about.write_text(about.read_text().replace("Who we are and how we work.", "Who we are, from the content."))
    held = json.loads(render_json(await example.plan()))
    assert held["conflicts"]
    assert held["held"]
    plans.validate(held)

    editor.edit("/services", description="Services, by the editor.")  # a site change (drift: propose)
    proposed = json.loads(render_json(await example.plan()))
    assert [entry["id"] for entry in proposed["site_changes"]] == ["page:/services"]
    plans.validate(proposed)


async def test_status_validates(example: Site) -> None:
    assert not (await example.apply()).failed
    out = io.StringIO()
    await run_status(example.root, out=out, overrides=example.overrides(), output_format="json")
    document = json.loads(out.getvalue())
    validator("status").validate(document)
    assert document["drift"] is not None


@pytest.mark.parametrize(
    ("kind", "document"),
    [
        ("status", {"format_version": 1, "ok": True, "problems": [], "connection": {}, "drift": None}),
        ("status", {"format_version": OUTPUT_FORMAT_VERSION, "ok": True, "problems": [], "drift": None}),
        ("events", {"format_version": OUTPUT_FORMAT_VERSION, "event": "outcome", "id": "page:/a", "status": "ok"}),
        ("events", {"format_version": OUTPUT_FORMAT_VERSION, "event": "progress"}),
    ],
)
def test_what_breaks_the_contract_is_refused(kind: str, document: dict[str, Any]) -> None:
    with pytest.raises(ValidationError):
        validator(kind).validate(document)
