"""``cmssync pull``: adopt an existing site — write its pages, blocks, files, users and groups as content.

The live site is read through the page tree (every page, or only ``--pages``), the file, user and group lists;
files are downloaded. What is written is the content that, applied, gives the site as it is, so the next plan is
empty. Block values are translated from the export form every API read shows into references
(``cmssync.plan.references``): page links become ``${page-link:/path}``, download links ``${file-link:PATH}``,
pictures ``<concrete-picture fID="${file-id:PATH}" …/>``, file and page columns ``${file-id:…}`` / ``${page-id:…}``;
absolute URLs of pulled files become ``${file:PATH}``; booleans of known blocks become YAML booleans. A block whose
read is lossy (layouts, containers, galleries, multi-entry blocks, a download link read back as ``href=""``, a link
to a file that was not pulled) or whose type is not known to round-trip is written as a placeholder
``- keep: {type: …, id: N}``, which apply never touches. Sub-areas of layouts (``Main : 13 : …``) are not pulled.
A page whose handle holds a word Concrete drops from the URLs it makes gets its ``id:`` pinned, so it loads; a page
whose existing file pins another id is left alone. Existing files are edited in place by the content writer, so
comments survive. Everything written is recorded as managed in the state.

Not pulled, because the API cannot write it back: passwords (users get none; add ``password: ${env:NAME}`` to set
one), select and file attributes (the API sets them by numeric option or file id), the super admin (user 1).
"""

from __future__ import annotations

import asyncio
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath
from typing import Any, TextIO

from pydantic import ValidationError
from ruamel.yaml import YAML
from ruamel.yaml.error import YAMLError

from cmssync.api.client import ConcreteClient
from cmssync.api.models import Area, Block, File, Page
from cmssync.config import Settings, load_settings
from cmssync.content import writer
from cmssync.content.files import FileSpec, HashCache
from cmssync.content.loader import load_content
from cmssync.content.models import FileSidecar, GroupSpec, Location, PageSpec, UserSpec
from cmssync.content.paths import check_page_path, dropped_words
from cmssync.errors import EXIT_OK, ConfigError
from cmssync.plan.assets import file_digest, file_hash, user_digest
from cmssync.plan.conflicts import page_base
from cmssync.plan.desired import DEFAULT_ATTRIBUTE_TYPES, Resolver
from cmssync.plan.pages import build_desired_page
from cmssync.plan.references import (
    DROPPED_WHEN_ZERO,
    FileLookup,
    Lossy,
    Rendered,
    column_to_reference,
    export_name,
    html_to_references,
    is_lossy,
    is_sub_area,
    rendered_content_blocks,
)
from cmssync.state.backends import StateBackend, holding_lock, open_state_backend
from cmssync.state.records import FileRecord, GroupRecord, PageRecord, State, UserRecord
from cmssync.sync.observe import unreliable_list_warning

PULLED_ATTRIBUTE_TYPES = {"text", "textarea", "boolean", "number", "url", "email", "telephone"}
MODELLED = {"content", "html", "page_title", "horizontal_rule"}


@dataclass
class Pulled:
    pages: dict[str, tuple[Page, PageSpec]] = field(default_factory=dict)
    files: dict[str, tuple[File, FileSpec]] = field(default_factory=dict)
    skipped: list[str] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)


async def run_pull(
    directory: Path,
    *,
    out: TextIO,
    pages: tuple[str, ...] = (),
    overrides: Mapping[str, Any] | None = None,
    lock_timeout: float | None = None,
) -> int:
    settings = load_settings(directory, overrides=overrides)
    if not settings.site.url:
        raise ConfigError(f"no site to pull from: set site.url in {directory / 'cmssync.yaml'} or CMSSYNC_URL")
    store = open_state_backend(settings, directory, lock_timeout=lock_timeout)
    async with holding_lock(store, "cmssync pull"):
        state = store.load()
        state.bind_site(settings.site.url, settings.site.api_prefix, allow_other_site=overrides is not None)
        async with ConcreteClient.from_settings(settings, base_dir=directory) as client:
            pulled = await pull(client, directory, settings, state, store, only=pages)
    for note in pulled.skipped:
        out.write(f"skipped: {note}\n")
    for note in pulled.notes:
        out.write(f"note: {note}\n")
    out.write(
        f"pulled {len(pulled.pages)} pages and {len(pulled.files)} files into {directory}; "
        "they are now managed (the next plan is empty)\n"
    )
    return EXIT_OK


