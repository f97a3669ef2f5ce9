"""Models of the desired site, as written in the content directory (design.md §3).

Every model is strict about its keys (``extra="forbid"``: a typo is an error, never ignored) and frozen. Strings
that may hold references are :class:`~cmssync.content.text.Text`; handles, names and usernames are plain strings.

Blocks are a union discriminated on ``type`` for the block types cmssync models (the types with fields in
:mod:`cmssync.content.blocktypes`, such as ``content`` and ``html``). Any other block type is written with
``raw: true`` and a flat mapping of scalars as its ``value``, passed to the site as it is::

    - type: image
      raw: true
      value: {fID: "12", altText: Logo}

A block that cmssync must leave exactly as it is on the site (a layout, a container, a gallery: types whose API read
loses data, so writing them back would damage them) is a placeholder that keeps its place in the area::

    - keep: {type: gallery, id: 104}

It is never written, re-created, or deleted and re-added; removing the placeholder deletes the block.

Because ``raw`` is explicit, a misspelt known type (``type: contnet``) or a misspelt field of a known type
(``value: {contnet: …}``) is still an error.

Where a spec came from (file, line, column) is kept outside the fields, in ``spec.source``; it does not take part in
equality, so a spec loaded from a reformatted file equals the one loaded before.

This module holds the specs of files and of the users' list entries (pages, sidecars, users) and re-exports the
rest: the field types and spec bases are in :mod:`~cmssync.content.fields`, the block models in
:mod:`~cmssync.content.blocks`; another list kind's entry is its module's in :mod:`cmssync.content.lists`.
"""

from __future__ import annotations

import contextlib
import re
from datetime import date, datetime
from typing import Annotated, Any

from pydantic import (
    AfterValidator,
    Field,
    PlainSerializer,
    PlainValidator,
    SerializationInfo,
    StrictInt,
    WithJsonSchema,
    model_validator,
)

from cmssync.config import ConflictPolicy, DriftPolicy, ForeignDraftPolicy, IgnoreRule
from cmssync.content.blocks import (
    BLOCK_TAGS,
    KNOWN_BLOCK_TYPES,
    UNCREATABLE_BLOCK_TYPES,
    Block,
    KeepBlock,
    KeptBlockRef,
    ModelledBlock,
    RawBlock,
    block_model,
    block_tag,
)
from cmssync.content.fields import (
    DUMP_WRITTEN,
    AttributeValue,
    Handle,
    LocatedSpec,
    Location,
    Name,
    Scalar,
    Spec,
    Username,
)
from cmssync.content.text import EnvRef, Text, parse_env_reference

__all__ = [
    "BLOCK_TAGS",
    "KNOWN_BLOCK_TYPES",
    "UNCREATABLE_BLOCK_TYPES",
    "AttributeValue",
    "Block",
    "FileAttributes",
    "FileSidecar",
    "Handle",
    "KeepBlock",
    "KeptBlockRef",
    "LocatedSpec",
    "Location",
    "ModelledBlock",
    "Name",
    "PageSpec",
    "RawBlock",
    "Scalar",
    "Spec",
    "UserSpec",
    "Username",
    "block_model",
    "block_tag",
]


# --- pages --------------------------------------------------------------------------------------------------------


RELATION_KEYS = ("translation_of", "translations", "translation", "related")
"""Keys a user might write to relate translations; refused with the reason (:meth:`PageSpec._no_relations`)."""


class PageSpec(LocatedSpec):
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
    on_drift: DriftPolicy | dict[str, DriftPolicy] | None = None
    """This page's drift policy (an editor's approved change to what the content did not change): one for every
    field, or field → policy (``*`` for the others); overrides ``drift`` in cmssync.yaml."""
    areas_owned: bool | None = None
    """Whether this page's content owns its managed areas: ``true`` deletes blocks editors add to them, ``false``
    keeps them as additions on the site (overrides the ``areas`` setting)."""
    locale: Annotated[str, Field(pattern=r"^[a-z]{2,3}(_[A-Za-z0-9]+)+$")] | None = None
    """Only on the home of a locale tree other than the default one (``pages/de/index.yaml``: ``de_DE``, written by
    ``pull``): the tree it is the home of. cmssync checks it against the site; it cannot add a locale (the REST API
    has no way to), so a tree the site does not have is an error (docs/content-format.md, locale trees)."""

    @model_validator(mode="before")
    @classmethod
    def _no_relations(cls, data: Any) -> Any:
        """Which page translates which cannot be written: the REST API neither shows nor sets Concrete's
        multilingual relations."""
        for key in RELATION_KEYS:
            if isinstance(data, dict) and key in data:
                raise ValueError(
                    f"{key}: the REST API cannot relate pages across locale trees (Concrete's multilingual relations "
                    "are not in the API); pages at the same place in each tree are shown as translations by "
                    "`cmssync status`, and relations are made in the dashboard"
                )
        return data


class StackSpec(LocatedSpec):
    """A stack file ``stacks/<handle>.yaml``: a stack of the site (a theme's global area — header navigation, a
    footer column — or another stack), found by its page ``id`` (the API lists no stack: ``pull`` finds them by
    reading page ids). Only its areas are managed (a stack holds its blocks in ``Main``); it is published like a
    page (versions, approval, drafts, conflicts), never created, renamed or deleted by cmssync."""

    id: Annotated[StrictInt, Field(ge=1)]
    """The stack's page id on the site."""
    name: Name
    """The stack's name on the site (``Footer Column 1``): never written (a theme finds a global area's stack by its
    name, so renaming it would empty the area on every page); the plan warns when it differs from the site's."""
    areas: dict[Name, list[Block]] = Field(default_factory=dict)
    """Area name (``Main``) → blocks, as on a page."""
    ignore: IgnoreRule | None = None
    on_conflict: ConflictPolicy | dict[str, ConflictPolicy] | None = None
    on_foreign_draft: ForeignDraftPolicy | None = None
    on_drift: DriftPolicy | dict[str, DriftPolicy] | None = None

    def as_page(self) -> PageSpec:
        """The page the planner sees: the same id and areas, nothing else managed."""
        page = PageSpec(
            name=self.name,
            id=self.id,
            areas=self.areas,
            ignore=self.ignore,
            on_conflict=self.on_conflict,
            on_foreign_draft=self.on_foreign_draft,
            on_drift=self.on_drift,
            protect=True,
        )
        if self.source is not None:
            page.located(self.source)
        return page


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


class FileSidecar(LocatedSpec):
    """``files/<asset>.yaml``: metadata of ``files/<asset>``."""

    title: Text | None = None
    description: Text | None = None
    tags: list[Name] = Field(default_factory=list)
    folder: Annotated[StrictInt, Field(ge=0)] | Name | None = None
    """A file-manager folder id, or a name from ``folders:`` in ``cmssync.yaml``."""
    attributes: FileAttributes = Field(default_factory=FileAttributes)


# --- users --------------------------------------------------------------------------------------------------------

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
    DUMP_WRITTEN,
]


class UserSpec(LocatedSpec):
    """One entry of ``users.yaml`` (or ``users/*.yaml``)."""

    username: Username
    email: Email
    language: Language | None = None
    """A locale such as ``en_US``."""
    password: Password | None = None
    """``${env:NAME}``; needed when cmssync creates the user or changes its password."""
    attributes: dict[Handle, AttributeValue] = Field(default_factory=dict)
