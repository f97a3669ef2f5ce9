"""The content's objects in the form the site stores them, so the planner compares like with like.

Pure. Every function takes content specs plus a resolver for references and returns normalised values: block
values as the server's strings (``cmssync.plan.normalize``), page and user fields as plain strings, attributes as
comparable values. References to objects that do not exist yet (a file to be uploaded by this very plan) resolve
to their written form (``${file:logo.png}``) and are recorded on the resolver, so the planner knows the value will
change and which action it depends on.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, field, replace
from typing import Any, Literal

from cmssync.content.blocktypes import BlockType, block_type
from cmssync.content.blocktypes.descriptor import COLUMN_KINDS
from cmssync.content.models import Block, KeepBlock, ModelledBlock, PageSpec, RawBlock
from cmssync.content.text import FileIdRef, FileLinkRef, FileUrlRef, PageIdRef, PageLinkRef, Reference, Text
from cmssync.plan.blocks import DesiredBlock
from cmssync.plan.normalize import normalize_attribute, normalize_block_value, normalize_date, normalize_text
from cmssync.plan.references import (
    FILE_LINK,
    export_name,
    file_export,
    file_link,
    page_export,
    page_link,
    page_type_export,
)


@dataclass
class Resolver:
    """Resolves references to what is known now; remembers the actions an unresolved one waits for.

    Two modes (see ``cmssync.plan.references``):

    * ``compare`` (planning, digests): references in **block values** render in the form the API reads back —
      ``${page-link:/p}`` and a whole-value ``${page-id:/p}`` as ``{ccm:export:page:/p}``, ``${file-id:F}`` as
      ``{ccm:export:file:<prefix>:<name>}`` (from the file's URL), ``${file-link:F}`` as the presence-only token
      ``{ccm:file-link}`` — so no numeric file id is needed to plan. Outside blocks (page attributes)
      ``${file-id}`` is the file's UUID and ``${page-id}`` the id.
    * ``write`` (apply): the stored form — ``{CCM:CID_<id>}``, ``{CCM:FID_DL_<lower-case UUID>}``, numeric file
      ids in blocks (``file_numbers``, learned from the site) and page ids.

    ``strict`` resolvers (used at apply time, when every target must exist) raise ``LookupError`` instead.
    """

    file_urls: Mapping[str, str]
    file_ids: Mapping[str, str]
    page_ids: Mapping[str, int]
    strict: bool = False
    pending: set[str] = field(default_factory=set)
    mode: Literal["compare", "write"] = "compare"
    file_numbers: Mapping[str, int] = field(default_factory=dict)
    in_blocks: bool = False
    page_type_numbers: Mapping[str, int] = field(default_factory=dict)
    """Page type handle → id, learned from the site at apply (``cmssync.sync.page_type_numbers``)."""

    def for_blocks(self) -> Resolver:
        """The same resolver for block values (shares ``pending``)."""
        return self if self.in_blocks else replace(self, in_blocks=True)

    def __call__(self, ref: Reference) -> str:
        return self._resolve(ref, column=False)

    def column(self, ref: Reference) -> str:
        """A reference that is a block value's whole field (a file or page column)."""
        return self._resolve(ref, column=True)

    def _resolve(self, ref: Reference, *, column: bool) -> str:
        found: str | None
        if isinstance(ref, PageIdRef | PageLinkRef):
            action = f"page:{ref.path}"
            page_id = self.page_ids.get(ref.path)
            found = None if page_id is None else self._page(ref, page_id, column=column)
        else:
            action = f"file:{ref.path}"
            found = self._file(ref)
        if found is None:
            if self.strict:
                raise LookupError(f"{ref.source} cannot be resolved: {action} does not exist on the site")
            self.pending.add(action)
            return ref.source
        return found

    def page_type(self, handle: str) -> str:
        """A page-type column: its export form to compare, its id to write (``""`` / 0 for none)."""
        if not handle:
            return "0" if self.mode == "write" else ""
        if self.mode != "write":
            return page_type_export(handle)
        number = self.page_type_numbers.get(handle)
        if number is None:
            if self.strict:
                raise LookupError(f"page type {handle!r} cannot be resolved: no page type has this handle")
            return handle
        return str(number)

    def _page(self, ref: PageIdRef | PageLinkRef, page_id: int, *, column: bool) -> str:
        if self.mode == "write":
            return page_link(page_id) if isinstance(ref, PageLinkRef) else str(page_id)
        if isinstance(ref, PageLinkRef) or (self.in_blocks and column):
            return page_export(ref.path)
        return str(page_id)

    def _file(self, ref: Reference) -> str | None:
        if isinstance(ref, FileUrlRef):
            return self.file_urls.get(ref.path)
        if isinstance(ref, FileIdRef) and not self.in_blocks:
            return self.file_ids.get(ref.path)
        if isinstance(ref, FileLinkRef):
            uuid = self.file_ids.get(ref.path)
            if uuid is None:
                return None
            return file_link(uuid.lower()) if self.mode == "write" else FILE_LINK
        if self.mode == "write":
            number = self.file_numbers.get(ref.path)
            return None if number is None else str(number)
        url = self.file_urls.get(ref.path)
        name = export_name(url) if url else None
        return file_export(name) if name else None


Render = Callable[[Reference], str]


def render(value: Any, resolve: Render, *, column: bool = False) -> Any:
    """Texts rendered through ``resolve``; lists and mappings recursively; other scalars unchanged.

    With ``column``, a text that is one reference and nothing else is a whole block field (see
    :meth:`Resolver.column`).
    """
    if isinstance(value, Text):
        as_column = getattr(resolve, "column", None)
        if column and as_column is not None and len(value.parts) == 1 and not isinstance(value.parts[0], str):
            return str(as_column(value.parts[0]))
        return value.render(resolve)
    if isinstance(value, list | tuple):
        return [render(item, resolve) for item in value]
    if isinstance(value, Mapping):
        return {str(k): render(v, resolve) for k, v in value.items()}
    return value


def block_fields(block: Block, resolve: Render) -> dict[str, Any]:
    """The ``value`` a block is created or updated with, references rendered (for blocks: see :class:`Resolver`).

    Booleans are sent as ``"1"``/``"0"``: block controllers store what they are given, and PHP turns a JSON
    ``false`` into ``""``, which would never compare equal to the content's ``false`` again. A placeholder
    (``keep``) has no value: it is never written.
    """
    for_blocks = getattr(resolve, "for_blocks", None)
    if for_blocks is not None:
        resolve = for_blocks()
    if isinstance(block, KeepBlock):
        return {}
    if isinstance(block, ModelledBlock):
        declared = block_type(block.type)
        assert declared is not None
        return {item.name: _write_form(getattr(block.value, item.name), item.kind, resolve) for item in declared.fields}
    assert isinstance(block, RawBlock)
    declared = _declared(block.type)
    dropped = declared.dropped_when_zero
    value = {
        key: _flag(item) if isinstance(item, bool) else render(item, resolve, column=True)
        for key, item in block.value.items()
        if not (key in dropped and str(item) in ("0", "False")) and key not in declared.derived
    }
    page_type = getattr(resolve, "page_type", None)
    for key in declared.columns_of("page_type") & value.keys():
        handle = str(value[key]).strip()
        value[key] = page_type(handle) if page_type is not None else page_type_export(handle) if handle else ""
    if declared.write is not None and getattr(resolve, "mode", "compare") == "write":
        page_ids: Mapping[str, int] = getattr(resolve, "page_ids", {})
        value = declared.write(value, page_ids.get)
    return value


def _declared(handle: str) -> BlockType:
    return block_type(handle) or BlockType(handle)


def _write_form(value: Any, kind: str, resolve: Render) -> Any:
    """One modelled field as it is sent: ``None`` as ``""``, booleans as flags, texts rendered (whole-value file
    and page columns as columns, see :meth:`Resolver.column`)."""
    if value is None:
        return ""
    if isinstance(value, bool):
        return _flag(value)
    return render(value, resolve, column=kind in COLUMN_KINDS)


def _flag(value: bool) -> str:
    return "1" if value else "0"


# Types of the page attributes a Concrete install creates (concrete-api.md §7), for pages that do not have the
# attribute set yet and so do not say its type.
DEFAULT_ATTRIBUTE_TYPES = {
    "meta_title": "text",
    "meta_description": "textarea",
    "meta_keywords": "textarea",
    "header_extra_content": "textarea",
    "exclude_nav": "boolean",
    "exclude_page_list": "boolean",
    "exclude_search_index": "boolean",
    "exclude_sitemapxml": "boolean",
    "exclude_subpages_from_nav": "boolean",
    "is_featured": "boolean",
    "tags": "select",
    "thumbnail": "image_file",
    "desktop_priority": "number",
}


def desired_blocks(spec: PageSpec, area: str, resolve: Render, *, base_url: str) -> list[DesiredBlock]:
    for_blocks = getattr(resolve, "for_blocks", None)
    if for_blocks is not None:
        resolve = for_blocks()  # once per area, not once per block
    return [
        DesiredBlock(block.type, {}, keep_id=block.block_id)
        if isinstance(block, KeepBlock)
        else DesiredBlock(
            block.type, normalize_block_value(block.type, block_fields(block, resolve), base_url=base_url)
        )
        for block in spec.areas.get(area, [])
    ]


def page_fields(spec: PageSpec, resolve: Render) -> dict[str, Any]:
    """The managed scalar fields of a page (not its areas), by field name; only what the content sets."""
    fields: dict[str, Any] = {"name": spec.name}
    if spec.description is not None:
        fields["description"] = normalize_text(spec.description.render(resolve))
    if spec.type is not None:
        fields["type"] = spec.type
    if spec.template is not None:
        fields["template"] = spec.template
    for handle, value in spec.attributes.items():
        fields[f"attributes.{handle}"] = render(value, resolve)
    return fields


def attribute_matches(desired: Any, live: Any, attribute_type: str | None) -> bool:
    """Whether a desired attribute value equals the live one once both are normalised the same way."""
    wanted = normalize_attribute(desired, attribute_type=attribute_type)
    return bool(wanted == normalize_attribute(live, attribute_type=attribute_type))


def publish_end_date(spec: PageSpec) -> str | None:
    return normalize_date(spec.publish_end_date) if spec.publish_end_date is not None else None


def references_in(spec: PageSpec) -> Iterator[Reference]:
    """Every reference a page's managed fields and blocks hold."""
    texts: list[Any] = [spec.description, *spec.attributes.values()]
    for blocks in spec.areas.values():
        for block in blocks:
            texts.extend(_texts_of(block))
    for value in texts:
        for text in value if isinstance(value, list) else [value]:
            if isinstance(text, Text):
                yield from text.references


def block_references(block: Block) -> Iterator[Reference]:
    """Every reference a block's value holds."""
    for value in _texts_of(block):
        if isinstance(value, Text):
            yield from value.references


def _texts_of(block: Block) -> list[Any]:
    if isinstance(block, ModelledBlock):
        return list(block.value.__dict__.values())
    if isinstance(block, RawBlock):
        return list(block.value.values())
    return []


def page_dependencies(spec: PageSpec) -> set[str]:
    """Action ids of the files and pages a page's references point at."""
    found = set()
    for ref in references_in(spec):
        found.add(f"page:{ref.path}" if isinstance(ref, PageIdRef | PageLinkRef) else f"file:{ref.path}")
    return found
