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
import os
import re
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from cmssync.api.client import ConcreteClient
from cmssync.api.models import Area, Block, Page
from cmssync.config import CONFIG_VARIABLE, Settings, load_settings
from cmssync.content import writer
from cmssync.content.blocktypes import BlockField, BlockType, block_type, block_types, keep_reason
from cmssync.content.loader import load_content
from cmssync.content.models import PageSpec
from cmssync.content.paths import check_page_path, dropped_words
from cmssync.errors import ConfigError
from cmssync.plan.assets import file_digest, file_hash
from cmssync.plan.conflicts import page_base
from cmssync.plan.desired import DEFAULT_ATTRIBUTE_TYPES, Resolver
from cmssync.plan.pages import build_desired_page
from cmssync.plan.references import (
    FileLookup,
    Lossy,
    Rendered,
    column_to_reference,
    export_name,
    html_to_references,
    is_sub_area,
    rendered_blocks,
)
from cmssync.state.backends import StateBackend, holding_lock, open_state_backend
from cmssync.state.records import FileRecord, PageRecord, State
from cmssync.sync.pull_assets import escape, pull_files, pull_users_and_groups
from cmssync.sync.pull_config import starter_config
from cmssync.sync.pull_merge import keep_explicit
from cmssync.sync.pull_writes import Pulled, Staged, discard_staging, settle, staging_directory

PULLED_ATTRIBUTE_TYPES = {"text", "textarea", "boolean", "number", "url", "email", "telephone"}


async def pull_site(
    directory: Path,
    *,
    pages: tuple[str, ...] = (),
    overrides: Mapping[str, Any] | None = None,
    lock_timeout: float | None = None,
    force: bool = False,
    dry_run: bool = False,
) -> Pulled:
    """Pull under the state lock and return what was (with ``dry_run``: would be) written; the command renders it
    (``cmssync.render.pull``)."""
    settings = load_settings(directory, overrides=overrides)
    if not settings.site.url:
        raise ConfigError(f"no site to pull from: set site.url in {directory / 'cmssync.yaml'} or CMSSYNC_URL")
    store = open_state_backend(settings, directory, lock_timeout=lock_timeout)
    async with holding_lock(store, "cmssync pull"):
        state = store.load()
        state.bind_site(settings.site.url, settings.site.api_prefix, allow_other_site=overrides is not None)
        async with ConcreteClient.from_settings(settings, base_dir=directory) as client:
            return await pull(client, directory, settings, state, store, only=pages, force=force, dry_run=dry_run)


async def pull(
    client: ConcreteClient,
    root: Path,
    settings: Settings,
    state: State,
    store: StateBackend,
    *,
    only: tuple[str, ...] = (),
    force: bool = False,
    dry_run: bool = False,
) -> Pulled:
    """Read the site, stage every file, then write those that lose no local edit (``cmssync.sync.pull_writes``)
    and record what was written; with ``dry_run`` keep the diffs and write nothing, state included."""
    result = Pulled(root=root, dry_run=dry_run, staging=staging_directory(root, dry_run=dry_run))
    try:
        await _read_site(client, root, settings, state, result, only)
        if not (root / "cmssync.yaml").exists() and CONFIG_VARIABLE not in os.environ:
            text = starter_config(settings, result.unnamed_folders)
            result.staged.append(Staged("config", "cmssync.yaml", root / "cmssync.yaml", text=text))
        result.settled = settle(result.staged, root, force=force, dry_run=dry_run)
    finally:
        discard_staging(result.staging)
    if dry_run:
        return result
    _record(root, state, client.base_url, result)
    store.save(state)
    return result


async def _read_site(
    client: ConcreteClient, root: Path, settings: Settings, state: State, result: Pulled, only: tuple[str, ...]
) -> None:
    base_url = client.base_url
    if not only:
        await pull_files(client, root, settings, state, result)
        await pull_users_and_groups(client, root, state, result)
    file_urls = {path: file.url or "" for path, (file, _spec) in result.files.items()}
    tree = [node async for node in client.walk_page_tree((await client.default_site(includes=())).home_page_id or 1)]
    wanted = set(only)
    paths = [node.page.url_path for node in tree if not wanted or node.page.url_path in wanted]
    missing = wanted - set(paths)
    result.skipped += [f"page {path}: not found on the site" for path in sorted(missing)]
    ids = result.page_ids = {node.page.url_path: node.page.id for node in tree}
    uuids = {file.id.lower(): path for path, (file, _spec) in result.files.items()}
    reads = await asyncio.gather(
        *(client.get_page(ids[path], includes=("areas", "areas.content", "custom_attributes")) for path in paths)
    )
    resolve = Resolver(
        file_urls=file_urls, file_ids={p: f.id for p, (f, _) in result.files.items()}, page_ids=ids, strict=False
    )
    for path, page in zip(paths, reads, strict=True):
        try:
            check_page_path(path, existing=True)
        except ValueError as exc:
            result.skipped.append(f"page {path}: {exc}")
            continue
        target = writer.page_file(root, path)
        existing = writer.read_plain(target)
        pinned = existing.get("id") if isinstance(existing, dict) else None
        if isinstance(pinned, int) and not isinstance(pinned, bool) and pinned != page.id:
            result.skipped.append(
                f"page {path}: its file pins id {pinned}, but the site's page at {path} is id {page.id}; "
                "left as it is (fix the id or move the file)"
            )
            continue
        spec = page_spec(page, base_url, file_urls, uuids, notes=result.notes, placeholders=result.placeholders)
        types = {
            a.handle: a.type or DEFAULT_ATTRIBUTE_TYPES.get(a.handle, "") for a in page.custom_attributes if a.handle
        }
        data = keep_explicit(existing, writer.spec_data(spec), types, frozenset(PULLED_ATTRIBUTE_TYPES))
        try:
            spec = PageSpec.model_validate(data)
        except ValidationError as exc:
            result.skipped.append(f"page {path}: {target.name} cannot keep what it says: {exc.errors()[0]['msg']}")
            continue
        clean = _page_clean(path, state, resolve, base_url)
        result.staged.append(Staged("page", path, target, text=writer.render_yaml(target, data), clean=clean))
        result.pages[path] = (page, spec)


