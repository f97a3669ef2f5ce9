"""Models of the desired site, as written in the content directory (design.md §3).

Every model is strict about its keys (``extra="forbid"``: a typo is an error, never ignored) and frozen. Strings
that may hold references are :class:`~cmssync.content.text.Text`; handles, names and usernames are plain strings.

Blocks are a union discriminated on ``type`` for the block types cmssync models (``content``, ``html``,
``page_title``, ``horizontal_rule``). Any other block type is written with ``raw: true`` and a flat mapping of
scalars as its ``value``, passed to the site as it is::

    - type: image
      raw: true
      value: {fID: "12", altText: Logo}

A block that cmssync must leave exactly as it is on the site (a layout, a container, a gallery: types whose API read
loses data, so writing them back would damage them) is a placeholder that keeps its place in the area::

    - keep: {type: core_area_layout, id: 104}

It is never written, re-created, or deleted and re-added; removing the placeholder deletes the block.

Because ``raw`` is explicit, a misspelt known type (``type: contnet``) or a misspelt field of a known type
(``value: {contnet: …}``) is still an error.

Where a spec came from (file, line, column) is kept outside the fields, in ``spec.source``; it does not take part in
equality, so a spec loaded from a reformatted file equals the one loaded before.
"""

from __future__ import annotations

import contextlib
import math
import re
from datetime import date, datetime
from typing import Annotated, Any, Literal

from pydantic import (
    AfterValidator,
    BaseModel,
    ConfigDict,
    Discriminator,
    Field,
    PlainSerializer,
    PlainValidator,
    PrivateAttr,
    SerializationInfo,
    StrictBool,
    StrictInt,
    Tag,
    WithJsonSchema,
)

from cmssync.config import ConflictPolicy, ForeignDraftPolicy, IgnoreRule
from cmssync.content.paths import HANDLE, MAX_NAME, check_username
from cmssync.content.text import EnvRef, Text, parse_env_reference
from cmssync.errors import Problem

KNOWN_BLOCK_TYPES = ("content", "html", "horizontal_rule", "page_title")
UNCREATABLE_BLOCK_TYPES = ("core_area_layout", "core_container")
"""Block types the REST API cannot add: Concrete answers 500 (``Undefined array key "gridType"`` / ``"containerID"``)
for any value, because their ``save()`` needs data only the page editor sends (blocks.jsonl ``layout.add.*``)."""


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


_DUMP = PlainSerializer(_dump_value)
_SCALAR_SCHEMA = {"anyOf": [{"type": "string"}, {"type": "number"}, {"type": "boolean"}]}
Scalar = Annotated[
    bool | int | float | Text,
    PlainValidator(_scalar, json_schema_input_type=str | int | float | bool),
    WithJsonSchema(_SCALAR_SCHEMA),
    _DUMP,
]
AttributeValue = Annotated[
    bool | int | float | Text | list[Text],
    PlainValidator(_attribute_value),
    WithJsonSchema({"anyOf": [*_SCALAR_SCHEMA["anyOf"], {"type": "array", "items": {"type": "string"}}]}),
    _DUMP,
]


class Location(BaseModel):
    """Where a spec is written: a content-relative POSIX path and a 1-based position (1:1 for a whole file)."""

    model_config = ConfigDict(frozen=True)

    file: str
    line: int = 1
    column: int = 1

    def problem(self, message: str) -> Problem:
        return Problem(self.file, self.line, self.column, message)

    def __str__(self) -> str:
        return f"{self.file}:{self.line}:{self.column}"


class Spec(BaseModel):
    """Base of the content models: unknown keys are errors, values are frozen, equality ignores the source."""

    model_config = ConfigDict(extra="forbid", frozen=True, use_attribute_docstrings=True)

    _source: Location | None = PrivateAttr(default=None)

    @property
    def source(self) -> Location | None:
        return self._source

    def located(self, source: Location) -> Spec:
        self._source = source  # a private attribute: allowed on a frozen model, and not part of equality
        return self

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, BaseModel):
            return NotImplemented
        return type(self) is type(other) and self.__dict__ == other.__dict__

    __hash__ = None  # type: ignore[assignment]


# --- blocks -------------------------------------------------------------------------------------------------------


class ContentValue(Spec):
    content: Text
    """Rich-text HTML; reference uploaded files with ``${file:PATH}``."""