async def pull(
    client: ConcreteClient,
    root: Path,
    settings: Settings,
    state: State,
    store: StateBackend,
    *,
    only: tuple[str, ...] = (),
) -> Pulled:
    result = Pulled()
    base_url = client.base_url
    if not only:
        await _pull_files(client, root, settings, result)
        await _pull_users_and_groups(client, root, state, result.skipped)
    file_urls = {path: file.url or "" for path, (file, _spec) in result.files.items()}
    for path, (file, file_spec) in result.files.items():
        state.record_file(
            path,
            FileRecord(
                id=file.id.lower(),
                hash=file_hash(file_spec),
                url=file.url or "",
                folder=file.folder,
                digest=file_digest(file_spec),
            ),
        )
    tree = [node async for node in client.walk_page_tree((await client.default_site(includes=())).home_page_id or 1)]
    wanted = set(only)
    paths = [node.page.url_path for node in tree if not wanted or node.page.url_path in wanted]
    missing = wanted - set(paths)
    result.skipped += [f"page {path}: not found on the site" for path in sorted(missing)]
    ids = {node.page.url_path: node.page.id for node in tree}
    uuids = {file.id.lower(): path for path, (file, _spec) in result.files.items()}
    reads = await asyncio.gather(
        *(client.get_page(ids[path], includes=("areas", "areas.content", "custom_attributes")) for path in paths)
    )
    for path, page in zip(paths, reads, strict=True):
        try:
            check_page_path(path, existing=True)
        except ValueError as exc:
            result.skipped.append(f"page {path}: {exc}")
            continue
        pinned = _pinned_id(root, path)
        if pinned is not None and pinned != page.id:
            result.skipped.append(
                f"page {path}: its file pins id {pinned}, but the site's page at {path} is id {page.id}; "
                "left as it is (fix the id or move the file)"
            )
            continue
        spec = page_spec(page, base_url, file_urls, uuids, notes=result.notes)
        writer.write_page(root, path, spec)
        result.pages[path] = (page, spec)
    # Record after writing, from the content as it loads back, so digests are exactly what the planner computes.
    content = load_content(root)
    resolve = Resolver(
        file_urls=file_urls, file_ids={p: f.id for p, (f, _) in result.files.items()}, page_ids=ids, strict=False
    )
    for path, (page, _) in result.pages.items():
        desired = build_desired_page(content.pages[path], path, resolve, base_url=base_url)
        version = page.version.id if page.version else None
        base = page_base(desired.fields, desired.areas, desired.end_date)  # the three-way base: site == content
        state.record_page(path, PageRecord(id=page.id, digest=desired.digest, live_version_id=version, base=base))
    store.save(state)
    return result


# --- pages --------------------------------------------------------------------------------------------------------


def page_spec(
    page: Page,
    base_url: str,
    file_urls: Mapping[str, str],
    uuids: Mapping[str, str] | None = None,
    *,
    notes: list[str] | None = None,
) -> PageSpec:
    """A page read (with ``areas``, and ``areas.content`` to recover download links) as content; what a user should
    know about it (blocks kept as placeholders, links visitors cannot open) is appended to ``notes``."""
    attributes = {
        attribute.handle: attribute.value
        for attribute in page.custom_attributes
        if attribute.handle
        and (attribute.type or DEFAULT_ATTRIBUTE_TYPES.get(attribute.handle, "")) in PULLED_ATTRIBUTE_TYPES
        and attribute.value not in (None, "", False)
    }
    links = _Links(base_url, file_urls, uuids or {})
    areas = {area.name: links.area(area) for area in page.areas or [] if not is_sub_area(area.name)}
    if notes is not None:
        notes.extend(f"page {page.url_path}: {note}" for note in links.notes())
    data: dict[str, Any] = {"name": page.name or ""}
    if dropped_words(page.url_path.rsplit("/", 1)[-1]):
        # Concrete would not make this URL for a new page; pinning the id says the page exists (it then loads).
        data["id"] = page.id
    if page.description:
        data["description"] = _escape(page.description)
    if page.type:
        data["type"] = page.type
    if page.template:
        data["template"] = page.template
    if attributes:
        data["attributes"] = {k: _escape(v) if isinstance(v, str) else v for k, v in attributes.items()}
    if areas:
        data["areas"] = areas
    return PageSpec.model_validate(data)


