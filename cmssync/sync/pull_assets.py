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

import contextlib
from collections.abc import Callable
from pathlib import Path, PurePosixPath
from typing import Any

from pydantic import ValidationError

from cmssync.api.client import ConcreteClient
from cmssync.api.errors import NotFound, PermissionDenied, UnexpectedResponse
from cmssync.api.models import File
from cmssync.config import Settings, folder_path
from cmssync.content import writer
from cmssync.content.files import FileSpec, HashCache
from cmssync.content.models import FileSidecar, Location, UserSpec
from cmssync.errors import one_line
from cmssync.plan.asset_forms import desired_file_meta, file_digest, user_digest
from cmssync.state.records import GroupRecord, State, UserRecord
from cmssync.sync.observe import unreliable_list_warning
from cmssync.sync.pull_scope import PullScope
from cmssync.sync.pull_writes import Pulled, Staged, sha256_of


async def pull_files(
    client: ConcreteClient, root: Path, settings: Settings, state: State, result: Pulled, scope: PullScope
) -> None:
    folder_paths = {folder_id: path for path, folder_id in settings.folders.items()}
    listed = [file async for file in client.iter_files()]
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
    seen = set(bound.values())
    # Bound files first, so that a free name is never one a bound file holds.
    for number, file in sorted(enumerate(listed), key=lambda item: item[1].id.lower() not in bound):
        url_name = PurePosixPath((file.url or "").split("?")[0]).name
        if not url_name:
            result.skipped.append(f"file {file.id}: it has no public URL")
            continue
        if one_line(url_name) != url_name:  # the content cannot hold that name (the loader refuses it)
            result.skipped.append(f"file {one_line(url_name)} (id {file.id}): its name holds a control character")
            continue
        folder = folder_paths.get(file.folder) if file.folder is not None else None
        named = f"{folder.strip('/')}/{url_name}" if folder and folder != "/" else url_name
        assert result.staging is not None
        staged = result.staging / f"{number}-{url_name}"
        path = bound.get(file.id.lower())
        was = PurePosixPath(state.files[path].url.split("?")[0]).name if path is not None else url_name
        if was and was != url_name:
            result.notes.append(f"file {path}: renamed on the site, from {was} to {url_name}; still bound to {path}")
        if path is None:
            path = await _free_path(client, file, staged, root, named, seen, result, scope)
            if path is None:
                continue
        elif not await _download(client, file, staged, path, result):
            continue
        if file.folder is not None and folder is None:
            result.unnamed_folders[file.folder] = result.unnamed_folders.get(file.folder, 0) + 1
        target = root / "files" / path
        recorded = state.files.get(path)
        if (
            recorded is not None
            and target.is_file()
            and recorded.hash == f"sha256:{sha256_of(staged)}" != f"sha256:{sha256_of(target)}"
        ):  # the site serves what was last applied: the local bytes are an edit not applied yet
            result.local_files.setdefault(path, []).append("its bytes")
        else:
            result.staged.append(Staged("file", path, target, source=staged, clean=_asset_clean(state, path)))
        sidecar_file = root / "files" / f"{path}.yaml"
        existing = writer.read_plain(sidecar_file)
        meta = _sidecar(file, url_name, folder, existing, take_all=scope.take_all)
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
            clean = _sidecar_clean(state, path, settings)
            result.staged.append(Staged("sidecar", path, sidecar_file, text=text, clean=clean))
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


