"""``cmssync pull`` of files: read from the site and staged (``cmssync.sync.pull_writes``).

Files are downloaded into ``.cmssync/pull-staging/`` and hashed there — the downloads started at once, as many in
flight as the client's concurrency allows (:class:`_Downloads`), each file's outcome taken in the site's order — and
the asset and its sidecar are staged for the content directory. A file whose bytes cannot be downloaded (its public
URL answers 404, 403 or something that is not the file) is skipped with a note, and the rest of the site is pulled.
Folders are written by path, known only for the ids ``folders:`` in cmssync.yaml names (the API shows ids alone);
files in other folders get no ``folder:`` (an existing sidecar's ``folder:`` is kept), so their folder is left alone
rather than pinned to an id. An existing sidecar keeps its explicit ``description: ""`` and ``tags: []``. Users and
groups: ``cmssync.sync.pull_users``.
"""

from __future__ import annotations

import asyncio
import shutil
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath
from typing import Any

from pydantic import ValidationError

from cmssync.api.client import ConcreteClient
from cmssync.api.errors import NotFound, PermissionDenied, UnexpectedResponse
from cmssync.api.limiter import deferred
from cmssync.api.models import File
from cmssync.config import Settings, folder_path
from cmssync.content import writer
from cmssync.content.files import FileSpec, HashCache
from cmssync.content.models import FileSidecar, Location
from cmssync.errors import one_line
from cmssync.plan.asset_forms import desired_file_meta, file_digest
from cmssync.state.records import State
from cmssync.sync.observe_known import unreliable_list_warning
from cmssync.sync.pull_scope import PullScope
from cmssync.sync.pull_writes import Pulled, Staged, sha256_of


async def pull_files(
    client: ConcreteClient, root: Path, settings: Settings, state: State, result: Pulled, scope: PullScope
) -> None:
    assert result.staging is not None
    bound_ids = {str(record.id).lower() for record in state.files.values()}
    listed: list[File] = []
    async with _Downloads(client, _Held(root, state)) as downloads:
        async for file in client.iter_files():  # each download the walk below is sure to make starts as it is listed
            url_name = PurePosixPath((file.url or "").split("?")[0]).name
            if url_name and one_line(url_name) == url_name and (file.id.lower() in bound_ids or scope.takes("file")):
                downloads.start(file, result.staging / f"{len(listed)}-{url_name}")
            listed.append(file)
        warning = unreliable_list_warning("files", [file.date_added for file in listed])
        if warning is not None:
            result.skipped.append(warning)
        names = {file.id.lower(): PurePosixPath((file.url or "").split("?")[0]).name for file in listed}
        bound: dict[str, str] = {}
        # one path per site file: of two bound to it, the one with its name (else the first), the other is dropped
        for bound_path, record in sorted(
            state.files.items(), key=lambda item: PurePosixPath(item[0]).name != names.get(str(item[1].id).lower())
        ):
            bound.setdefault(str(record.id).lower(), bound_path)
        walk = _FileWalk(root, settings, state, result, scope, downloads, bound)
        # Bound files first, so that a free name is never one a bound file holds.
        for number, file in sorted(enumerate(listed), key=lambda item: item[1].id.lower() not in bound):
            await walk.stage(number, file)
        result.files_kept = downloads.kept
    _note_unnamed_folders(result)


class _Held:
    """The local copies of files the site still serves as the state recorded them: not downloaded again.

    The API shows no file version or modification date; a file's ``url`` holds the prefix Concrete gives each
    version's bytes (``/application/files/3717/9592/8321/blog-04.jpg``) and ``size.exact`` its length. Seen on the
    real 9.3.1 site (2026-11-29): replacing a file's bytes as the dashboard does (a new version of the same file,
    ``FileImporter`` with ``setAddNewVersionTo``) gave it a new prefix (``5917/9593/0343``), the new size and a
    new ``date_added``; the UUID stayed. A file whose
    URL is the one recorded when cmssync last wrote or pulled it and whose size is the local file's, while the local
    file still has the recorded SHA-256, is served as recorded: its local copy stands for the download. Anything
    else (another URL or size, a local edit, no record) is downloaded, so a doubt costs a download, never a stale
    file."""

    def __init__(self, root: Path, state: State) -> None:
        self.root = root
        self.by_id = {str(record.id).lower(): (path, record) for path, record in state.files.items()}
        self.hashes = HashCache(None)

    def local_copy(self, file: File) -> Path | None:
        found = self.by_id.get(file.id.lower())
        if found is None or file.size is None or file.size.exact is None or file.url is None:
            return None
        path, record = found
        local = self.root / "files" / path
        if record.url != file.url or not local.is_file() or local.stat().st_size != file.size.exact:
            return None
        return local if f"sha256:{self.hashes.sha256(local)[1]}" == record.hash else None


