"""Block models: a union discriminated on ``type`` for the block types cmssync models, ``raw`` blocks for the
others, and ``keep`` placeholders (see :mod:`cmssync.content.models` for how they are written)."""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import AfterValidator, Discriminator, Field, StrictBool, StrictInt, Tag

from cmssync.content.fields import Handle, Scalar, Spec
from cmssync.content.text import Text

KNOWN_BLOCK_TYPES = ("content", "html", "horizontal_rule", "page_title")
UNCREATABLE_BLOCK_TYPES = ("core_area_layout", "core_container")
"""Block types the REST API cannot add: Concrete answers 500 (``Undefined array key "gridType"`` / ``"containerID"``)
for any value, because their ``save()`` needs data only the page editor sends (blocks.jsonl ``layout.add.*``)."""


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