def _page_clean(path: str, state: State, resolve: Resolver, base_url: str) -> Callable[[Path], bool]:
    """Whether a page file is what the last apply or pull recorded: its digest is the state's."""

    def clean(target: Path) -> bool:
        record = state.pages.get(path)
        data = writer.read_plain(target)
        if record is None or record.digest is None or not isinstance(data, dict):
            return False
        try:
            desired = build_desired_page(PageSpec.model_validate(data), path, resolve, base_url=base_url)
        except (ValidationError, ValueError, KeyError):
            return False
        return desired.digest == record.digest

    return clean


def _record(root: Path, state: State, base_url: str, result: Pulled) -> None:
    """Record what was written (or already held) as managed; a kept local edit leaves its record as it was."""
    kept_files = result.settled.not_written("file") | result.settled.not_written("sidecar")
    for path, (file, file_spec) in result.files.items():
        if path in kept_files:
            continue
        record = FileRecord(
            id=file.id.lower(),
            hash=file_hash(file_spec),
            url=file.url or "",
            folder=file.folder,
            digest=file_digest(file_spec),
        )
        state.record_file(path, record)
    if not result.settled.not_written("users"):
        for username, user_record in result.user_records.items():
            state.record_user(username, user_record)
    if not result.settled.not_written("groups"):
        for name, group_record in result.group_records.items():
            state.record_group(name, group_record)
    kept_pages = result.settled.not_written("page")
    pages = {path: read for path, read in result.pages.items() if path not in kept_pages}
    if not pages:
        return
    # Record after writing, from the content as it loads back, so digests are exactly what the planner computes.
    content = load_content(root)
    file_urls = {path: file.url or "" for path, (file, _spec) in result.files.items()}
    resolve = Resolver(
        file_urls=file_urls,
        file_ids={p: f.id for p, (f, _) in result.files.items()},
        page_ids=result.page_ids,
        strict=False,
    )
    for path, (page, _) in pages.items():
        desired = build_desired_page(content.pages[path], path, resolve, base_url=base_url)
        version = page.version.id if page.version else None
        base = page_base(desired.fields, desired.areas, desired.end_date)  # the three-way base: site == content
        state.record_page(path, PageRecord(id=page.id, digest=desired.digest, live_version_id=version, base=base))


# --- pages --------------------------------------------------------------------------------------------------------


def page_spec(
    page: Page,
    base_url: str,
    file_urls: Mapping[str, str],
    uuids: Mapping[str, str] | None = None,
    *,
    notes: list[str] | None = None,
    placeholders: list[str] | None = None,
) -> PageSpec:
    """A page read (with ``areas``, and ``areas.content`` to recover download links) as content; what a user should
    know about it (blocks kept as placeholders, links visitors cannot open) is appended to ``notes``, and each
    placeholder block (``type id (reason)``) to ``placeholders``."""
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
    if placeholders is not None:
        placeholders.extend(links.kept)
    data: dict[str, Any] = {"name": page.name or ""}
    if dropped_words(page.url_path.rsplit("/", 1)[-1]):
        # Concrete would not make this URL for a new page; pinning the id says the page exists (it then loads).
        data["id"] = page.id
    if page.description:
        data["description"] = escape(page.description)
    if page.type:
        data["type"] = page.type
    if page.template:
        data["template"] = page.template
    if attributes:
        data["attributes"] = {k: escape(v) if isinstance(v, str) else v for k, v in attributes.items()}
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
        rendered_html = area.content.raw if area.content is not None else None
        by_block: dict[int, Rendered] = {}
        for declared in block_types().values():
            if declared.rendered_wrapper is None:
                continue
            blocks = [block for block in area.blocks if block.type == declared.handle]
            pieces = rendered_blocks(rendered_html, declared.rendered_wrapper, len(blocks)) if rendered_html else None
            by_block.update(zip((b.id for b in blocks), pieces or [], strict=False))
        return [self.block(block, by_block.get(block.id)) for block in area.blocks]

    def block(self, block: Block, rendered: Rendered | None) -> dict[str, Any]:
        """One block as content: links as references, or a ``keep`` placeholder when the API read lost something
        (or the type is not known to round-trip), so that apply never writes it back."""
        kind = block.type or ""
        reason = keep_reason(kind, block.value)
        if reason is not None:
            return self._keep(block, reason)
        declared = block_type(kind)
        assert declared is not None  # keep_reason gives a reason for every undeclared type
        try:
            value = {key: self.field(declared, key, str(v), rendered) for key, v in block.value.items()}
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
        column = column_to_reference(text, self.files)
        if column is not None:
            return column
        text = _with_references(text, self.base_url, self.file_urls)
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


def _with_references(text: str, base_url: str, file_urls: Mapping[str, str]) -> str:
    text = escape(text)
    for path, url in file_urls.items():
        if not url:
            continue
        reference = f"${{file:{path}}}"
        text = text.replace(url, reference)
        if url.startswith(base_url):
            text = text.replace("{CCM:BASE_URL}" + url[len(base_url) :], reference)
    return text