class _Downloads:
    """Downloads started ahead of the walk that uses them (as many in flight as the client's limiter allows); a
    download not started ahead is made when asked for; a file the site serves as recorded is copied from its local
    copy instead (:class:`_Held`, counted in ``kept``). Leaving the block waits for (or cancels) what is left."""

    def __init__(self, client: ConcreteClient, held: _Held) -> None:
        self.client = client
        self.held = held
        self.kept = 0
        self.started: dict[Path, asyncio.Future[int]] = {}

    async def __aenter__(self) -> _Downloads:
        return self

    async def __aexit__(self, *exc: object) -> None:
        for task in self.started.values():
            task.cancel()
        await asyncio.gather(*self.started.values(), return_exceptions=True)

    def start(self, file: File, staged: Path) -> None:
        if self.held.local_copy(file) is not None:
            return
        with deferred():  # behind the list walks read meanwhile (the page list: ``cmssync.sync.pull``)
            self.started[staged] = asyncio.ensure_future(self.client.download_file(file, staged))

    async def fetch(self, file: File, staged: Path) -> None:
        """``file``'s bytes in ``staged`` (a started download's failure is raised here)."""
        task = self.started.pop(staged, None)
        if task is not None:
            await task
            return
        local = self.held.local_copy(file)
        if local is None:
            await self.client.download_file(file, staged)
            return
        staged.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(local, staged)
        self.kept += 1


