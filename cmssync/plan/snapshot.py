"""What cmssync saw on the live site: plain, normalised data for the pure planner.

``observe`` builds a :class:`Snapshot` from API responses; the planner reads only this, so it never depends on the
HTTP client and its tests build snapshots by hand. Values are already normalised (``cmssync.plan.normalize``): block
values as the server's strings with site links as ``{CCM:BASE_URL}``, tags as lists, attribute values comparable
with the content's.

A page read on its own is described in its *recent* version (the one every write modifies, design.md §5): ``areas``
and the fields are those of that version. ``live_version_id`` is the approved version; when ``recent_version_id``
differs from it the page has a pending draft. A page from a batched read (a level of the page tree, ``batched``) is
described in its *live* version, and whether it has a pending draft is not known: the API's batched reads cannot
show drafts. That is enough to decide that a page needs no change; ``cmssync.sync.planning.plan_site`` reads every
batched page it is about to write on its own and plans again, so no write is ever planned against a batched view.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Set
from dataclasses import dataclass, field
from typing import Any

from cmssync.content.trees import Trees
from cmssync.plan.blocks import LiveBlock
from cmssync.plan.desired import DEFAULT_ATTRIBUTE_TYPES


@dataclass(frozen=True, slots=True)
class LivePage:
    id: int
    path: str
    name: str
    description: str
    """Normalised at the read (``cmssync.plan.normalize.normalize_text``), like every value of the page."""
    type: str | None
    template: str | None
    attributes: Mapping[str, Any] = field(default_factory=dict, hash=False)
    """Values of every attribute the page has, as the API gives them (the planner compares managed handles only)."""
    attribute_types: Mapping[str, str] = field(default_factory=dict, hash=False)
    """Attribute handle → attribute type handle (``boolean``, ``select``, ``text`` …)."""
    areas: Mapping[str, tuple[LiveBlock, ...]] = field(default_factory=dict, hash=False)
    """Blocks of the recent version by area name; an area without blocks is absent."""
    live_version_id: int | None = None
    recent_version_id: int | None = None
    publish_end_date: str | None = None
    """Of the recent version, normalised (``YYYY-MM-DD HH:MM:SS``)."""
    recent_version_created: str | None = None
    """When the recent version was created (``YYYY-MM-DD HH:MM:SS``): named in the plan for someone else's draft."""
    batched: bool = False
    """Read in a batch (its parent's children list): the live version; a pending draft, if any, is not visible
    (``recent_version_id`` is then the live one). See the module docstring."""

    @property
    def has_draft(self) -> bool:
        return self.recent_version_id is not None and self.recent_version_id != self.live_version_id

    def blocks(self, area: str) -> tuple[LiveBlock, ...]:
        return tuple(self.areas.get(area, ()))

    def field(self, name: str) -> Any:
        """The site's value of a page field as the content names it (``name``, ``description``, ``type``,
        ``template``, ``publish_end_date``, ``attributes.HANDLE``); None when the page has none."""
        if name.startswith("attributes."):
            return self.attributes.get(name.removeprefix("attributes."))
        return {
            "name": self.name,
            "description": self.description,
            "type": self.type,
            "template": self.template,
            "publish_end_date": self.publish_end_date,
        }.get(name)

    def attribute_type(self, handle: str) -> str | None:
        """The attribute's type as the site reports it, else the type of a core attribute of that handle (an
        attribute without a value is left out of a read, type and all)."""
        return self.attribute_types.get(handle) or DEFAULT_ATTRIBUTE_TYPES.get(handle)


@dataclass(frozen=True, slots=True)
class LiveFile:
    id: str
    """The file's UUID (lower case)."""
    name: str
    """The stored file name (the last segment of its URL)."""
    url: str
    title: str
    description: str
    tags: tuple[str, ...]
    folder: int | None
    size: int | None
    attributes: Mapping[str, Any] = field(default_factory=dict, hash=False)
    sha256: str | None = None
    """``sha256:<hex>`` of the bytes the site serves, known only for adoption candidates (observe downloads those,
    see :meth:`Snapshot.adoption_candidates`); ``None``: not downloaded."""