class HtmlValue(Spec):
    content: Text
    """Raw HTML, output as it is."""


class PageTitleValue(Spec):
    useCustomTitle: StrictBool = False
    titleText: Text | None = None
    formatting: str = "h1"
    """The heading element, e.g. ``h1``."""


class EmptyValue(Spec):
    pass


class ContentBlock(Spec):
    type: Literal["content"]
    value: ContentValue


class HtmlBlock(Spec):
    type: Literal["html"]
    value: HtmlValue


class PageTitleBlock(Spec):
    type: Literal["page_title"]
    value: PageTitleValue = Field(default_factory=PageTitleValue)


class HorizontalRuleBlock(Spec):
    type: Literal["horizontal_rule"]
    value: EmptyValue = Field(default_factory=EmptyValue)


def _not_known_type(value: str) -> str:
    if value in KNOWN_BLOCK_TYPES:
        raise ValueError(f"block type {value!r} has a model: remove 'raw: true' and write its fields")
    if value in UNCREATABLE_BLOCK_TYPES:
        raise ValueError(
            f"the API cannot create a {value} block (Concrete answers 500): keep an existing one in its place "
            f"with '- keep: {{type: {value}, id: N}}'"
        )
    return value


class RawBlock(Spec):
    """A block type cmssync has no model for; ``value`` is a flat mapping of scalars, sent to the site as is."""

    type: Annotated[
        Handle,
        AfterValidator(_not_known_type),
        Field(json_schema_extra={"not": {"enum": [*KNOWN_BLOCK_TYPES, *UNCREATABLE_BLOCK_TYPES]}}),
    ]
    """The block type handle, e.g. ``image`` (not one of the modelled types)."""
    raw: Literal[True]
    """Marks a block type without a model: required, so that a misspelt known type is still an error."""
    value: dict[Annotated[str, Field(strict=True, min_length=1)], Scalar] = Field(default_factory=dict)


class KeptBlockRef(Spec):
    type: Handle
    """The block type handle of the block on the site, e.g. ``core_area_layout``."""
    id: Annotated[StrictInt, Field(ge=1)]
    """The block id on the site (as ``pull`` wrote it)."""


class KeepBlock(Spec):
    """A placeholder for a block that stays as it is on the site: ``- keep: {type: core_area_layout, id: 104}``."""

    keep: KeptBlockRef

    @property
    def type(self) -> str:
        return self.keep.type

    @property
    def block_id(self) -> int:
        return self.keep.id


def block_tag(value: Any) -> str | None:
    """The union member for a block: ``raw`` when ``raw: true``, ``keep`` for a placeholder, else its ``type``."""
    if isinstance(value, dict):
        if "keep" in value:
            return "keep"
        if value.get("raw") is True:
            return "raw"
        kind = value.get("type")
        return kind if isinstance(kind, str) else None
    if isinstance(value, RawBlock):
        return "raw"
    if isinstance(value, KeepBlock):
        return "keep"
    if isinstance(value, Spec):
        kind = getattr(value, "type", None)
        return kind if isinstance(kind, str) else None
    return None


Block = Annotated[
    Annotated[ContentBlock, Tag("content")]
    | Annotated[HtmlBlock, Tag("html")]
    | Annotated[PageTitleBlock, Tag("page_title")]
    | Annotated[HorizontalRuleBlock, Tag("horizontal_rule")]
    | Annotated[RawBlock, Tag("raw")]
    | Annotated[KeepBlock, Tag("keep")],
    Discriminator(block_tag),
]
BLOCK_TAGS = frozenset({*KNOWN_BLOCK_TYPES, "raw", "keep"})


# --- pages --------------------------------------------------------------------------------------------------------


