"""Rendering content references: :class:`Resolver` (compare or write form) and :func:`render`.

Pure. References to objects that do not exist yet (a file to be uploaded by this very plan) resolve to their written
form (``${file:logo.png}``) and are recorded on the resolver, so the planner knows the value will change and which
action it depends on. A page's desired form is built and rendered in :mod:`cmssync.plan.page_form`.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field, replace
from typing import Any, Literal

from cmssync.content.paths import STACKS_PREFIX, page_named, page_object_id
from cmssync.content.text import FileIdRef, FileLinkRef, FileUrlRef, PageIdRef, PageLinkRef, Reference, Text
from cmssync.plan.normalize import normalize_attribute
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
            action = page_object_id(ref.path)
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
        missing = f"page type {handle!r} cannot be resolved: no page type has this handle"
        return self._written_id(self.page_type_numbers.get(handle), handle, missing)

    def stack(self, handle: str) -> str:
        """A stack column (a stack display's): the export form of the stack's page to compare (what
        ``cmssync.plan.stack_displays`` names from the rendering), its page id to write."""
        path = STACKS_PREFIX + handle
        if self.mode != "write":
            return page_export(path)
        missing = f"stack {handle} cannot be resolved: {page_named(path)} does not exist on the site"
        return self._written_id(self.page_ids.get(path), handle, missing, waits_for=page_object_id(path))

    def _written_id(self, number: int | None, written: str, missing: str, *, waits_for: str | None = None) -> str:
        """An id looked up for the stored form; when unknown, ``missing`` raised (strict), else ``written`` kept
        (recorded as waiting for the action ``waits_for``)."""
        if number is not None:
            return str(number)
        if self.strict:
            raise LookupError(missing)
        if waits_for is not None:
            self.pending.add(waits_for)
        return written

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


def attribute_matches(desired: Any, live: Any, attribute_type: str | None) -> bool:
    """Whether a desired attribute value equals the live one once both are normalised the same way."""
    wanted = normalize_attribute(desired, attribute_type=attribute_type)
    return bool(wanted == normalize_attribute(live, attribute_type=attribute_type))