@dataclass
class _FileWalk:
    """What staging the site's files one by one shares: paths bound to site files and paths taken so far."""

    root: Path
    settings: Settings
    state: State
    result: Pulled
    scope: PullScope
    downloads: _Downloads
    bound: dict[str, str]
    seen: set[str] = field(init=False)
    folder_paths: dict[int, str] = field(init=False)

    def __post_init__(self) -> None:
        self.seen = set(self.bound.values())
        self.folder_paths = {folder_id: path for path, folder_id in self.settings.folders.items()}

    async def stage(self, number: int, file: File) -> None:
        """Stage one listed file (its asset and sidecar), or say why not."""
        result = self.result
        url_name = self._url_name(file)
        if url_name is None:
            return
        folder = self.folder_paths.get(file.folder) if file.folder is not None else None
        named = f"{folder.strip('/')}/{url_name}" if folder and folder != "/" else url_name
        assert result.staging is not None
        staged = result.staging / f"{number}-{url_name}"
        path = await self._path(file, url_name, named, staged)
        if path is None:
            return
        if file.folder is not None and folder is None:
            result.unnamed_folders[file.folder] = result.unnamed_folders.get(file.folder, 0) + 1
        self._stage_bytes(path, staged)
        sidecar = self._stage_sidecar(file, path, url_name, folder)
        size, sha = HashCache(None).sha256(staged)
        spec = FileSpec(
            path=path,
            size=size,
            sha256=sha,
            meta=sidecar,
            folder_id=file.folder if folder is not None else None,
            source=Location(file=path),
        )
        result.files[path] = (file, spec)

    def _url_name(self, file: File) -> str | None:
        """The file's name in its public URL, or None (said in ``skipped``) when the content cannot hold it."""
        url_name = PurePosixPath((file.url or "").split("?")[0]).name
        if not url_name:
            self.result.skipped.append(f"file {file.id}: it has no public URL")
            return None
        if one_line(url_name) != url_name:  # the content cannot hold that name (the loader refuses it)
            self.result.skipped.append(f"file {one_line(url_name)} (id {file.id}): its name holds a control character")
            return None
        return url_name

    async def _path(self, file: File, url_name: str, named: str, staged: Path) -> str | None:
        """The file's path in the content (the bound one, else a free one), its bytes downloaded into ``staged``;
        None when it is not pulled (said in the result)."""
        result = self.result
        path = self.bound.get(file.id.lower())
        was = PurePosixPath(self.state.files[path].url.split("?")[0]).name if path is not None else url_name
        if was and was != url_name:
            result.notes.append(f"file {path}: renamed on the site, from {was} to {url_name}; still bound to {path}")
        if path is None:
            return await _free_path(self.downloads, file, staged, self.root, named, self.seen, result, self.scope)
        return path if await _download(self.downloads, file, staged, path, result) else None

    def _stage_bytes(self, path: str, staged: Path) -> None:
        """Stage the downloaded bytes, unless the local bytes are an edit not applied yet (the site serves what was
        last applied)."""
        target = self.root / "files" / path
        recorded = self.state.files.get(path)
        if (
            recorded is not None
            and target.is_file()
            and recorded.hash == f"sha256:{sha256_of(staged)}" != f"sha256:{sha256_of(target)}"
        ):
            self.result.local_files.setdefault(path, []).append("its bytes")
        else:
            clean = _asset_clean(self.state, path)
            self.result.staged.append(Staged("file", path, target, source=staged, clean=clean))

    def _stage_sidecar(self, file: File, path: str, url_name: str, folder: str | None) -> FileSidecar:
        """Stage the file's sidecar (its metadata), unless its difference is a local edit not applied yet."""
        result, settings = self.result, self.settings
        sidecar_file = self.root / "files" / f"{path}.yaml"
        existing = writer.read_plain(sidecar_file)
        meta = _sidecar(file, url_name, folder, existing, take_all=self.scope.take_all)
        recorded = self.state.files.get(path)
        applied = recorded.digest if recorded is not None else None
        # the site holds what was last applied: a difference in the sidecar is a local edit not applied yet
        if (
            isinstance(existing, dict)
            and meta != existing
            and applied
            and _meta_digest(meta, path, settings) == applied
        ):
            meta = existing
            result.local_files.setdefault(path, []).append("its sidecar")  # kept, its record left as it is
        sidecar = FileSidecar.model_validate(meta)
        if meta or sidecar_file.exists():
            text = writer.render_yaml(sidecar_file, meta)
            clean = _sidecar_clean(self.state, path, settings)
            result.staged.append(Staged("sidecar", path, sidecar_file, text=text, clean=clean))
        return sidecar


def _note_unnamed_folders(result: Pulled) -> None:
    if result.unnamed_folders:
        ids = ", ".join(
            f"{folder_id} ({count} file{'s' if count > 1 else ''})"
            for folder_id, count in sorted(result.unnamed_folders.items())
        )
        result.notes.append(
            f"files in folders {ids}: pulled without a folder: key (their folder is left as it is on the site), as "
            "the API names folders by id only; to manage their folders, map the folders' paths in folders: of "
            "cmssync.yaml (e.g. folders: {/: 7, /Documents: 8}; / is the file manager's root) and pull again"
        )


async def _free_path(
    downloads: _Downloads,
    file: File,
    staged: Path,
    root: Path,
    named: str,
    seen: set[str],
    result: Pulled,
    scope: PullScope,
) -> str | None:
    """The path of a site file the state does not bind (downloaded to ``staged``): a local asset at its name that
    no other site file holds and has its bytes, else — when files are taken in — a free name; None when it is
    not taken in (listed)."""
    local = root / "files" / named
    downloaded = named not in seen and local.is_file()
    if downloaded:
        if not await _download(downloads, file, staged, named, result):
            return None
        if sha256_of(local) == sha256_of(staged):
            seen.add(named)
            return named
    if not scope.takes("file"):
        result.not_taken.setdefault("file", []).append(
            f"{named} (another file of that name)" if named in seen else named
        )
        return None
    path = _unique(named, seen, root)
    if not downloaded and not await _download(downloads, file, staged, path, result):
        seen.discard(path)
        return None
    return path


