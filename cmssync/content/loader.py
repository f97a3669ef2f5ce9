"""``load_content``: read, validate and cross-check a content directory into a :class:`SiteContent`.

Every problem in every file is collected first and raised as one ``ContentError``, sorted by file and position,
so a user fixes them all in one go. The order of work: classify the files (:mod:`~cmssync.content.layout`), read
settings, read each file on its own (:mod:`~cmssync.content.specfile`: parse, validate, find references — or take
what the same text gave before from the :class:`~cmssync.content.yamlsource.ParseCache`), then check what spans
files (:mod:`~cmssync.content.checks`: duplicates, parent pages, references, folder names). Cross-file checks that
depend on settings are skipped when the settings themselves are invalid, so one mistake does not show up as ten.

A file's tree is built only when something needs it: always for a file the cache does not know, and for a cached
file only when a cross-file problem must be placed in it (:class:`~cmssync.content.yamlsource.Source`).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

from cmssync.config import Settings, folder_path, load_settings
from cmssync.content import checks
from cmssync.content.files import FileSpec, HashCache
from cmssync.content.layout import Entry, Layout, scan
from cmssync.content.lists import list_kinds
from cmssync.content.models import FileSidecar, LocatedSpec, Location, PageSpec, StackSpec
from cmssync.content.paths import is_stack_path
from cmssync.content.site import SiteContent
from cmssync.content.specfile import FileResult, Kind, SpecAt, read_file
from cmssync.content.values import MARKER
from cmssync.content.yamlsource import MAX_YAML_BYTES, ParseCache, Source, read_text
from cmssync.errors import ContentError, Problem
from cmssync.yamlread import value_position

MAX_CONTENT_VALUES = 500_000
"""Values (keys, scalars, lists, mappings) in all YAML files together: each costs a few hundred bytes once loaded
and checked, so this keeps a load near 300 MB at most; a 1,000-page site of five blocks a page holds about 55,000."""
MAX_CONTENT_YAML_BYTES = 32 * 1024 * 1024
"""All YAML files of a content directory together (each also at most 5 MiB): with the reader's limits on values per
file, this keeps a load within the memory the shipped Kubernetes manifest allows (512 MiB); a site of 5,000 pages
of a few KiB each takes about half of it."""


def load_content(
    root: Path,
    *,
    hash_cache: Path | None = None,
    overrides: Mapping[str, Any] | None = None,
    parse_cache: ParseCache | None = None,
    caches: DerivedCaches | None = None,
) -> SiteContent:
    """Load the content directory ``root``; ``ContentError`` with every problem when it is not valid.

    ``hash_cache``: where to keep file hashes between runs (never inside the content by default).
    ``overrides``: settings chosen on the command line (``--sandbox``), which win over ``cmssync.yaml``.
    ``parse_cache``: parsed YAML kept between loads by a long-lived caller (the daemon).
    ``caches``: chooses the hash and parse caches from the settings, once they are read (where a cache may live
    depends on where the state is); invalid settings give None.
    """
    loader = _Loader(root, hash_cache, overrides, parse_cache, caches)
    return loader.load()


def load_page(root: Path, path: str, target: Path, values: Mapping[str, str] | None = None) -> PageSpec:
    """The spec of page (or stack) ``path`` from its file ``target`` as :func:`load_content` reads it, without the
    rest of the content (``cmssync pull`` records the pages it wrote one at a time); ``ContentError`` when the file
    is not a valid page (checks across files are :func:`load_content`'s)."""
    name = target.relative_to(root).as_posix()
    text = read_text(target, name)
    if isinstance(text, Problem):
        raise ContentError([text])
    source = Source(name, text)
    result = read_file("stack" if is_stack_path(path) else "page", source, values or {})
    if result.problems or not result.specs:
        raise ContentError(result.problems or [Problem(source.name, 0, 0, "not a page file")])
    spec = result.specs[0].spec
    assert isinstance(spec, PageSpec | StackSpec)
    return spec.as_page() if isinstance(spec, StackSpec) else spec


DerivedCaches = Callable[[Settings | None], tuple[Path | None, ParseCache | None]]
"""The settings (None when invalid) → where to keep file hashes, the parse cache (:func:`load_content`)."""


class _Loader:
    def __init__(
        self,
        root: Path,
        hash_cache: Path | None,
        overrides: Mapping[str, Any] | None = None,
        parse_cache: ParseCache | None = None,
        caches: DerivedCaches | None = None,
    ) -> None:
        self.overrides = overrides
        self.parse_cache = parse_cache
        self.caches = caches
        self.root = root.resolve()
        self.cache = HashCache(hash_cache)
        self.problems: list[Problem] = []
        self.sources: dict[str, Source] = {}
        """Every YAML file read, by name."""
        self.values = 0
        self.settings_values: Mapping[str, str] = {}
        """The settings' ``values`` (``${value:NAME}``, :mod:`cmssync.content.values`)."""
        """Values of the YAML files read so far (bounded by :data:`MAX_CONTENT_VALUES`)."""
        self.found: list[tuple[Source, SpecAt]] = []
        """Every valid spec with its file (for the reference checks)."""

    def load(self) -> SiteContent:
        if not self.root.is_dir():
            raise ContentError([Problem(str(self.root), 0, 0, "content directory not found")])
        layout = scan(self.root)
        self.problems.extend(layout.problems)
        _refuse_oversized(layout)
        settings = self._settings(layout)
        self.settings_values = settings.values if settings is not None else {}
        if self.caches is not None:
            hashes, parsed = self.caches(settings)
            self.cache = HashCache(hashes)
            self.parse_cache = self.parse_cache or parsed
        pages = self._pages(layout)
        lists = self._lists(layout)
        sidecars = self._sidecars(layout)
        files = self._files(layout, sidecars, settings)
        page_sources = {path: self.sources[e.name] for path, e in layout.pages.items() if e.name in self.sources}
        self.problems.extend(checks.pinned_ids(pages, page_sources))
        self.problems.extend(checks.creatable_handles(pages, {p: e.name for p, e in layout.pages.items()}))
        if settings is not None:
            page_files = {path: entry.name for path, entry in layout.pages.items() if not is_stack_path(path)}
            self.problems.extend(checks.parents(page_files, settings.existing_pages))
        # Every page file counts as a target, valid or not, so one broken page does not break references to it;
        # without valid settings existing_pages is unknown, and references to other pages are not judged.
        known_pages = {*layout.pages, *settings.existing_pages, "/"} if settings is not None else None
        self.problems.extend(checks.references(self.found, set(layout.assets), known_pages))
        self.problems.extend(checks.stacks_shown(self.found, {path for path in layout.pages if is_stack_path(path)}))
        self.cache.save()
        if self.parse_cache is not None:
            self.parse_cache.save()
        if self.problems:
            raise ContentError(self.problems)
        assert settings is not None
        return SiteContent(
            root=self.root,
            settings=settings,
            pages=dict(sorted(pages.items())),
            files=files,
            lists=lists,
        )

    def _settings(self, layout: Layout) -> Settings | None:
        if layout.config is not None:
            # The settings loader reads the file itself; check it for what it does not refuse (size, aliases).
            source = self._source(layout.config)
            if source is None:
                return None
            if isinstance(source.parsed, Problem):
                self.problems.append(source.parsed)
                return None
        try:
            return load_settings(self.root, overrides=self.overrides)
        except ContentError as exc:
            self.problems.extend(exc.problems)
            return None

    def _source(self, entry: Entry) -> Source | None:
        text = read_text(entry.path, entry.name)
        if isinstance(text, Problem):
            self.problems.append(text)
            return None
        source = self.sources[entry.name] = Source(entry.name, text)
        return source

    def _read(self, entry: Entry, kind: Kind) -> list[LocatedSpec]:
        """The located specs of one file (its problems go to ``self.problems``)."""
        source = self._source(entry)
        if source is None:
            return []
        # a file with ${value:…} is read with this run's values (an environment's), never taken from the cache
        cache = self.parse_cache if MARKER not in source.text else None
        result: FileResult | None = cache.get(kind, source.text) if cache is not None else None
        if result is None:
            result = read_file(kind, source, self.settings_values)
            if not result.problems:
                source.forget_tree()
                if cache is not None:
                    cache.put(kind, source.text, result)
        self.problems.extend(result.problems)
        self.values += result.values
        if self.values > MAX_CONTENT_VALUES:  # stop here: the files not read yet would only take more memory
            message = (
                f"the content holds more than {MAX_CONTENT_VALUES:,} values (keys, scalars, lists, mappings) with "
                "this file; at most that many are read in all (memory)"
            )
            raise ContentError([*self.problems, Problem(entry.name, 0, 0, message)])
        specs: list[LocatedSpec] = []
        for found in result.specs:
            found.spec.located(Location(file=entry.name, line=found.line, column=found.column))
            self.found.append((source, found))
            specs.append(found.spec)
        return specs

    def _pages(self, layout: Layout) -> dict[str, PageSpec]:
        pages: dict[str, PageSpec] = {}
        for path, entry in layout.pages.items():
            for spec in self._read(entry, "stack" if is_stack_path(path) else "page"):
                assert isinstance(spec, PageSpec | StackSpec)
                pages[path] = spec.as_page() if isinstance(spec, StackSpec) else spec
        return pages

    def _lists(self, layout: Layout) -> dict[str, dict[str, LocatedSpec]]:
        """Each list kind's entries by key (``cmssync.content.lists``); entries that share what is unique are
        problems."""
        lists: dict[str, dict[str, LocatedSpec]] = {}
        for kind in list_kinds():
            specs = [spec for entry in layout.lists.get(kind.name, []) for spec in self._read(entry, kind.plural)]
            self.problems.extend(checks.duplicate_entries(kind, specs))
            lists[kind.name] = {kind.key(spec): spec for spec in specs}
        return lists

    def _sidecars(self, layout: Layout) -> dict[str, tuple[FileSidecar, Entry]]:
        sidecars: dict[str, tuple[FileSidecar, Entry]] = {}
        for asset, entry in layout.sidecars.items():
            if asset not in layout.assets:
                self.problems.append(Problem(entry.name, 0, 0, f"sidecar of a file that does not exist: files/{asset}"))
                continue
            for spec in self._read(entry, "sidecar"):
                assert isinstance(spec, FileSidecar)
                sidecars[asset] = (spec, entry)
        return sidecars

    def _files(
        self, layout: Layout, sidecars: dict[str, tuple[FileSidecar, Entry]], settings: Settings | None
    ) -> dict[str, FileSpec]:
        files: dict[str, FileSpec] = {}
        for path, entry in sorted(layout.assets.items()):
            meta, sidecar = sidecars.get(path, (FileSidecar(), None))
            folder_id = self._folder_id(meta, sidecar, settings)
            try:
                size, sha256 = self.cache.sha256(entry.path)
            except OSError as exc:
                self.problems.append(Problem(entry.name, 0, 0, f"cannot read: {exc.strerror or exc}"))
                continue
            files[path] = FileSpec(
                path=path,
                size=size,
                sha256=sha256,
                meta=meta,
                folder_id=folder_id,
                source=Location(file=entry.name),
                sidecar=meta.source if sidecar is not None else None,
            )
        return files

    def _folder_id(self, meta: FileSidecar, sidecar: Entry | None, settings: Settings | None) -> int | None:
        # A folder is named by its path (``/Images``); ``folders:`` in cmssync.yaml gives its id on this site.
        # A bare id still works but is one site's number (content-example's 10 and 11 are the sandbox's).
        if meta.folder is None or isinstance(meta.folder, int):
            return meta.folder
        if settings is None or sidecar is None:
            return None
        try:
            path = folder_path(meta.folder)
        except ValueError as exc:
            self.problems.append(Problem(sidecar.name, *self._folder_position(sidecar), f"folder: {exc}"))
            return None
        if path in settings.folders:
            return settings.folders[path]
        if path == "/":
            return None  # the file manager's root: uploads go there; an existing file is not moved back
        known = ", ".join(sorted(settings.folders)) or "none defined"
        self.problems.append(
            Problem(
                sidecar.name,
                *self._folder_position(sidecar),
                f"folder: unknown folder {path!r}: give its id on this site in folders: of cmssync.yaml "
                f"(folders defined there: {known})",
            )
        )
        return None

    def _folder_position(self, sidecar: Entry) -> tuple[int, int]:
        return value_position(self.sources[sidecar.name].tree, "folder") or (1, 1)


def _refuse_oversized(layout: Layout) -> None:
    """Refuse, before parsing anything, a content whose YAML files are more than :data:`MAX_CONTENT_YAML_BYTES`."""
    entries = [
        *([layout.config] if layout.config is not None else []),
        *layout.pages.values(),
        *(entry for entries in layout.lists.values() for entry in entries),
        *layout.sidecars.values(),
    ]
    total = 0
    for entry in entries:
        try:
            size = entry.path.stat().st_size
        except OSError:
            continue  # reported when the file is read
        if size <= MAX_YAML_BYTES:  # a larger file is refused on its own, unread
            total += size
    if total > MAX_CONTENT_YAML_BYTES:
        raise ContentError(
            [
                Problem(
                    ".",
                    0,
                    0,
                    f"the content's YAML files hold {total:,} bytes; at most {MAX_CONTENT_YAML_BYTES // 2**20} MiB "
                    "in all are read (memory)",
                )
            ]
        )
