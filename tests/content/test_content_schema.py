from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from ruamel.yaml import YAML

from cmssync.content.schema import content_schema, file_kinds, schema_for


def _plain(node: Any) -> Any:
    """A ruamel tree as JSON-like data (dates as ISO strings, as an editor's YAML server sees them)."""
    if isinstance(node, dict):
        return {str(k): _plain(v) for k, v in node.items()}
    if isinstance(node, list):
        return [_plain(v) for v in node]
    if hasattr(node, "isoformat"):
        return node.isoformat()
    return node


def _kind(relative: str) -> str:
    if relative == "cmssync.yaml":
        return "settings"
    if relative.startswith("pages/"):
        return "page"
    if relative.startswith("files/"):
        return "file_sidecar"
    return relative.split(".")[0].split("/")[0]


def test_schema_has_a_definition_per_kind() -> None:
    schema = content_schema()
    assert schema["$schema"] == "https://json-schema.org/draft/2020-12/schema"
    assert [ref["$ref"] for ref in schema["anyOf"]] == [f"#/$defs/{kind}" for kind in file_kinds()]
    for kind in file_kinds():
        assert schema_for(kind)["$schema"] == schema["$schema"]


def test_example_files_match_the_schema(example: Path) -> None:
    jsonschema = pytest.importorskip("jsonschema")
    validators = {kind: jsonschema.Draft202012Validator(schema_for(kind)) for kind in file_kinds()}
    for kind in file_kinds():
        jsonschema.Draft202012Validator.check_schema(schema_for(kind))
    yaml = YAML(typ="rt")
    checked = 0
    for path in sorted(example.rglob("*.yaml")):
        relative = path.relative_to(example).as_posix()
        data = _plain(yaml.load(path.read_text(encoding="utf-8")))
        errors = list(validators[_kind(relative)].iter_errors(data))
        assert errors == [], (relative, [e.message for e in errors])
        checked += 1
    assert checked >= 10


def test_schema_rejects_typos() -> None:
    jsonschema = pytest.importorskip("jsonschema")
    validator = jsonschema.Draft202012Validator(schema_for("page"))
    page = {"name": "Home", "areas": {"Main": [{"type": "content", "value": {"contnet": "x"}}]}}
    assert list(validator.iter_errors(page))
    raw_known = {"name": "Home", "areas": {"Main": [{"type": "content", "raw": True}]}}
    assert list(validator.iter_errors(raw_known))
    assert not list(validator.iter_errors({"name": "Home", "areas": {"Main": [{"type": "horizontal_rule"}]}}))


def test_settings_schema_accepts_duration_strings() -> None:
    jsonschema = pytest.importorskip("jsonschema")
    validator = jsonschema.Draft202012Validator(schema_for("settings"))
    assert not list(validator.iter_errors({"daemon": {"interval": "10m", "debounce": 1}, "timeout": "30s"}))
    assert list(validator.iter_errors({"daemon": {"interval": "soon"}}))