async def _download(downloads: _Downloads, file: File, staged: Path, path: str, result: Pulled) -> bool:
    """Download ``file`` to ``staged``; a file whose bytes the site does not serve is skipped with a note."""
    try:
        await downloads.fetch(file, staged)
    except (NotFound, PermissionDenied, UnexpectedResponse) as exc:  # this file's bytes, not the whole site
        result.skipped.append(f"file {path} (id {file.id}): not downloaded, {exc}; the rest is pulled without it")
        return False
    return True


def _unique(path: str, seen: set[str], root: Path) -> str:
    """``path``, or ``name-2.ext``… when a bound file or a local asset holds it."""
    stem, dot, suffix = path.rpartition(".")
    number = 2
    while path in seen or (root / "files" / path).exists():
        path, number = f"{stem}-{number}{dot}{suffix}", number + 1
    seen.add(path)
    return path


def _sidecar(file: File, url_name: str, folder: str | None, existing: Any, *, take_all: bool) -> dict[str, Any]:
    """The sidecar of a pulled file: the site's metadata; merged into an existing sidecar, whose keys keep their
    text where the site holds the same value (compared as the planner does) and whose unread keys (attributes, a
    folder the API cannot name) stay; keys it does not state are added only with ``take_all``."""
    site: dict[str, Any] = {}
    if file.title and file.title != url_name:
        site["title"] = escape(file.title)
    if file.description:
        site["description"] = escape(file.description)
    if file.tag_list:
        site["tags"] = file.tag_list
    if folder is not None:
        site["folder"] = folder
    if not isinstance(existing, dict):
        return site
    local = _comparable_meta(existing, url_name)
    remote = _comparable_meta(site, url_name)
    merged = dict(existing)
    for key in ("title", "description", "tags"):
        if key in existing and local.get(key) != remote.get(key):
            merged[key] = site.get(key, {"title": url_name, "description": "", "tags": []}[key])
    if "folder" in existing and folder is not None and existing["folder"] != folder:
        merged["folder"] = folder
    if take_all:
        merged = {**site, **merged}
    return merged


def _comparable_meta(meta: dict[str, Any], url_name: str) -> dict[str, Any]:
    """Title, description and tags of a sidecar's data as the planner compares them (a missing title is the file
    name, as Concrete names an uploaded file)."""
    try:
        sidecar = FileSidecar.model_validate(meta)
    except ValidationError:
        return {"invalid": meta}
    compared = desired_file_meta(
        FileSpec(path=url_name, size=0, sha256="", meta=sidecar, folder_id=None, source=Location(file=""))
    )
    compared.setdefault("title", url_name)
    compared.setdefault("description", "")
    compared.setdefault("tags", [])
    return compared


def _sidecar_clean(state: State, path: str, settings: Settings) -> Callable[[Path], bool]:
    """The sidecar on disk is what the last apply or pull recorded: its metadata digest is the state's."""

    def clean(target: Path) -> bool:
        record = state.files.get(path)
        return (
            record is not None
            and record.digest is not None
            and _meta_digest(writer.read_plain(target), path, settings) == record.digest
        )

    return clean


def _meta_digest(data: Any, path: str, settings: Settings) -> str | None:
    """The metadata digest the state records (``file_digest``) of a sidecar's data, or None when it is invalid."""
    if not isinstance(data, dict):
        return None
    try:
        meta = FileSidecar.model_validate(data)
        folder = meta.folder if not isinstance(meta.folder, str) else settings.folders.get(folder_path(meta.folder))
    except (ValidationError, ValueError):
        return None
    return file_digest(FileSpec(path=path, size=0, sha256="", meta=meta, folder_id=folder, source=Location(file=path)))


def _asset_clean(state: State, path: str) -> Callable[[Path], bool]:
    def clean(target: Path) -> bool:
        record = state.files.get(path)
        return record is not None and record.hash == f"sha256:{sha256_of(target)}"

    return clean


def escape(text: str) -> str:
    """A site's text as content: a literal ``${`` is written ``$${`` (not a reference)."""
    return text.replace("${", "$${")
