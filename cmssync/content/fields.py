"""The building blocks of the content models: field types (handles, names, scalars, attribute values), where a
spec is written (:class:`Location`) and the spec bases (:class:`Spec`, :class:`LocatedSpec`).

Every model is strict about its keys (``extra="forbid"``: a typo is an error, never ignored) and frozen. Strings
that may hold references are :class:`~cmssync.content.text.Text`; handles, names and usernames are plain strings.
Where a spec came from (file, line, column) is kept outside the fields, in ``spec.source``; it does not take part in
equality, so a spec loaded from a reformatted file equals the one loaded before.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Annotated, Any

from pydantic import (
    AfterValidator,
    BaseModel,
    ConfigDict,
    Field,
    PlainSerializer,
    PlainValidator,
    PrivateAttr,
    WithJsonSchema,
)

from cmssync.content.paths import HANDLE, MAX_NAME, check_username
from cmssync.content.text import EnvRef, Text
from cmssync.errors import Problem
from cmssync.memory import SharedFieldsModel


def _handle(value: str) -> str:
    if not HANDLE.fullmatch(value) or len(value) > MAX_NAME:
        raise ValueError(f"invalid handle {value!r}: use lowercase letters, digits and '_', starting with a letter")
    return value


def _name(value: str) -> str:
    if not value.strip():
        raise ValueError("must not be empty")
    if value != value.strip():
        raise ValueError("must not start or end with spaces")
    if len(value) > MAX_NAME:
        raise ValueError(f"must be at most {MAX_NAME} characters long")
    return value


Handle = Annotated[
    str, Field(strict=True, json_schema_extra={"pattern": f"^{HANDLE.pattern}$"}), AfterValidator(_handle)
]
Name = Annotated[str, Field(strict=True), AfterValidator(_name)]


def _username(value: str) -> str:
    check_username(value)
    return value


Username = Annotated[str, Field(strict=True), AfterValidator(_username)]


def _scalar(value: Any) -> bool | int | float | Text:
    # ruamel gives subclasses (ScalarInt, ScalarFloat, …); keep plain Python values in the models.
    if isinstance(value, bool):
        return bool(value)
    if isinstance(value, int):
        return int(value)
    if isinstance(value, float):
        if not math.isfinite(value):
            raise ValueError("numbers must be finite")
        return float(value)
    if isinstance(value, Text):
        return value
    if isinstance(value, str):
        return Text(value)
    raise ValueError("expected a string, number or boolean")


def _attribute_value(value: Any) -> bool | int | float | Text | list[Text]:
    if isinstance(value, list | tuple):
        items: list[Text] = []
        for item in value:
            if not isinstance(item, str | Text):
                raise ValueError("a list attribute value (such as tags) holds only strings")
            items.append(item if isinstance(item, Text) else Text(item))
        return items
    try:
        return _scalar(value)
    except ValueError:
        raise ValueError("an attribute value is a string, number, boolean or list of strings") from None


def _dump_value(value: Any) -> Any:
    if isinstance(value, Text | EnvRef):
        return value.source
    if isinstance(value, list):
        return [_dump_value(item) for item in value]
    return value


DUMP_WRITTEN = PlainSerializer(_dump_value)
"""Serializes texts and environment references as they are written (``$${`` and ``${env:…}`` kept)."""
_SCALAR_SCHEMA = {"anyOf": [{"type": "string"}, {"type": "number"}, {"type": "boolean"}]}
Scalar = Annotated[
    bool | int | float | Text,
    PlainValidator(_scalar, json_schema_input_type=str | int | float | bool),
    WithJsonSchema(_SCALAR_SCHEMA),
    DUMP_WRITTEN,
]
AttributeValue = Annotated[
    bool | int | float | Text | list[Text],
    PlainValidator(_attribute_value),
    WithJsonSchema({"anyOf": [*_SCALAR_SCHEMA["anyOf"], {"type": "array", "items": {"type": "string"}}]}),
    DUMP_WRITTEN,
]


@dataclass(frozen=True, slots=True)
class Location:
    """Where a spec is written: a content-relative POSIX path and a 1-based position (1:1 for a whole file). A slotted
    dataclass, not a model: every page holds one (~70 bytes instead of ~470)."""

    file: str
    line: int = 1
    column: int = 1

    def problem(self, message: str) -> Problem:
        return Problem(self.file, self.line, self.column, message)

    def __str__(self) -> str:
        return f"{self.file}:{self.line}:{self.column}"


class Spec(SharedFieldsModel):
    """Base of the content models: unknown keys are errors, values are frozen, equality ignores the source; equal
    sets of given fields are one object (:mod:`cmssync.memory`)."""

    model_config = ConfigDict(extra="forbid", frozen=True, use_attribute_docstrings=True)

    @property
    def source(self) -> Location | None:
        """Where the spec is written; only a :class:`LocatedSpec` knows (the loader locates those)."""
        return None

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, BaseModel):
            return NotImplemented
        return type(self) is type(other) and self.__dict__ == other.__dict__

    __hash__ = None  # type: ignore[assignment]


class LocatedSpec(Spec):
    """A spec that is a file or an entry of a list file (a page, a sidecar, a user, a group): it knows where it is
    written. Only these carry the private attribute, so the specs inside them (blocks, values) are built without
    pydantic's per-instance private-attribute set-up."""

    _source: Location | None = PrivateAttr(default=None)

    @property
    def source(self) -> Location | None:
        return self._source

    def located(self, source: Location) -> LocatedSpec:
        self._source = source  # a private attribute: allowed on a frozen model, and not part of equality
        return self