class PageSpec(Spec):
    """A page file ``pages/….yaml``; its path comes from the file's place (see ``cmssync.content.layout``)."""

    name: Name
    description: Text | None = None
    type: Handle | None = None
    """Page type handle, used when the page is created (e.g. ``page``)."""
    template: Handle | None = None
    """Template handle (e.g. ``full``)."""
    id: Annotated[StrictInt, Field(ge=1)] | None = None
    """Pin to an existing page id (adoption)."""
    attributes: dict[Handle, AttributeValue] = Field(default_factory=dict)
    """Attribute handle → value; only the handles written here are managed."""
    areas: dict[Name, list[Block]] = Field(default_factory=dict)
    """Area name → blocks; only the areas written here are managed (``[]``: managed and empty)."""
    publish_end_date: PublishEndDate | None = None
    """Set on the published version: a date (``2027-01-31``) or a date and time (``2027-01-31T18:00:00``)."""
    ignore: IgnoreRule | None = None
    """Differences on this page left to the editors (fields, attributes, areas, blocks): never drift, never reverted
    (docs/editor-safety.md)."""
    protect: bool = False
    """Never delete or replace this page, whatever the content or ``--replace-moved`` say."""
    on_conflict: ConflictPolicy | dict[str, ConflictPolicy] | None = None
    """This page's conflict policy: one for every field, or field → policy (``*`` for the others)."""
    on_foreign_draft: ForeignDraftPolicy | None = None
    """This page's policy for someone else's pending draft (overrides the ``on_foreign_draft`` setting)."""


def _date_or_datetime(value: Any) -> date | datetime:
    if isinstance(value, date):  # datetime is a date too
        return value
    if isinstance(value, str):
        with contextlib.suppress(ValueError):
            return date.fromisoformat(value) if len(value) == 10 else datetime.fromisoformat(value)
    raise ValueError("expected a date (2027-01-31) or a date and time (2027-01-31T18:00:00)")


def _dump_date(value: date | datetime, info: SerializationInfo) -> date | datetime | str:
    return value.isoformat() if info.mode_is_json() else value


PublishEndDate = Annotated[
    date | datetime,
    PlainValidator(_date_or_datetime, json_schema_input_type=str),
    PlainSerializer(_dump_date),
    WithJsonSchema({"anyOf": [{"type": "string", "format": "date"}, {"type": "string", "format": "date-time"}]}),
]


# --- files --------------------------------------------------------------------------------------------------------


class FileAttributes(Spec):
    width: Annotated[StrictInt, Field(ge=0)] | None = None
    height: Annotated[StrictInt, Field(ge=0)] | None = None
    duration: Annotated[float, Field(ge=0, allow_inf_nan=False)] | None = None


class FileSidecar(Spec):
    """``files/<asset>.yaml``: metadata of ``files/<asset>``."""

    title: Text | None = None
    description: Text | None = None
    tags: list[Name] = Field(default_factory=list)
    folder: Annotated[StrictInt, Field(ge=0)] | Name | None = None
    """A file-manager folder id, or a name from ``folders:`` in ``cmssync.yaml``."""
    attributes: FileAttributes = Field(default_factory=FileAttributes)


# --- users and groups ---------------------------------------------------------------------------------------------

EMAIL = re.compile(r"[^@\s]+@[^@\s]+\.[^@\s]+")
LANGUAGE = re.compile(r"[a-z]{2,3}(_[A-Z]{2})?")


def _email(value: str) -> str:
    if len(value) > 254 or not EMAIL.fullmatch(value):
        raise ValueError(f"invalid email address {value!r}")
    return value


def _language(value: str) -> str:
    if not LANGUAGE.fullmatch(value):
        raise ValueError(f"invalid language {value!r}: use a locale such as en_US")
    return value


Email = Annotated[str, Field(strict=True, json_schema_extra={"format": "email"}), AfterValidator(_email)]
Language = Annotated[
    str, Field(strict=True, json_schema_extra={"pattern": f"^{LANGUAGE.pattern}$"}), AfterValidator(_language)
]


def _password(value: Any) -> EnvRef:
    if isinstance(value, EnvRef):
        return value
    if not isinstance(value, str):
        raise ValueError("a password must be an environment reference such as ${env:EDITOR_PASSWORD}")
    return parse_env_reference(value)


Password = Annotated[
    EnvRef,
    PlainValidator(_password, json_schema_input_type=str),
    WithJsonSchema({"type": "string", "pattern": r"^\$\{env:[A-Za-z_][A-Za-z0-9_]*\}$"}),
    _DUMP,
]


class UserSpec(Spec):
    """One entry of ``users.yaml`` (or ``users/*.yaml``)."""

    username: Username
    email: Email
    language: Language | None = None
    """A locale such as ``en_US``."""
    password: Password | None = None
    """``${env:NAME}``; needed when cmssync creates the user or changes its password."""
    attributes: dict[Handle, AttributeValue] = Field(default_factory=dict)


class GroupSpec(Spec):
    """One entry of ``groups.yaml`` (or ``groups/*.yaml``)."""

    name: Name
