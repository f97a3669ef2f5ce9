"""A page's desired form: built once from its content spec, carried by the plan, rendered for planning and apply.

:func:`page_form` turns a :class:`~cmssync.content.models.PageSpec` into a :class:`PageForm`: its managed fields,
the **write form** of every block (booleans as ``"1"``/``"0"``, empty optional fields as ``""``, fields the
controller rejects left out; :mod:`cmssync.content.blocktypes` says how per type) and its end date, with references
still as written (``${page-link:/p}``): their ids may only exist once an earlier action of the same apply has run.

The planner renders the form with a ``compare`` resolver into a :class:`DesiredPage` (compared with the live page;
its digest is what the state records); apply renders the form the plan carries with a ``write`` resolver
(:func:`write_value`, :func:`write_fields`) and, at the end of a page, into the same :class:`DesiredPage` for the
digest. So apply never reads the content, and there is one way from content to what is written or compared.

Pure. In a plan file a text holding references is ``{"text": "<as written>"}``.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from pydantic import Field

from cmssync.content.blocktypes import BlockType, block_type
from cmssync.content.blocktypes.descriptor import COLUMN_KINDS
from cmssync.content.models import Block, KeepBlock, ModelledBlock, PageSpec, RawBlock
from cmssync.content.paths import STACKS_PREFIX, is_stack_path, page_object_id
from cmssync.plan.block_form import BlockForm, FormValue, FrozenForm
from cmssync.plan.blocks import DesiredBlock, LiveBlock, values_match
from cmssync.plan.desired import Render, render
from cmssync.plan.normalize import digest, normalize_block_value, normalize_date, normalize_text
from cmssync.plan.references import page_export, page_type_export

DEFAULT_TYPE = "page"
"""The page type of a new page whose content names none."""
DEFAULT_TEMPLATE = "full"


class PageForm(FrozenForm):
    """A page as the content wants it (see the module docstring)."""

    fields: dict[str, FormValue]
    """``name``, and when the content sets them ``description``, ``type``, ``template``, ``attributes.<handle>``."""
    areas: dict[str, tuple[BlockForm, ...]] = Field(default_factory=dict)
    end_date: str | None = None
    """The published version's end date, ``YYYY-MM-DD HH:MM:SS``."""
    protect: bool = False


def page_form(spec: PageSpec) -> PageForm:
    fields: dict[str, Any] = {"name": spec.name}
    if spec.description is not None:
        fields["description"] = spec.description
    if spec.type is not None:
        fields["type"] = spec.type
    if spec.template is not None:
        fields["template"] = spec.template
    for handle, value in spec.attributes.items():
        fields[f"attributes.{handle}"] = value
    areas = {area: tuple(block_form(block) for block in blocks) for area, blocks in spec.areas.items()}
    end_date = normalize_date(spec.publish_end_date) if spec.publish_end_date is not None else None
    return PageForm.model_construct(fields=fields, areas=areas, end_date=end_date, protect=spec.protect)


def block_form(block: Block) -> BlockForm:
    """A content block's write form (booleans as flags, what the type drops left out), references unresolved."""
    if isinstance(block, KeepBlock):
        return BlockForm.model_construct(type=block.type, value={}, columns=(), keep_id=block.block_id)
    if isinstance(block, ModelledBlock):
        declared = block_type(block.type)
        assert declared is not None
        value = {item.name: _written(getattr(block.value, item.name)) for item in declared.fields}
        columns = tuple(item.name for item in declared.fields if item.kind in COLUMN_KINDS)
        return BlockForm.model_construct(type=block.type, value=value, columns=columns, keep_id=None)
    assert isinstance(block, RawBlock)
    declared = _declared(block.type)
    dropped = declared.dropped_when_zero
    raw = {
        k: _written(v)
        for k, v in block.value.items()
        if not (k in dropped and str(v) in ("0", "False")) and k not in declared.derived
    }
    return BlockForm.model_construct(type=block.type, value=raw, columns=tuple(raw), keep_id=None)


def _declared(handle: str) -> BlockType:
    return block_type(handle) or BlockType(handle)


def _written(value: Any) -> Any:
    """Booleans are sent as ``"1"``/``"0"``: block controllers store what they are given, and PHP turns a JSON
    ``false`` into ``""``, which would never compare equal to the content's ``false`` again; None is ``""``."""
    if value is None:
        return ""
    if isinstance(value, bool):
        return "1" if value else "0"
    return value


