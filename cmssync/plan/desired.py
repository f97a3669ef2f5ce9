"""The content's objects in the form the site stores them, so the planner compares like with like.

Pure. Every function takes content specs plus a resolver for references and returns normalised values: block
values as the server's strings (``cmssync.plan.normalize``), page and user fields as plain strings, attributes as
comparable values. References to objects that do not exist yet (a file to be uploaded by this very plan) resolve
to their written form (``${file:logo.png}``) and are recorded on the resolver, so the planner knows the value will
change and which action it depends on.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, field
from typing import Any

from cmssync.content.models import (
    Block,
    ContentBlock,
    HorizontalRuleBlock,
    HtmlBlock,
    PageSpec,
    PageTitleBlock,
    RawBlock,
)
from cmssync.content.text import FileIdRef, FileUrlRef, PageIdRef, Reference, Text
from cmssync.plan.blocks import DesiredBlock
from cmssync.plan.normalize import normalize_attribute, normalize_block_value, normalize_date, normalize_text


@dataclass
class Resolver:
    """Resolves references to what is known now; remembers the actions an unresolved one waits for.

    ``strict`` resolvers (used at apply time, when every target must exist) raise ``LookupError`` instead.
    """

    file_urls: Mapping[str, str]
    file_ids: Mapping[str, str]
    page_ids: Mapping[str, int]
    strict: bool = False
    pending: set[str] = field(default_factory=set)

    def __call__(self, ref: Reference) -> str:
        found: str | int | None
        if isinstance(ref, FileUrlRef):
            found, action = self.file_urls.get(ref.path), f"file:{ref.path}"
        elif isinstance(ref, FileIdRef):
            found, action = self.file_ids.get(ref.path), f"file:{ref.path}"
        else:
            found, action = self.page_ids.get(ref.path), f"page:{ref.path}"
        if found is None:
            if self.strict:
                raise LookupError(f"{ref.source} cannot be resolved: {action} does not exist on the site")
            self.pending.add(action)
            return ref.source
        return str(found)


Render = Callable[[Reference], str]


def render(value: Any, resolve: Render) -> Any:
    """Texts rendered through ``resolve``; lists and mappings recursively; other scalars unchanged."""
    if isinstance(value, Text):
        return value.render(resolve)
    if isinstance(value, list | tuple):
        return [render(item, resolve) for item in value]
    if isinstance(value, Mapping):
        return {str(k): render(v, resolve) for k, v in value.items()}
    return value


def block_fields(block: Block, resolve: Render) -> dict[str, Any]:
    """The ``value`` a block is created or updated with, references rendered.

    Booleans are sent as ``"1"``/``"0"``: block controllers store what they are given, and PHP turns a JSON
    ``false`` into ``""``, which would never compare equal to the content's ``false`` again.
    """
    if isinstance(block, ContentBlock | HtmlBlock):
        return {"content": block.value.content.render(resolve)}
    if isinstance(block, PageTitleBlock):
        title = block.value.titleText.render(resolve) if block.value.titleText is not None else ""
        return {
            "useCustomTitle": _flag(block.value.useCustomTitle),
            "titleText": title,
            "formatting": block.value.formatting,
        }
    if isinstance(block, HorizontalRuleBlock):
        return {}
    assert isinstance(block, RawBlock)
    return {
        key: _flag(value) if isinstance(value, bool) else render(value, resolve) for key, value in block.value.items()
    }


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
    return [
        DesiredBlock(block.type, normalize_block_value(block.type, block_fields(block, resolve), base_url=base_url))
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


def _texts_of(block: Block) -> list[Any]:
    if isinstance(block, ContentBlock | HtmlBlock):
        return [block.value.content]
    if isinstance(block, PageTitleBlock):
        return [block.value.titleText]
    if isinstance(block, RawBlock):
        return list(block.value.values())
    return []


def page_dependencies(spec: PageSpec) -> set[str]:
    """Action ids of the files and pages a page's references point at."""
    found = set()
    for ref in references_in(spec):
        found.add(f"page:{ref.path}" if isinstance(ref, PageIdRef) else f"file:{ref.path}")
    return found