class _Links:
    """Translates one page's blocks into content (see the module docstring)."""

    def __init__(self, base_url: str, file_urls: Mapping[str, str], uuids: Mapping[str, str]) -> None:
        self.base_url = base_url
        self.file_urls = file_urls
        by_export = {name: path for path, url in file_urls.items() if (name := export_name(url)) is not None}
        self.files: FileLookup = by_export.get
        self.uuids: FileLookup = uuids.get
        self.kept: list[str] = []
        self.numeric_links = 0

    def notes(self) -> list[str]:
        found = []
        if self.kept:
            found.append(f"kept as placeholders (never written by apply): {'; '.join(self.kept)}")
        if self.numeric_links:
            found.append(
                f"{self.numeric_links} download link(s) stored by numeric id kept as they are; visitors get "
                "'Invalid File.' for them on Concrete 9.x: write ${file-link:PATH} instead"
            )
        return found

    def area(self, area: Area) -> list[dict[str, Any]]:
        contents = [block for block in area.blocks if block.type == "content"]
        rendered_html = area.content.raw if area.content is not None else None
        rendered = rendered_content_blocks(rendered_html or "", len(contents)) if rendered_html is not None else None
        by_block = dict(zip((b.id for b in contents), rendered or [], strict=False))
        return [self.block(block, by_block.get(block.id)) for block in area.blocks]

    def block(self, block: Block, rendered: Rendered | None) -> dict[str, Any]:
        """One block as content: links as references, or a ``keep`` placeholder when the API read lost something
        (or the type is not known to round-trip), so that apply never writes it back."""
        kind = block.type or ""
        reason = is_lossy(kind, block.value)
        if reason is not None:
            return self._keep(block, reason)
        try:
            value = {key: self.field(kind, str(v), rendered) for key, v in block.value.items()}
        except Lossy as exc:
            return self._keep(block, str(exc))
        if kind in ("content", "html"):
            return {"type": kind, "value": {"content": value.get("content", "")}}
        if kind == "page_title":
            title = {"useCustomTitle": value.get("useCustomTitle") == "1", "formatting": value.get("formatting", "h1")}
            if value.get("titleText"):
                title["titleText"] = value["titleText"]
            return {"type": kind, "value": title}
        if kind == "horizontal_rule":
            return {"type": kind}
        dropped = DROPPED_WHEN_ZERO.get(kind, frozenset())
        raw = {k: v for k, v in value.items() if not (k in dropped and v == "0")}
        return {"type": kind, "raw": True, "value": raw}

    def field(self, kind: str, text: str, rendered: Rendered | None) -> str:
        column = column_to_reference(text, self.files)
        if column is not None:
            return column
        text = _with_references(text, self.base_url, self.file_urls)
        if kind != "content":
            return text
        translated = html_to_references(text, self.files, rendered, self.uuids)
        self.numeric_links += len(re.findall(r"\{CCM:FID_DL_\d+\}", translated))
        return translated

    def _keep(self, block: Block, reason: str) -> dict[str, Any]:
        self.kept.append(f"{block.type} {block.id} ({reason})")
        return {"keep": {"type": block.type or "", "id": block.id}}


def _with_references(text: str, base_url: str, file_urls: Mapping[str, str]) -> str:
    text = _escape(text)
    for path, url in file_urls.items():
        if not url:
            continue
        reference = f"${{file:{path}}}"
        text = text.replace(url, reference)
        if url.startswith(base_url):
            text = text.replace("{CCM:BASE_URL}" + url[len(base_url) :], reference)
    return text