def _for_blocks(resolve: Render) -> Render:
    for_blocks = getattr(resolve, "for_blocks", None)
    return for_blocks() if for_blocks is not None else resolve


def write_value(block: BlockForm, resolve: Render) -> dict[str, Any]:
    """The ``value`` a block is created or updated with, references rendered through ``resolve`` (for blocks);
    page-type columns as their export (compare) or id (write), and in write form the keys the type's controller
    reads instead of its columns (:attr:`~cmssync.content.blocktypes.BlockType.write`)."""
    resolve = _for_blocks(resolve)
    value = {key: render(item, resolve, column=key in block.columns) for key, item in block.value.items()}
    declared = _declared(block.type)
    page_type = getattr(resolve, "page_type", None)
    for key in declared.columns_of("page_type") & value.keys():
        handle = str(value[key]).strip()
        value[key] = page_type(handle) if page_type is not None else page_type_export(handle) if handle else ""
    stack = getattr(resolve, "stack", None)
    for key in declared.columns_of("stack") & value.keys():
        handle = str(value[key]).strip()
        value[key] = stack(handle) if stack is not None else page_export(STACKS_PREFIX + handle)
    if declared.write is not None and getattr(resolve, "mode", "compare") == "write":
        page_ids: Mapping[str, int] = getattr(resolve, "page_ids", {})
        value = declared.write(value, page_ids.get)
    return value


def write_fields(form: PageForm, resolve: Render) -> dict[str, Any]:
    """The managed scalar fields of a page (not its areas), by field name, rendered; only what the content sets."""
    fields: dict[str, Any] = {}
    for name, value in form.fields.items():
        rendered = render(value, resolve)
        fields[name] = normalize_text(rendered) if name == "description" else rendered
    return fields


@dataclass(frozen=True)
class DesiredPage:
    fields: dict[str, Any]
    areas: dict[str, list[DesiredBlock]]
    end_date: str | None
    depends_on: frozenset[str]

    @property
    def digest(self) -> str:
        return page_digest(self.fields, self.areas, self.end_date)


def page_digest(fields: Mapping[str, Any], areas: Mapping[str, list[DesiredBlock]], end_date: str | None) -> str:
    """The digest of a page's managed state, recorded after an apply and compared to notice drift."""
    return digest(
        {
            "fields": dict(fields),
            "areas": {
                name: [[b.type, dict(b.value) if b.keep_id is None else {"keep": b.keep_id}] for b in blocks]
                for name, blocks in areas.items()
            },
            "publish_end_date": end_date,
        }
    )


def render_desired(form: PageForm, path: str, resolve: Any, *, base_url: str) -> DesiredPage:
    """A page as the site should hold it, references resolved as far as ``resolve`` (a
    :class:`~cmssync.plan.desired.Resolver`) knows them; what it could not resolve is in ``depends_on``."""
    fields = {} if is_stack_path(path) else write_fields(form, resolve)  # a stack: only its blocks are managed
    areas = {area: desired_blocks(blocks, resolve, base_url=base_url) for area, blocks in form.areas.items()}
    return DesiredPage(fields, areas, form.end_date, frozenset(resolve.pending - {page_object_id(path)}))


def desired_blocks(blocks: tuple[BlockForm, ...], resolve: Render, *, base_url: str) -> list[DesiredBlock]:
    resolve = _for_blocks(resolve)  # once per area, not once per block
    return [
        DesiredBlock(block.type, {}, keep_id=block.keep_id, index=index, form=block)
        if block.keep_id is not None
        else DesiredBlock(block.type, compared_value(block, resolve, base_url=base_url), index=index, form=block)
        for index, block in enumerate(blocks)
    ]


def compared_value(block: BlockForm, resolve: Render, *, base_url: str) -> dict[str, str]:
    """A block's value as the planner compares it with a block read from the site (normalised as a read is)."""
    return normalize_block_value(block.type, write_value(block, resolve), base_url=base_url)


def holds_written(block: BlockForm, read: LiveBlock, resolve: Render, *, base_url: str) -> bool:
    """Whether a block read back from the site (normalised as every read is) holds what ``block`` writes: same
    type, and every field it states with the same value, compared as the planner compares."""
    return read.type == block.type and values_match(read.value, compared_value(block, resolve, base_url=base_url))
