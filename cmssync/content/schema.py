"""JSON Schema (draft 2020-12) of the content format, for editors and the YAML language server.

``content_schema()`` holds one definition per kind of file under ``$defs`` (``page``, ``stack``, ``file_sidecar``,
each list kind's plural (``users``, …: :mod:`cmssync.content.lists`), ``settings``) and accepts any of them at the
top (``anyOf``); ``schema_for(kind)`` is a standalone schema of one kind, which is what an editor should map to a
file pattern (see ``docs/content-format.md``).

The schema describes shapes; some checks only the loader makes (references point at existing files and pages,
folder names exist in ``folders:``, parent pages exist, duplicates). Durations in ``cmssync.yaml`` accept both
numbers and strings such as ``10m``, which pydantic's generated schema does not say, so they are patched here.
"""

from __future__ import annotations

import copy
from typing import Any

from pydantic import TypeAdapter

from cmssync.config import Settings
from cmssync.content.lists import list_kinds
from cmssync.content.models import FileSidecar, PageSpec, StackSpec

Kind = str
"""``page``, ``stack``, ``file_sidecar``, a list kind's plural (``users``) or ``settings``."""
DIALECT = "https://json-schema.org/draft/2020-12/schema"
_REF = "#/$defs/{model}"
_DURATION = {
    "anyOf": [{"type": "number", "minimum": 0}, {"type": "string", "pattern": r"^\s*\d+(\.\d+)?\s*(ms|s|m|h|d)?\s*$"}]
}


def _files() -> dict[Kind, tuple[str, Any]]:
    """Each kind of content file: its schema's title and its model."""
    return {
        "page": ("cmssync page file (pages/**.yaml)", PageSpec),
        "stack": ("cmssync stack file (stacks/*.yaml)", StackSpec),
        "file_sidecar": ("cmssync file sidecar (files/**/<asset>.yaml)", FileSidecar),
        **{kind.plural: (kind.title, list[kind.spec]) for kind in list_kinds()},  # type: ignore[name-defined]
        "settings": ("cmssync settings (cmssync.yaml)", Settings),
    }


def file_kinds() -> tuple[Kind, ...]:
    """The kinds of content file, in the order the content schema lists them."""
    return tuple(_files())


def _title(kind: Kind) -> str:
    return _files()[kind][0]


def _adapter(kind: Kind) -> TypeAdapter[Any]:
    return TypeAdapter(_files()[kind][1])


def _raw_schema(kind: Kind) -> dict[str, Any]:
    schema = _adapter(kind).json_schema(ref_template=_REF)
    if kind == "settings":
        _patch_durations(schema)
    return schema


def _patch_durations(schema: dict[str, Any]) -> None:
    """Durations accept numbers and strings such as ``10m``; the title, default and description are kept."""
    definitions = schema.get("$defs", {})
    places = [
        (definitions.get("DaemonSettings", {}).get("properties", {}), "debounce", False),
        (definitions.get("DaemonSettings", {}).get("properties", {}), "interval", True),
        (definitions.get("NotifySettings", {}).get("properties", {}), "timeout", False),
        (schema.get("properties", {}), "timeout", False),
        (schema.get("properties", {}), "lock_timeout", False),
        (definitions.get("StateSettings", {}).get("properties", {}), "save_interval", False),
    ]
    for properties, name, nullable in places:
        if name not in properties:
            continue
        generated = properties[name]
        duration = copy.deepcopy(_DURATION)
        if nullable:
            duration["anyOf"].append({"type": "null"})
        kept = {key: generated[key] for key in ("default", "title", "description") if key in generated}
        properties[name] = {**duration, "title": name.capitalize(), **kept}


def schema_for(kind: Kind) -> dict[str, Any]:
    """A standalone schema of one kind of content file."""
    schema = _raw_schema(kind)
    return {"$schema": DIALECT, "title": _title(kind), **{k: v for k, v in schema.items() if k != "title"}}


def content_schema() -> dict[str, Any]:
    """One schema for every content file: ``$defs`` per kind, any of them accepted at the top."""
    definitions: dict[str, Any] = {}
    for kind in file_kinds():
        schema = _raw_schema(kind)
        for name, definition in schema.pop("$defs", {}).items():
            if name in definitions and definitions[name] != definition:
                raise AssertionError(f"two content models share the schema name {name!r}")  # pragma: no cover
            definitions[name] = definition
        definitions[kind] = {**schema, "title": _title(kind)}
    return {
        "$schema": DIALECT,
        "$id": "https://cmssync.invalid/schema/content.json",
        "title": "cmssync content",
        "anyOf": [{"$ref": f"#/$defs/{kind}"} for kind in file_kinds()],
        "$defs": definitions,
    }
