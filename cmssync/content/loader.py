"""``load_content``: read, validate and cross-check a content directory into a :class:`SiteContent`.

Every problem in every file is collected first and raised as one ``ContentError``, sorted by file and position,
so a user fixes them all in one go. The order of work: classify the files (:mod:`~cmssync.content.layout`), read
settings, parse and validate each file on its own, then check what spans files (:mod:`~cmssync.content.checks`:
duplicates, parent pages, references, folder names). Cross-file checks that depend on settings are skipped when the
settings themselves are invalid, so one mistake does not show up as ten.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any, TypeVar

from ruamel.yaml.comments import CommentedMap, CommentedSeq

from cmssync.config import Settings, folder_path, load_settings
from cmssync.content import checks
from cmssync.content.files import FileSpec, HashCache
from cmssync.content.layout import Entry, Layout, scan
from cmssync.content.models import FileSidecar, GroupSpec, Location, PageSpec, Spec, UserSpec
from cmssync.content.site import SiteContent
from cmssync.content.validation import validate
from cmssync.content.yamlsource import ParseCache, YamlDocument, read_yaml, start_of, value_position
from cmssync.errors import ContentError, Problem

S = TypeVar("S", bound=Spec)


def load_content(
    root: Path,
    *,
    hash_cache: Path | None = None,
    overrides: Mapping[str, Any] | None = None,
    parse_cache: ParseCache | None = None,
) -> SiteContent:
    """Load the content directory ``root``; ``ContentError`` with every problem when it is not valid.

    ``hash_cache``: where to keep file hashes between runs (never inside the content by default).
    ``overrides``: settings chosen on the command line (``--sandbox``), which win over ``cmssync.yaml``.
    ``parse_cache``: parsed YAML kept between loads by a long-lived caller (the daemon).
    """
    loader = _Loader(root, hash_cache, overrides, parse_cache)
    return loader.load()


class _Loader:
    def __init__(
        self,
        root: Path,
        hash_cache: Path | None,
        overrides: Mapping[str, Any] | None = None,
        parse_cache: ParseCache | None = None,
    ) -> None:
        self.overrides = overrides
        self.parse_cache = parse_cache
        self.root = root.resolve()
        self.cache = HashCache(hash_cache)
        self.problems: list[Problem] = []
        self.documents: dict[str, Any] = {}
        self.lines: dict[str, list[str]] = {}
        self.nodes: list[tuple[Spec, Any]] = []
        """Every valid spec with the YAML node it was read from (for locating reference problems)."""

    def load(self) -> SiteContent:
        if not self.root.is_dir():
            raise ContentError([Problem(str(self.root), 0, 0, "content directory not found")])
        layout = scan(self.root)
        self.problems.extend(layout.problems)
        settings = self._settings(layout)
        pages = self._pages(layout)
        users = self._list_specs(layout.users, UserSpec, "user")
        groups = self._list_specs(layout.groups, GroupSpec, "group")
        sidecars = self._sidecars(layout)
        files = self._files(layout, sidecars, settings)
        self.problems.extend(checks.duplicate_users(users))
        self.problems.extend(checks.duplicate_groups(groups))
        page_nodes = {path: self.documents.get(entry.name) for path, entry in layout.pages.items()}
        self.problems.extend(checks.pinned_ids(pages, page_nodes))
        self.problems.extend(checks.creatable_handles(pages, {p: e.name for p, e in layout.pages.items()}))
        if settings is not None:
            page_files = {path: entry.name for path, entry in layout.pages.items()}
            self.problems.extend(checks.parents(page_files, settings.existing_pages))
        # Every page file counts as a target, valid or not, so one broken page does not break references to it;
        # without valid settings existing_pages is unknown, and references to other pages are not judged.
        known_pages = {*layout.pages, *settings.existing_pages, "/"} if settings is not None else None
        known_files = set(layout.assets)
        for spec, node in self.nodes:
            where = spec.source.file if spec.source else ""
            self.problems.extend(checks.references(spec, node, known_files, known_pages, self.lines.get(where)))
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
            users={user.username: user for user in users},
            groups={group.name: group for group in groups},
        )

    def _settings(self, layout: Layout) -> Settings | None:
        if layout.config is not None:
            # The settings loader reads the file itself; check it for what it does not refuse (size, aliases).
            checked = self._read(layout.config)
            if checked is None:
                return None
        try:
            return load_settings(self.root, overrides=self.overrides)
        except ContentError as exc:
            self.problems.extend(exc.problems)
            return None

    def _read(self, entry: Entry) -> YamlDocument | None:
        result = read_yaml(entry.path, entry.name, cache=self.parse_cache)
        if isinstance(result, Problem):
            self.problems.append(result)
            return None
        self.lines[entry.name] = result.text.splitlines()
        return result

    def _validate(self, model: type[S], data: Any, name: str, prefix: tuple[str | int, ...] = ()) -> S | None:
        document = self.documents.get(name, data)
        result = validate(model, data, name, prefix=prefix, document=document)
        if isinstance(result, list):
            self.problems.extend(result)
            return None
        found = value_position(document, prefix[-1]) if prefix else None
        line, column = found or start_of(data)
        result.located(Location(file=name, line=line, column=column))
        self.nodes.append((result, data))
        return result

    def _mapping_document(self, entry: Entry, what: str) -> CommentedMap | None:
        document = self._read(entry)
        if document is None:
            return None
        data = CommentedMap() if document.data is None else document.data
        if not isinstance(data, CommentedMap):
            self.problems.append(Problem(entry.name, *start_of(data), f"{what} is a mapping of fields"))
            return None
        self.documents[entry.name] = data
        return data

    def _pages(self, layout: Layout) -> dict[str, PageSpec]:
        pages: dict[str, PageSpec] = {}
        for path, entry in layout.pages.items():
            data = self._mapping_document(entry, "a page file")
            if data is None:
                continue
            spec = self._validate(PageSpec, data, entry.name)
            if spec is not None:
                pages[path] = spec
        return pages

    def _list_specs(self, entries: list[Entry], model: type[S], what: str) -> list[S]:
        specs: list[S] = []
        for entry in entries:
            document = self._read(entry)
            if document is None or document.data is None:
                continue
            if not isinstance(document.data, CommentedSeq):
                self.problems.append(
                    Problem(entry.name, *start_of(document.data), f"expected a list of {what}s (- entries)")
                )
                continue
            self.documents[entry.name] = document.data
            for index, item in enumerate(document.data):
                spec = self._validate(model, item, entry.name, (index,))
                if spec is not None:
                    specs.append(spec)
        return specs

    def _sidecars(self, layout: Layout) -> dict[str, tuple[FileSidecar, Entry]]:
        sidecars: dict[str, tuple[FileSidecar, Entry]] = {}
        for asset, entry in layout.sidecars.items():
            if asset not in layout.assets:
                self.problems.append(Problem(entry.name, 0, 0, f"sidecar of a file that does not exist: files/{asset}"))
                continue
            data = self._mapping_document(entry, "a file sidecar")
            if data is None:
                continue
            spec = self._validate(FileSidecar, data, entry.name)
            if spec is not None:
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
        line, column = value_position(self.documents[sidecar.name], "folder") or (1, 1)
        try:
            path = folder_path(meta.folder)
        except ValueError as exc:
            self.problems.append(Problem(sidecar.name, line, column, f"folder: {exc}"))
            return None
        if path in settings.folders:
            return settings.folders[path]
        if path == "/":
            return None  # the file manager's root: uploads go there; an existing file is not moved back
        known = ", ".join(sorted(settings.folders)) or "none defined"
        self.problems.append(
            Problem(
                sidecar.name,
                line,
                column,
                f"folder: unknown folder {path!r}: give its id on this site in folders: of cmssync.yaml "
                f"(folders defined there: {known})",
            )
        )
        return None
