"""One YAML file of the content on its own: its specs, where each one is written and the references each one holds,
or its problems — everything the loader derives from a file's text alone, so what the parse cache keeps.

A :class:`FileResult` does not name its file: specs are located (``spec.source``) by the loader, so two files with
the same text share a cache entry, and a result read from the cache is a fresh copy every time.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Final, TypeVar

from pydantic import BaseModel

from cmssync.content.lists import list_file
from cmssync.content.models import FileSidecar, LocatedSpec, PageSpec, StackSpec
from cmssync.content.text import Reference, Text
from cmssync.content.validation import clean_loc, validate
from cmssync.content.values import MARKER, substitute_tree
from cmssync.content.yamlsource import Source
from cmssync.errors import Problem
from cmssync.yamlread import YamlDocument, YamlList, YamlMap, start_of, value_position

Kind = str
"""``page``, ``stack``, ``sidecar``, or a list kind's plural (``users``: :mod:`cmssync.content.lists`)."""
S = TypeVar("S", bound=LocatedSpec)

Loc = tuple[str | int, ...]


@dataclass
class SpecAt:
    """A valid spec of a file (not yet located), where it starts, and its references."""

    spec: LocatedSpec
    line: int
    column: int
    prefix: Loc = ()
    """The spec's place in its file: ``()`` for a page or sidecar, ``(index,)`` for an entry of a list file."""
    references: list[tuple[Loc, tuple[Reference, ...]]] = field(default_factory=list)
    """Every string that holds references: its loc in the spec (union tags removed) and the references in it."""


@dataclass
class FileResult:
    specs: list[SpecAt] = field(default_factory=list)
    problems: list[Problem] = field(default_factory=list)
    values: int = 0
    """Values the file's YAML holds (what loading it costs; the loader bounds the content's total)."""


_MAPPINGS: Final[dict[str, tuple[type[LocatedSpec], str]]] = {
    "page": (PageSpec, "a page file"),
    "stack": (StackSpec, "a stack file"),
    "sidecar": (FileSidecar, "a file sidecar"),
}


def read_file(kind: Kind, source: Source, values: Mapping[str, str] | None = None) -> FileResult:
    """The specs of ``source``, a file of ``kind``, or its problems; ``${value:NAME}`` in a page or stack file
    replaced by ``values`` first (:mod:`cmssync.content.values`)."""
    parsed = source.parsed
    if not isinstance(parsed, YamlDocument):
        return FileResult(problems=[parsed])
    if kind in ("page", "stack") and MARKER in source.text:
        unknown: list[Problem] = []

        def problem(node: Any, key: Any, message: str) -> None:
            line, column = (node.at[key][2:] if isinstance(node, YamlMap) else node.at[key]) if node.at else (0, 0)
            unknown.append(Problem(source.name, line, column, message))

        substitute_tree(parsed.data, values or {}, problem)
        if unknown:
            return FileResult(problems=unknown)
    if kind in _MAPPINGS:
        model, what = _MAPPINGS[kind]
        result = _mapping_file(source.name, parsed.data, model, what)
    else:
        listed = list_file(kind, directory=True)
        assert listed is not None, f"not a kind of content file: {kind!r}"
        result = _list_file(source.name, parsed.data, listed.spec, listed.name)
    result.values = parsed.values
    return result


def _mapping_file(name: str, data: Any, model: type[LocatedSpec], what: str) -> FileResult:
    result = FileResult()
    data = YamlMap() if data is None else data
    if not isinstance(data, YamlMap):
        result.problems.append(Problem(name, *start_of(data), f"{what} is a mapping of fields"))
        return result
    _validate(result, model, data, name, data, ())
    return result


def _list_file(name: str, data: Any, model: type[LocatedSpec], what: str) -> FileResult:
    result = FileResult()
    if data is None:
        return result
    if not isinstance(data, YamlList):
        result.problems.append(Problem(name, *start_of(data), f"expected a list of {what}s (- entries)"))
        return result
    for index, item in enumerate(data):
        _validate(result, model, item, name, data, (index,))
    return result


def _validate(result: FileResult, model: type[S], data: Any, name: str, document: Any, prefix: Loc) -> None:
    spec = validate(model, data, name, prefix=prefix, document=document)
    if isinstance(spec, list):
        result.problems.extend(spec)
        return
    line, column = (value_position(document, prefix[-1]) if prefix else None) or start_of(data)
    references: list[tuple[Loc, tuple[Reference, ...]]] = []
    _collect_references(spec, (), references)
    result.specs.append(SpecAt(spec, line, column, prefix, references))


def _collect_references(value: object, loc: Loc, found: list[tuple[Loc, tuple[Reference, ...]]]) -> None:
    """Every text of ``value`` that holds references, with its loc (union tags removed): what
    :func:`~cmssync.content.text.iter_texts` walks, without a generator per level."""
    if isinstance(value, Text):
        references = value.references
        if references:
            found.append((clean_loc(loc), references))
    elif isinstance(value, BaseModel):
        for name in type(value).model_fields:
            _collect_references(getattr(value, name), (*loc, name), found)
    elif isinstance(value, dict):
        for key, item in value.items():
            _collect_references(item, (*loc, key), found)
    elif isinstance(value, list | tuple):
        for index, item in enumerate(value):
            _collect_references(item, (*loc, index), found)