@dataclass(frozen=True, slots=True)
class LiveUser:
    id: int
    username: str
    email: str
    language: str | None


@dataclass(frozen=True, slots=True)
class LiveGroup:
    id: int
    name: str


@dataclass(frozen=True)
class Snapshot:
    """The part of the live site that the content and the state describe."""

    site_url: str
    home_page_id: int
    pages: Mapping[str, LivePage] = field(default_factory=dict)
    """Live pages by path, for every path looked up that exists (managed, desired, or parents)."""
    pages_by_id: Mapping[int, LivePage] = field(default_factory=dict)
    files: Mapping[str, LiveFile] = field(default_factory=dict)
    """Live files by UUID."""
    users: Mapping[str, LiveUser] = field(default_factory=dict)
    """Live users by username."""
    groups: Mapping[str, LiveGroup] = field(default_factory=dict)
    """Live groups by name (Guest and Registered Users are never listed by the API)."""
    complete: bool = True
    """False for an incremental observation that read only some objects: the planner then plans no deletes."""
    warnings: tuple[str, ...] = ()
    """What the observation could not be sure of (e.g. a list the API cannot return completely)."""
    unreadable: Mapping[str, str] = field(default_factory=dict)
    """``kind:key`` → the server's reason, for objects that exist (a listing shows them, or the server did not say
    "not found") but could not be read: planned for nothing, never created again (``cmssync.plan.unreadable``)."""

    kinds: Mapping[str, Any] = field(default_factory=dict)
    """What each kind added in ``cmssync.sync.kinds`` observed, by kind (only the kinds read: a scoped run reads
    those it names)."""
    tie_reads: Mapping[str, int] = field(default_factory=dict)
    """Files and users (by kind) read one request each because the list walks could not return them: their dates
    tie in a group longer than a page of the list (a bulk import; concrete-api.md §13)."""
    trees: Trees = field(default_factory=Trees)
    """The site's locale trees (``cmssync.content.trees``): each page's tree, the homes never created or deleted."""

    def batched_pages(self, paths: Iterable[str]) -> list[str]:
        """Those of ``paths`` whose page was read in a batch (drafts unknown), sorted."""
        return sorted({p for p in paths if (page := self.pages.get(p)) is not None and page.batched})

    def adoption_candidates(self, name: str, folder: int | None, size: int, managed: Set[str]) -> list[LiveFile]:
        """See :func:`adoption_candidates`."""
        return adoption_candidates(self.files.values(), name, folder, size, managed)

    def file_to_adopt(
        self, name: str, folder: int | None, size: int, sha256: str, managed: Set[str]
    ) -> tuple[LiveFile | None, list[LiveFile]]:
        """The unmanaged live file that provably holds the content's bytes, and every one that does.

        Used when the state does not know a file (it was lost, or a run died between upload and state save), so an
        upload that already happened is adopted instead of repeated. A file qualifies only if its stored name,
        folder and size match *and* the SHA-256 of the bytes the site serves equals ``sha256``: an editor's
        unrelated ``x.txt`` of the same size is never taken for ours. When several qualify (a killed run uploaded
        the same bytes twice), the one with the smallest id is chosen, so the choice is stable; the caller adds it
        to ``managed`` at once, so no two content paths adopt one remote file.
        """
        same = [f for f in self.adoption_candidates(name, folder, size, managed) if f.sha256 == sha256]
        return (same[0] if same else None), same


def adoption_candidates(
    files: Iterable[LiveFile], name: str, folder: int | None, size: int, managed: Set[str]
) -> list[LiveFile]:
    """Unmanaged live files with this stored name, folder and size, by id: the only site files whose bytes could be
    a content file's. Observe downloads and hashes exactly these (few: name *and* size must match)."""
    return sorted(
        (
            f
            for f in files
            if f.name == name and f.size == size and f.id not in managed and (folder is None or f.folder == folder)
        ),
        key=lambda f: f.id,
    )
