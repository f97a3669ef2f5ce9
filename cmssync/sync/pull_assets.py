"""``cmssync pull`` of files, users and groups: read from the site and staged (``cmssync.sync.pull_writes``).

Files are downloaded into ``.cmssync/pull-staging/`` and hashed there; the asset and its sidecar are staged for the
content directory. A file whose bytes cannot be downloaded (its public URL answers 404, 403 or something that is not
the file) is skipped with a note, and the rest of the site is pulled. Folders are written by path, known only for the
ids ``folders:`` in cmssync.yaml names (the API shows ids alone); files in other folders get no ``folder:`` (an
existing sidecar's ``folder:`` is kept), so their folder is left alone rather than pinned to an id. An existing
sidecar keeps its explicit ``description: ""`` and ``tags: []``. Users (never the super admin, never a password) go
to ``users.yaml``, groups to ``groups.yaml``; their state records are handed back, to be recorded only when the file
is written.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path, PurePosixPath
from typing import Any

from pydantic import ValidationError

from cmssync.api.client import ConcreteClient
from cmssync.api.errors import NotFound, PermissionDenied, UnexpectedResponse
from cmssync.api.models import File
from cmssync.config import Settings
from cmssync.content import writer
from cmssync.content.files import FileSpec, HashCache
from cmssync.content.models import FileSidecar, GroupSpec, Location, UserSpec
from cmssync.plan.assets import user_digest
from cmssync.state.records import GroupRecord, State, UserRecord
from cmssync.sync.observe import unreliable_list_warning
from cmssync.sync.pull_writes import Pulled, Staged, sha256_of


async def pull_files(client: ConcreteClient, root: Path, settings: Settings, state: State, result: Pulled) -> None:
    folder_paths = {folder_id: path for path, folder_id in settings.folders.items()}
    seen: set[str] = set()
    listed = [file async for file in client.iter_files()]
    warning = unreliable_list_warning("files", [file.date_added for file in listed])
    if warning is not None:
        result.skipped.append(warning)
    for number, file in enumerate(listed):
        url_name = PurePosixPath((file.url or "").split("?")[0]).name
        if not url_name:
            result.skipped.append(f"file {file.id}: it has no public URL")
            continue
        folder = folder_paths.get(file.folder) if file.folder is not None else None
        if file.folder is not None and folder is None:
            result.unnamed_folders[file.folder] = result.unnamed_folders.get(file.folder, 0) + 1
        path = _unique(f"{folder.strip('/')}/{url_name}" if folder and folder != "/" else url_name, seen)
        assert result.staging is not None
        staged = result.staging / f"{number}-{url_name}"
        try:
            await client.download_file(file, staged)
        except (NotFound, PermissionDenied, UnexpectedResponse) as exc:  # this file's bytes, not the whole site
            result.skipped.append(f"file {path} (id {file.id}): not downloaded, {exc}; the rest is pulled without it")
            seen.discard(path)
            continue
        target = root / "files" / path
        result.staged.append(Staged("file", path, target, source=staged, clean=_asset_clean(state, path)))
        sidecar_file = root / "files" / f"{path}.yaml"
        meta = _sidecar(file, url_name, folder, writer.read_plain(sidecar_file))
        sidecar = FileSidecar.model_validate(meta)
        if meta or sidecar_file.exists():
            text = writer.render_yaml(sidecar_file, meta)
            result.staged.append(Staged("sidecar", path, sidecar_file, text=text))
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
    if result.unnamed_folders:
        ids = ", ".join(
            f"{folder_id} ({count} file{'s' if count > 1 else ''})"
            for folder_id, count in sorted(result.unnamed_folders.items())
        )
        result.skipped.append(
            f"folder of files in folders {ids}: the API names folders by id only; to manage them, map their paths "
            "in folders: of cmssync.yaml (e.g. folders: {/: 7, /Documents: 8}; / is the file manager's root) and pull "
            "again"
        )


def _unique(path: str, seen: set[str]) -> str:
    stem, dot, suffix = path.rpartition(".")
    number = 2
    while path in seen:
        path, number = f"{stem}-{number}{dot}{suffix}", number + 1
    seen.add(path)
    return path


def _sidecar(file: File, url_name: str, folder: str | None, existing: Any) -> dict[str, Any]:
    meta: dict[str, Any] = {}
    if file.title and file.title != url_name:
        meta["title"] = escape(file.title)
    if file.description:
        meta["description"] = escape(file.description)
    if file.tag_list:
        meta["tags"] = file.tag_list
    if folder is not None:
        meta["folder"] = folder
    if isinstance(existing, dict):
        if "description" in existing and "description" not in meta:
            meta["description"] = ""
        if "tags" in existing and "tags" not in meta:
            meta["tags"] = []
        if "folder" in existing and folder is None:
            meta["folder"] = existing["folder"]  # the API cannot name this folder: the file's word stands
    return meta


def _asset_clean(state: State, path: str) -> Callable[[Path], bool]:
    def clean(target: Path) -> bool:
        record = state.files.get(path)
        return record is not None and record.hash == f"sha256:{sha256_of(target)}"

    return clean


async def pull_users_and_groups(client: ConcreteClient, root: Path, state: State, result: Pulled) -> None:
    specs: list[UserSpec] = []
    for user in await client.all_users():
        if user.id == 1 or not user.username:
            continue  # the super admin is never managed
        data = {"username": user.username, "email": user.email or ""}
        if user.language:
            data["language"] = user.language
        try:
            spec = UserSpec.model_validate(data)
        except ValidationError as exc:
            result.skipped.append(f"user {user.username}: {exc.errors()[0]['msg']}")
            continue
        specs.append(spec)
        result.user_records[user.username] = UserRecord(id=user.id, digest=user_digest(spec))
    if specs:
        target = root / "users.yaml"
        text = writer.render_yaml(target, [writer.spec_data(s) for s in sorted(specs, key=lambda s: s.username)])
        result.staged.append(Staged("users", "users.yaml", target, text=text, clean=_users_clean(state)))
    groups = [group async for group in client.iter_groups()]
    if groups:
        target = root / "groups.yaml"
        names = [GroupSpec(name=g.name or "") for g in sorted(groups, key=lambda g: g.id)]
        text = writer.render_yaml(target, [writer.spec_data(group) for group in names])
        result.staged.append(Staged("groups", "groups.yaml", target, text=text, clean=_groups_clean(state)))
        result.group_records = {group.name or "": GroupRecord(id=group.id) for group in groups}


def _users_clean(state: State) -> Callable[[Path], bool]:
    """``users.yaml`` holds exactly the users the state records, each as last applied or pulled."""

    def clean(target: Path) -> bool:
        data = writer.read_plain(target)
        if not isinstance(data, list):
            return False
        try:
            specs = [UserSpec.model_validate(item) for item in data]
        except ValidationError:
            return False
        records = state.users
        return {s.username for s in specs} == set(records) and all(
            records[s.username].digest == user_digest(s) for s in specs
        )

    return clean


def _groups_clean(state: State) -> Callable[[Path], bool]:
    def clean(target: Path) -> bool:
        data = writer.read_plain(target)
        if not isinstance(data, list):
            return False
        names = {item.get("name") for item in data if isinstance(item, dict)}
        return len(names) == len(data) and names == set(state.groups)

    return clean


def escape(text: str) -> str:
    """A site's text as content: a literal ``${`` is written ``$${`` (not a reference)."""
    return text.replace("${", "$${")
