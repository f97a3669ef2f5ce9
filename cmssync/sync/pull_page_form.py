"""How ``cmssync pull`` writes one page read as content: links as references, lossy blocks as placeholders.

Block values are translated from the export form every API read shows into references
(``cmssync.plan.references``): page links become ``${page-link:/path}``, download links ``${file-link:PATH}``,
pictures ``<concrete-picture fID="${file-id:PATH}" …/>``, file and page columns ``${file-id:…}`` / ``${page-id:…}``;
absolute URLs of pulled files become ``${file:PATH}``; booleans of known blocks become YAML booleans. A block whose
read is lossy (layouts, containers, galleries, multi-entry blocks, a download link read back as ``href=""``, a link
to a file that was not pulled) or whose type is not known to round-trip is written as a placeholder
``- keep: {type: …, id: N}``, which apply never touches. Sub-areas of layouts and containers (``Main : 16``,
``Main : 10 : Title``) are pulled like any area, under the name the API gives them, while the layout or container
block itself is a placeholder; a sub-area whose layout or container is gone (never shown) is left out with a note
(:mod:`cmssync.plan.subareas`).
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

from cmssync.api.models import Area, Block, Page
from cmssync.content.blocktypes import BlockField, BlockType, block_type, block_types, keep_reason
from cmssync.content.models import PageSpec
from cmssync.content.paths import dropped_words, page_named
from cmssync.plan.desired import DEFAULT_ATTRIBUTE_TYPES
from cmssync.plan.references import (
    PAGE_TYPE_EXPORT,
    FileLookup,
    Lossy,
    Rendered,
    column_to_reference,
    export_name,
    html_to_references,
    rendered_blocks,
    rendered_in_order,
    stack_handle,
)
from cmssync.plan.subareas import unwritable
from cmssync.state.records import BlockTypeVerdict
from cmssync.sync import probed_types
from cmssync.sync.pull_assets import escape

PULLED_ATTRIBUTE_TYPES = {"text", "textarea", "boolean", "number", "url", "email", "telephone"}
PLACEHOLDER_NOTE = "kept as placeholders (never written by apply)"


def placeholder_note(placeholders: list[str]) -> str:
    return f"{PLACEHOLDER_NOTE}: {'; '.join(placeholders)}"


class FileLinks:
    """The pulled files as blocks refer to them: by export name, and by URL (absolute, or ``{CCM:BASE_URL}`` + the
    rest) to write as ``${file:PATH}``. Built once per pull: per page, it cost pages x files."""

    def __init__(self, base_url: str, file_urls: Mapping[str, str]) -> None:
        self.urls = file_urls
        self.by_export = {name: path for path, url in file_urls.items() if (name := export_name(url)) is not None}
        references: dict[str, str] = {}
        for path, url in file_urls.items():
            if url:
                references.setdefault(url, f"${{file:{path}}}")
                if url.startswith(base_url):
                    references.setdefault("{CCM:BASE_URL}" + url[len(base_url) :], f"${{file:{path}}}")
        self.references = references
        self.lengths = sorted({len(key) for key in references}, reverse=True)
        self.starts = sorted({key[:14] for key in references})

    def replace(self, text: str) -> str:
        """``text`` with every file URL in it as its reference, the longest URL where several start at one place."""
        if not self.references:
            return text
        hits = sorted(
            {at for start in self.starts for at in _occurrences(text, start)},
        )
        out: list[str] = []
        done = 0
        for at in hits:
            if at < done:
                continue
            key = next((text[at : at + n] for n in self.lengths if text[at : at + n] in self.references), None)
            if key is not None:
                out += [text[done:at], self.references[key]]
                done = at + len(key)
        return "".join(out) + text[done:] if out else text


def _occurrences(text: str, start: str) -> list[int]:
    found = []
    at = text.find(start)
    while at >= 0:
        found.append(at)
        at = text.find(start, at + 1)
    return found


def page_spec(
    page: Page,
    base_url: str,
    file_urls: Mapping[str, str] | FileLinks,
    uuids: Mapping[str, str] | None = None,
    *,
    notes: list[str] | None = None,
    placeholders: list[str] | None = None,
    verdicts: Mapping[str, BlockTypeVerdict] | None = None,
) -> PageSpec:
    """A page read (with ``areas``, and ``areas.content`` to recover download links) as content; what a user should
    know about it (blocks kept as placeholders, links visitors cannot open) is appended to ``notes``, and each
    placeholder block (``type id (reason)``) to ``placeholders``. ``verdicts``: the site's probe verdicts of the
    block types cmssync does not model (``cmssync probe-block-type``; the state's ``site.block_types``)."""
    files = file_urls if isinstance(file_urls, FileLinks) else FileLinks(base_url, file_urls)
    links = _Links(base_url, files, uuids or {}, verdicts or {})
    areas = _pulled_areas(page, links, notes)
    if notes is not None:
        notes.extend(f"{page_named(page.url_path)}: {note}" for note in links.notes())
    if placeholders is not None:
        placeholders.extend(links.kept)
    data: dict[str, Any] = {"name": page.name or ""}
    if dropped_words(page.url_path.rsplit("/", 1)[-1]):
        # Concrete would not make this URL for a new page; pinning the id says the page exists (it then loads).
        data["id"] = page.id
    if page.description:
        data["description"] = escape(page.description)
    data.update((name, value) for name in ("type", "template") if (value := getattr(page, name)))
    attributes = _pulled_attributes(page)
    if attributes:
        data["attributes"] = {k: escape(v) if isinstance(v, str) else v for k, v in attributes.items()}
    if areas:
        data["areas"] = areas
    return PageSpec.model_validate(data)


def _pulled_attributes(page: Page) -> dict[str, Any]:
    """The page's attributes of a type pull writes (:data:`PULLED_ATTRIBUTE_TYPES`) that hold a value."""
    return {
        attribute.handle: attribute.value
        for attribute in page.custom_attributes
        if attribute.handle
        and (attribute.type or DEFAULT_ATTRIBUTE_TYPES.get(attribute.handle, "")) in PULLED_ATTRIBUTE_TYPES
        and attribute.value not in (None, "", False)
    }


def _pulled_areas(page: Page, links: _Links, notes: list[str] | None) -> dict[str, list[dict[str, Any]]]:
    """The page's areas as content; an area cmssync cannot write (``cmssync.plan.subareas``) is said in ``notes``."""
    live_areas = {area.name: [block.type or "" for block in area.blocks] for area in page.areas or []}
    areas: dict[str, list[dict[str, Any]]] = {}
    for area in page.areas or []:
        reason = unwritable(area.name, live_areas, known=())
        if reason is None:
            areas[area.name] = links.area(area)
        elif notes is not None:
            notes.append(f"{page_named(page.url_path)}: not pulled: {reason}")
    return areas


def stack_data(page: Page, data: dict[str, Any]) -> dict[str, Any]:
    """A stack's file (``stacks/<handle>.yaml``, cmssync.content.models.StackSpec) from its page's content form: its
    id (how it is found: the API lists no stack), its name (for the reader) and its areas."""
    stack: dict[str, Any] = {"id": page.id, "name": page.name or ""}
    if "areas" in data:
        stack["areas"] = data["areas"]
    return stack


class _Links:
    """Translates one page's blocks into content (see the module docstring)."""

    def __init__(
        self, base_url: str, files: FileLinks, uuids: Mapping[str, str], verdicts: Mapping[str, BlockTypeVerdict]
    ) -> None:
        self.base_url = base_url
        self.verdicts = verdicts
        self.links = files
        self.files: FileLookup = files.by_export.get
        self.uuids: FileLookup = uuids.get
        self.kept: list[str] = []
        self.numeric_links = 0

    def notes(self) -> list[str]:
        found = []
        if self.kept:
            found.append(placeholder_note(self.kept))
        if self.numeric_links:
            found.append(
                f"{self.numeric_links} download link(s) stored by numeric id kept as they are; visitors get "
                "'Invalid File.' for them on Concrete 9.x: write ${file-link:PATH} instead"
            )
        return found

    def area(self, area: Area) -> list[dict[str, Any]]:
        rendered_html = area.content.raw if area.content is not None else None
        by_block: dict[int, Rendered] = {}
        for declared in block_types().values():
            if declared.rendered_wrapper is None or not rendered_html:
                continue
            blocks = [block for block in area.blocks if block.type == declared.handle]
            pieces = rendered_blocks(rendered_html, declared.rendered_wrapper, len(blocks))
            if pieces is None and blocks:  # the theme's view prints no wrapper: the area's files in block order
                rich = [item.name for item in declared.fields if item.kind == "rich_text"]
                texts = ["".join(str(block.value.get(name, "")) for name in rich) for block in blocks]
                pieces = rendered_in_order(rendered_html, texts)
            by_block.update(zip((b.id for b in blocks), pieces or [], strict=False))
        return [self.block(block, by_block.get(block.id)) for block in area.blocks]

    def block(self, block: Block, rendered: Rendered | None) -> dict[str, Any]:
        """One block as content: links as references, or a ``keep`` placeholder when the API read lost something
        (or the type is not known to round-trip), so that apply never writes it back."""
        kind = block.type or ""
        declared = block_type(kind)
        if declared is None:  # a theme's or package's type: as this site's probe found it
            reason = probed_types.keep_reason(kind, block.value, self.verdicts.get(kind))
            declared = BlockType(kind)
        else:
            reason = keep_reason(kind, block.value)
        if reason is not None:
            return self._keep(block, reason)
        try:
            value = {
                key: self.field(declared, key, str(v), rendered)
                for key, v in block.value.items()
                if key not in declared.derived
            }
        except Lossy as exc:
            return self._keep(block, str(exc))
        if not declared.has_model:
            dropped = declared.dropped_when_zero
            raw = {k: v for k, v in value.items() if not (k in dropped and v == "0")}
            return {"type": kind, "raw": True, "value": raw}
        fields = {item.name: item for item in declared.fields}
        written = {
            name: content for name, item in fields.items() if (content := _pulled(item, value.get(name))) is not None
        }
        return {"type": kind, "value": written} if written else {"type": kind}

    def field(self, declared: BlockType, name: str, text: str, rendered: Rendered | None) -> str:
        if declared.kind_of(name) == "page_type":
            handle = PAGE_TYPE_EXPORT.fullmatch(text)
            if handle is None and text:
                raise Lossy(f"{name} reads {text!r}, not a page type")
            return handle.group(1) if handle is not None else ""
        if declared.kind_of(name) == "stack":  # named from the rendering as its stack's page export
            return stack_handle(text)
        column = column_to_reference(text, self.files)
        if column is not None:
            return column
        text = self.links.replace(escape(text))
        if declared.kind_of(name) != "rich_text":
            return text
        translated = html_to_references(text, self.files, rendered, self.uuids)
        self.numeric_links += len(re.findall(r"\{CCM:FID_DL_\d+\}", translated))
        return translated

    def _keep(self, block: Block, reason: str) -> dict[str, Any]:
        self.kept.append(f"{block.type} {block.id} ({reason})")
        return {"keep": {"type": block.type or "", "id": block.id}}


def _pulled(declared: BlockField, read: str | None) -> Any:
    """One modelled field as content, from its read (references already translated): None to leave it out (an
    optional field read empty), the default when the read lacks it, booleans and integers as such."""
    if read is None:
        return None if declared.default is None else ("" if declared.required else declared.default)
    if declared.kind == "bool":
        return read == "1"
    if read == "" and not declared.required and declared.default is None:
        return None
    if declared.kind == "int" and re.fullmatch(r"-?\d+", read):
        return int(read)
    return read