def _pinned_id(root: Path, path: str) -> int | None:
    """The ``id:`` an existing page file pins, if any (read leniently: an unreadable file pins nothing)."""
    target = writer.page_file(root, path)
    if not target.is_file():
        return None
    try:
        data = YAML(typ="safe").load(target.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, YAMLError):
        return None
    pinned = data.get("id") if isinstance(data, dict) else None
    return pinned if isinstance(pinned, int) and not isinstance(pinned, bool) else None


def _escape(text: str) -> str:
    return text.replace("${", "$${")


# --- files, users, groups -----------------------------------------------------------------------------------------


async def _pull_files(client: ConcreteClient, root: Path, settings: Settings, result: Pulled) -> None:
    # Folders are written by path, known only for the ids ``folders:`` in cmssync.yaml names (the API shows ids
    # alone); files in other folders get no ``folder:``, so their folder is left alone rather than pinned to an id.
    folder_paths = {folder_id: path for path, folder_id in settings.folders.items()}
    unnamed_folders: dict[int, int] = {}
    seen: set[str] = set()
    listed = [file async for file in client.iter_files()]
    warning = unreliable_list_warning("files", [file.date_added for file in listed])
    if warning is not None:
        result.skipped.append(warning)
    for file in listed:
        url_name = PurePosixPath((file.url or "").split("?")[0]).name
        if not url_name:
            result.skipped.append(f"file {file.id}: it has no public URL")
            continue
        folder = folder_paths.get(file.folder) if file.folder is not None else None
        if file.folder is not None and folder is None:
            unnamed_folders[file.folder] = unnamed_folders.get(file.folder, 0) + 1
        path = f"{folder.strip('/')}/{url_name}" if folder and folder != "/" else url_name
        stem, dot, suffix = path.rpartition(".")
        number = 2
        while path in seen:
            path, number = f"{stem}-{number}{dot}{suffix}", number + 1
        seen.add(path)
        target = root / "files" / path
        await client.download_file(file, target)
        meta: dict[str, Any] = {}
        if file.title and file.title != url_name:
            meta["title"] = _escape(file.title)
        if file.description:
            meta["description"] = _escape(file.description)
        if file.tag_list:
            meta["tags"] = file.tag_list
        if folder is not None:
            meta["folder"] = folder
        sidecar = FileSidecar.model_validate(meta)
        if meta:
            writer.write_sidecar(root, path, sidecar)
        size, sha = HashCache(None).sha256(target)
        spec = FileSpec(
            path=path,
            size=size,
            sha256=sha,
            meta=sidecar,
            folder_id=file.folder if folder is not None else None,
            source=Location(file=path),
        )
        result.files[path] = (file, spec)
    if unnamed_folders:
        ids = ", ".join(
            f"{folder_id} ({count} file{'s' if count > 1 else ''})"
            for folder_id, count in sorted(unnamed_folders.items())
        )
        result.skipped.append(
            f"folder of files in folders {ids}: the API names folders by id only; to manage them, map their paths "
            "in folders: of cmssync.yaml (e.g. folders: {/: 7, /Documents: 8}; / is the file manager's root) and pull "
            "again"
        )


async def _pull_users_and_groups(client: ConcreteClient, root: Path, state: State, skipped: list[str]) -> None:
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
            skipped.append(f"user {user.username}: {exc.errors()[0]['msg']}")
            continue
        specs.append(spec)
        record = UserRecord(id=user.id, digest=user_digest(spec))
        state.record_user(user.username, record)
    if specs:
        writer.write_users(root, sorted(specs, key=lambda spec: spec.username))
    groups = [group async for group in client.iter_groups()]
    if groups:
        writer.write_groups(root, [GroupSpec(name=g.name or "") for g in sorted(groups, key=lambda g: g.id)])
        for group in groups:
            state.record_group(group.name or "", GroupRecord(id=group.id))
