"""JSON Schemas (draft 2020-12) of the machine-readable outputs, printed by ``cmssync schema --kind plan|events|status``
and checked against real outputs by the tests (tests/e2e/test_output_schemas.py).

* ``plan``: the document of ``plan --format json`` (also the ``plan`` of apply's ``plan`` event).
* ``events``: one line of ``apply --format json`` (NDJSON): ``plan``, ``outcome`` or ``summary``.
* ``status``: the document of ``status --format json``.

Every one says ``format_version`` (:data:`~cmssync.plan.actions.OUTPUT_FORMAT_VERSION`, one number for all).
What a schema requires is the contract: a field it names keeps its name and meaning within a format version; new
fields may be added (objects allow properties beyond those named), which is not a new version.
"""

from __future__ import annotations

import typing
from typing import Any, Final, Literal

from cmssync.plan.actions import OUTPUT_FORMAT_VERSION, Operation

SchemaKind = Literal["plan", "events", "status"]
SCHEMA_KINDS: Final = typing.get_args(SchemaKind)
_DRAFT: Final = "https://json-schema.org/draft/2020-12/schema"
_BASE: Final = "https://cmssync.invalid/schema"

_STRINGS: Final = {"type": "array", "items": {"type": "string"}}
_COUNT: Final = {"type": "integer", "minimum": 0}
_TEXT: Final = {"type": "string"}
_VERSION: Final = {"const": OUTPUT_FORMAT_VERSION}


def _document(name: str, title: str, body: dict[str, Any]) -> dict[str, Any]:
    """A schema document: its draft, its ``$id`` (``name`` and the output format version) and title, then ``body``."""
    return {"$schema": _DRAFT, "$id": f"{_BASE}/{name}-{OUTPUT_FORMAT_VERSION}.json", "title": title, **body}


def _object(required: dict[str, Any], optional: dict[str, Any] | None = None) -> dict[str, Any]:
    """An object whose ``required`` properties must be there; more are allowed (additions are not a new version)."""
    return {"type": "object", "required": sorted(required), "properties": {**required, **(optional or {})}}


_ACTION: Final = _object(
    {
        "id": {"type": "string"},
        "kind": {"type": "string"},
        "key": {"type": "string"},
        "op": {"enum": list(typing.get_args(Operation))},
        "changes": {
            "type": "array",
            "items": _object({"field": _TEXT, "before": {}, "after": {}, "sensitive": {"type": "boolean"}}),
        },
        "blocks": {"type": "array", "items": {"type": "object"}},
        "drift": {"type": "boolean"},
    },
    {"depends_on": _STRINGS, "note": {"type": ["string", "null"]}},
)
_GROUPED: Final = _object({"count": _COUNT, "message": {"type": "string"}})
_SITE_CHANGE: Final = _object(
    {
        "id": _TEXT,
        "kind": _TEXT,
        "key": _TEXT,
        "action": {"enum": ["propose", "adopt"]},
        "reason": {"const": "changed_on_site"},
        "fields": _STRINGS,
        "changes": _ACTION["properties"]["changes"],
        "blocks": {"type": "array", "items": {"type": "object"}},
        "message": _TEXT,
    },
    {"live_version_id": {"type": ["integer", "null"]}},
)
"""An editor's change the drift policy keeps on the site; ``before`` is the content's value, ``after`` the site's."""
_SUMMARY: Final = {"type": "object", "additionalProperties": _COUNT}


def plan_schema() -> dict[str, Any]:
    """``plan --format json``."""
    return _document(
        "plan",
        "cmssync plan (plan --format json)",
        {
            **_object(
                {
                    "format_version": _VERSION,
                    "has_changes": {"type": "boolean"},
                    "is_empty": {"type": "boolean"},
                    "writes": {"type": "boolean"},
                    "detailed_exit_code": {"enum": [0, 1, 2]},
                    "summary": _SUMMARY,
                    "site": {"type": ["string", "null"]},
                    "publish": {"enum": ["approve", "draft"]},
                    "content_digest": {"type": ["string", "null"]},
                    "header": {"type": ["object", "null"]},
                    "blocked": {"type": "array", "items": _GROUPED},
                    "kept": {"type": "array", "items": _GROUPED},
                    "site_additions": {"type": "array", "items": _GROUPED},
                    "site_changes": {"type": "array", "items": _SITE_CHANGE},
                    "warnings": _STRINGS,
                    "actions": {"type": "array", "items": {"$ref": "#/$defs/action"}},
                    "conflicts": {
                        "type": "array",
                        "items": _object(
                            {
                                "id": {"type": "string"},
                                "field": {"type": "string"},
                                "base": {},
                                "content": {},
                                "site": {},
                                "resolution": {"type": "string"},
                            }
                        ),
                    },
                    "held": {
                        "type": "array",
                        "items": _object(
                            {
                                "id": {"type": "string"},
                                "reason": {"type": "string"},
                                "message": {"type": "string"},
                                "action": {"anyOf": [{"$ref": "#/$defs/action"}, {"type": "null"}]},
                            }
                        ),
                    },
                    "refused": _COUNT,
                    "tie_reads": _object({"files": _COUNT, "users": _COUNT, "cause": {"type": ["string", "null"]}}),
                }
            ),
            "$defs": {"action": _ACTION},
        },
    )


def events_schema() -> dict[str, Any]:
    """One line of ``apply --format json``."""
    plan_event = _object({"format_version": _VERSION, "event": {"const": "plan"}, "plan": {"$ref": "#/$defs/plan"}})
    outcome = _object(
        {
            "format_version": _VERSION,
            "event": {"const": "outcome"},
            "id": {"type": "string"},
            "kind": {"type": "string"},
            "key": {"type": "string"},
            "op": {"enum": list(typing.get_args(Operation))},
            "status": {"enum": ["ok", "failed", "skipped"]},
            "message": {"type": "string"},
        }
    )
    summary = _object(
        {
            "format_version": _VERSION,
            "event": {"const": "summary"},
            "status": {"enum": ["complete", "incomplete", "failed", "declined", "stopped", "cancelled"]},
            "exit_code": {"type": "integer"},
        },
        {
            "counts": _object({"ok": _COUNT, "failed": _COUNT, "skipped": _COUNT}),
            "not_started": _COUNT,
            "problems": _STRINGS,
            "requests": _COUNT,
        },
    )
    return _document(
        "events",
        "cmssync apply event (one line of apply --format json)",
        {"oneOf": [plan_event, outcome, summary], "$defs": {"plan": plan_schema()}},
    )


def status_schema() -> dict[str, Any]:
    """``status --format json``."""
    drift = _object(
        {
            "in_sync": {"type": "boolean"},
            "summary": _SUMMARY,
            "kept_removed": _COUNT,
            "blocked_deletes": _COUNT,
            "changed_outside_cmssync": _STRINGS,
            "held": {
                "type": "array",
                "items": _object({"id": _TEXT, "reason": _TEXT, "message": _TEXT}),
            },
            "site_additions": _COUNT,
            "line": {"type": "string"},
        },
        {"site_changes": _STRINGS},
    )
    return _document(
        "status",
        "cmssync status (status --format json)",
        _object(
            {
                "format_version": _VERSION,
                "ok": {"type": "boolean"},
                "problems": _STRINGS,
                "connection": {"type": "object"},
                "drift": {"anyOf": [drift, {"type": "null"}]},
            }
        ),
    )


def output_schema(kind: SchemaKind) -> dict[str, Any]:
    """The schema of one machine-readable output."""
    return {"plan": plan_schema, "events": events_schema, "status": status_schema}[kind]()
