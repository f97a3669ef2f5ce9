"""Block models: a union discriminated on ``type`` with one model per type the table
(:mod:`cmssync.content.blocktypes`) gives fields, ``raw`` blocks for the others, and ``keep`` placeholders (see
:mod:`cmssync.content.models` for how they are written).

The models of the declared types are built here from their fields (:func:`value_annotation` maps each field kind
to a pydantic type); :func:`block_model` finds one by handle.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Annotated, Any, Literal, Union

from pydantic import AfterValidator, Discriminator, Field, StrictBool, StrictInt, Tag, create_model

from cmssync.content.blocktypes import BlockField, BlockType, modelled_types, uncreatable_types
from cmssync.content.fields import Handle, Scalar, Spec
from cmssync.content.paths import check_page_path
from cmssync.content.text import Text

KNOWN_BLOCK_TYPES = tuple(t.handle for t in modelled_types())
UNCREATABLE_BLOCK_TYPES = tuple(t.handle for t in uncreatable_types())
"""Block types the REST API cannot add (their ``uncreatable`` says why)."""


def _stack_handle(value: str) -> str:
    """A stack's handle, as its file ``stacks/<handle>.yaml`` names it (a localized version: ``footer/footer``)."""
    check_page_path("/" + value, existing=True)
    return value


StackHandle = Annotated[str, Field(strict=True, min_length=1), AfterValidator(_stack_handle)]


class ModelledBlock(Spec):
    """The base of the models built for the declared block types: ``type`` and a ``value`` of its fields."""

    type: str
    value: Spec


def value_annotation(declared: BlockField) -> Any:
    """The pydantic type of one field, by its kind (see :mod:`cmssync.content.blocktypes.descriptor`)."""
    if declared.kind == "bool":
        annotation: Any = StrictBool
    elif declared.kind == "int":
        annotation = StrictInt
    elif declared.kind == "choice":
        annotation = Literal[declared.choices]
    elif declared.kind in ("string", "page_type", "folder"):
        annotation = str
    elif declared.kind == "stack":
        annotation = StackHandle
    else:
        annotation = Text
    return annotation if declared.required or declared.default is not None else annotation | None


def _camel(handle: str) -> str:
    return "".join(part.capitalize() for part in handle.split("_"))


def _build(declared: BlockType) -> type[ModelledBlock]:
    """The value model and the block model of one declared type, registered in this module (so they pickle)."""
    fields: dict[str, Any] = {}
    for item in declared.fields:
        doc = item.doc or None
        info = Field(description=doc) if item.required else Field(item.default, description=doc)
        fields[item.name] = (value_annotation(item), info)
    name = _camel(declared.handle)
    value_model = create_model(f"{name}Value", __base__=Spec, __module__=__name__, **fields)
    required = any(item.required for item in declared.fields)
    value_field = (value_model, Field()) if required else (value_model, Field(default_factory=value_model))
    handle: Any = Literal[declared.handle]  # a type built at run time: Any for every pydantic's stubs
    block = create_model(
        f"{name}Block",
        __base__=ModelledBlock,
        __module__=__name__,
        type=(handle, Field()),
        value=value_field,
    )
    globals()[value_model.__name__] = value_model
    globals()[block.__name__] = block
    return block


_MODELS: dict[str, type[ModelledBlock]] = {t.handle: _build(t) for t in modelled_types()}


def block_model(handle: str) -> type[ModelledBlock]:
    """The model of a declared type with fields (``KeyError`` for another)."""
    return _MODELS[handle]


def _not_known_type(value: str) -> str:
    if value in KNOWN_BLOCK_TYPES:
        raise ValueError(f"block type {value!r} has a model: remove 'raw: true' and write its fields")
    if value in UNCREATABLE_BLOCK_TYPES:
        reason = next(t.uncreatable for t in uncreatable_types() if t.handle == value)
        raise ValueError(f"{reason}: keep an existing one in its place with '- keep: {{type: {value}, id: N}}'")
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
    """The block type handle of the block on the site, e.g. a layout's."""
    id: Annotated[StrictInt, Field(ge=1)]
    """The block id on the site (as ``pull`` wrote it)."""


class KeepBlock(Spec):
    """A placeholder for a block that stays as it is on the site: ``- keep: {type: <handle>, id: 104}``."""

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


if TYPE_CHECKING:
    Block = ModelledBlock | RawBlock | KeepBlock
else:
    Block = Annotated[
        Union[  # noqa: UP007 (built from the table at run time)
            tuple(
                [Annotated[model, Tag(handle)] for handle, model in _MODELS.items()]
                + [Annotated[RawBlock, Tag("raw")], Annotated[KeepBlock, Tag("keep")]]
            )
        ],
        Discriminator(block_tag),
    ]
BLOCK_TAGS = frozenset({*KNOWN_BLOCK_TYPES, "raw", "keep"})