async def _free_path(
    client: ConcreteClient,
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
        if not await _download(client, file, staged, named, result):
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
    if not downloaded and not await _download(client, file, staged, path, result):
        seen.discard(path)
        return None
    return path


async def _download(client: ConcreteClient, file: File, staged: Path, path: str, result: Pulled) -> bool:
    """Download ``file`` to ``staged``; a file whose bytes the site does not serve is skipped with a note."""
    try:
        await client.download_file(file, staged)
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


async def pull_users_and_groups(
    client: ConcreteClient, root: Path, state: State, result: Pulled, scope: PullScope
) -> None:
    """``users.yaml`` and ``groups.yaml`` merged: the file's entries in its order, each with the site's email and
    language where they differ (its password reference and other keys kept); the site's others appended when taken
    in, listed otherwise; entries the site lacks stay (apply creates them)."""
    site_users: dict[str, dict[str, Any]] = {}
    ids: dict[str, int] = {}
    for user in await client.all_users():
        if user.id == 1 or not user.username:
            continue  # the super admin is never managed
        data = {"username": user.username, "email": user.email or ""}
        if user.language:
            data["language"] = user.language
        try:
            UserSpec.model_validate(data)
        except ValidationError as exc:
            result.skipped.append(f"user {user.username}: {exc.errors()[0]['msg']}")
            continue
        site_users[user.username], ids[user.username] = data, user.id
    target = root / "users.yaml"
    # a user the site still holds as last applied or pulled: a difference in users.yaml is a local edit, kept
    untouched = {
        name
        for name, data in site_users.items()
        if (record := state.users.get(name)) is not None
        and record.id == ids[name]
        and record.digest == user_digest(UserSpec.model_validate(data))
    }
    entries = _merged_entries(writer.read_plain(target), site_users, "username", "user", result, scope, untouched)
    for entry in entries:
        name = entry.get("username")
        if name in ids:
            with contextlib.suppress(ValidationError):
                spec = UserSpec.model_validate(entry)
                if user_digest(spec) != user_digest(UserSpec.model_validate(site_users[name])):
                    result.local_users.append(name)  # not applied yet: its record stays as it is
                    continue
                result.user_records[name] = UserRecord(id=ids[name], digest=user_digest(spec))
    if entries:
        text = writer.render_yaml(target, entries)
        result.staged.append(Staged("users", "users.yaml", target, text=text, clean=_users_clean(state)))
    groups = {group.name or "": group async for group in client.iter_groups()}
    target = root / "groups.yaml"
    site_groups = {name: {"name": name} for name in sorted(groups, key=lambda n: groups[n].id)}
    entries = _merged_entries(writer.read_plain(target), site_groups, "name", "group", result, scope)
    if entries:
        text = writer.render_yaml(target, entries)
        result.staged.append(Staged("groups", "groups.yaml", target, text=text, clean=_groups_clean(state)))
        result.group_records = {
            str(entry["name"]): GroupRecord(id=groups[entry["name"]].id)
            for entry in entries
            if entry.get("name") in groups
        }


def _merged_entries(
    existing: Any,
    site: dict[str, dict[str, Any]],
    key: str,
    kind: str,
    result: Pulled,
    scope: PullScope,
    untouched: set[str] | frozenset[str] = frozenset(),
) -> list[dict[str, Any]]:
    """The file's entries (by ``key``) with the site's differing values (not for the ``untouched`` ones, which the
    site still holds as last applied: the file's differences are local edits), then the site's others if taken
    in."""
    local = [item for item in existing if isinstance(item, dict)] if isinstance(existing, list) else []
    names = {item.get(key) for item in local}
    merged = []
    for item in local:
        remote = site.get(item.get(key))  # type: ignore[arg-type]
        if remote is None or item.get(key) in untouched:
            merged.append(item)
            continue
        entry = dict(item)
        for field_name, value in remote.items():
            if (field_name in entry or scope.take_all) and entry.get(field_name) != value:
                entry[field_name] = value
        if "language" in entry and "language" not in remote:
            del entry["language"]
        merged.append(entry)
    others = [name for name in site if name not in names]
    if scope.takes(kind):
        merged += [site[name] for name in (sorted(others) if kind == "user" else others)]
    else:
        result.not_taken.setdefault(kind, []).extend(sorted(others))
    return merged


def _list_clean(holds: Callable[[list[Any]], bool]) -> Callable[[Path], bool]:
    """A ``clean`` check of a list file (``users.yaml``, ``groups.yaml``): it is a list and ``holds``."""

    def clean(target: Path) -> bool:
        data = writer.read_plain(target)
        return isinstance(data, list) and holds(data)

    return clean


def _users_clean(state: State) -> Callable[[Path], bool]:
    """``users.yaml`` holds exactly the users the state records, each as last applied or pulled."""

    def holds(data: list[Any]) -> bool:
        try:
            specs = [UserSpec.model_validate(item) for item in data]
        except ValidationError:
            return False
        records = state.users
        return {s.username for s in specs} == set(records) and all(
            records[s.username].digest == user_digest(s) for s in specs
        )

    return _list_clean(holds)


def _groups_clean(state: State) -> Callable[[Path], bool]:
    def holds(data: list[Any]) -> bool:
        names = {item.get("name") for item in data if isinstance(item, dict)}
        return len(names) == len(data) and names == set(state.groups)

    return _list_clean(holds)


def escape(text: str) -> str:
    """A site's text as content: a literal ``${`` is written ``$${`` (not a reference)."""
    return text.replace("${", "$${")
