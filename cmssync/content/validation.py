"""Validating a parsed YAML tree against a model, turning pydantic's errors into located, readable problems.

Pydantic's ``loc`` says where in the data an error is; :func:`~cmssync.yamlread.position_of` says where
that is in the file. Messages are rewritten where pydantic's default is unhelpful for a YAML author: unknown keys
name the key (with a suggestion), missing keys name the key, unknown block types list the known ones.
"""

from __future__ import annotations

import difflib
from collections.abc import Iterable
from typing import Any, TypeVar

from pydantic import BaseModel, ValidationError
from pydantic_core import ErrorDetails

from cmssync.content import models
from cmssync.content.blocktypes import modelled_types
from cmssync.errors import Problem
from cmssync.yamlread import position_of, start_of

M = TypeVar("M", bound=BaseModel)


def _vocabulary() -> list[str]:
    names: set[str] = set()
    for value in vars(models).values():
        if isinstance(value, type) and issubclass(value, BaseModel):
            names.update(value.model_fields)
    for declared in modelled_types():
        names.update(item.name for item in declared.fields)
    return sorted(names)


_KEYS = _vocabulary()


def validate(
    model: type[M],
    data: Any,
    file: str,
    *,
    prefix: tuple[str | int, ...] = (),
    document: Any = None,
) -> M | list[Problem]:
    """``model.model_validate(data)``, or every problem with its position in ``document`` (default: ``data``).

    ``prefix`` is the loc of ``data`` inside ``document`` (e.g. ``(3,)`` for the fourth user of a list).
    """
    try:
        return model.model_validate(data)
    except ValidationError as exc:
        tree = data if document is None else document
        return [error_problem(err, file, tree, prefix) for err in exc.errors()]


def error_problem(err: ErrorDetails, file: str, document: Any, prefix: tuple[str | int, ...]) -> Problem:
    loc = (*prefix, *clean_loc(err["loc"]))
    kind = err["type"]
    if err["loc"] and err["loc"][-1] == "[key]":
        line, column = position_of(document, loc, at_key=True)
        return Problem(file, line, column, where(loc[:-1]) + _message(err))
    if kind == "extra_forbidden":
        line, column = position_of(document, loc, at_key=True)
        key = str(loc[-1])
        return Problem(file, line, column, where(loc[:-1]) + f"unknown key {key!r}{_suggest(key, loc[:-1])}")
    if kind == "missing":
        line, column = position_of(document, loc[:-1])
        return Problem(file, line, column, where(loc[:-1]) + f"missing required key {str(loc[-1])!r}")
    if kind == "union_tag_invalid":
        line, column = position_of(document, (*loc, "type"))
        return Problem(file, line, column, where(loc) + _unknown_block_type(err.get("ctx", {}).get("tag")))
    if kind == "union_tag_not_found":
        line, column = position_of(document, loc)
        return Problem(file, line, column, where(loc) + "a block is a mapping with a 'type' (and its 'value')")
    if kind == "model_type" and not loc:
        return Problem(file, *start_of(document), "expected a mapping of fields")
    line, column = position_of(document, loc)
    return Problem(file, line, column, where(loc) + _message(err))


def clean_loc(loc: Iterable[str | int]) -> tuple[str | int, ...]:
    """Drop the union tags pydantic puts in a loc (``areas.Main.0.content.value`` → ``areas.Main.0.value``)."""
    parts = list(loc)
    cleaned: list[str | int] = []
    for index, part in enumerate(parts):
        previous = parts[index - 1] if index else None
        if isinstance(previous, int) and part in models.BLOCK_TAGS and _in_areas(parts[:index]):
            continue
        if part == "[key]":
            continue
        cleaned.append(part)
    return tuple(cleaned)


def _in_areas(parts: list[str | int]) -> bool:
    return len(parts) >= 3 and parts[-3] == "areas"


def where(loc: tuple[str | int, ...]) -> str:
    text = ""
    for part in loc:
        if isinstance(part, int):
            text += f"[{part}]"
        else:
            text += f".{part}" if text else str(part)
    return f"{text}: " if text else ""


def _message(err: ErrorDetails) -> str:
    message = err["msg"]
    for prefix in ("Value error, ", "Assertion failed, "):
        if message.startswith(prefix):
            message = message[len(prefix) :]
    return message


def _suggest(key: str, parent: tuple[str | int, ...]) -> str:
    """A hint for an unknown key under ``parent``: where a key that exists elsewhere belongs (a block's field goes
    under its ``value:``), else the closest known key."""
    if key in _KEYS:
        if _in_areas(list(parent)):
            return f" here: a block's fields go under its value: (value: {{{key}: …}})"
        return " here (it is a key of another level: check its indentation)"
    close = difflib.get_close_matches(key, _KEYS, n=1, cutoff=0.75)
    return f" (did you mean {close[0]!r}?)" if close else ""


def _unknown_block_type(tag: object) -> str:
    known = ", ".join(models.KNOWN_BLOCK_TYPES)
    close = difflib.get_close_matches(str(tag), models.KNOWN_BLOCK_TYPES, n=1, cutoff=0.75)
    hint = f"did you mean {close[0]!r}? " if close else ""
    return (
        f"unknown block type {tag!r} ({hint}known: {known}); for another block type add 'raw: true' "
        "and give its value as a flat mapping"
    )
