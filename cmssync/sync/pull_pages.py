"""Pull of pages and stacks (the page and stack kinds' pull hooks, ``cmssync.sync.pulling``).

The live site is read through the page tree — one children list with blocks and attributes per parent, the flat page
list as the map of which pages are parents (``cmssync.sync.pull_tree``; pages read one request each are counted in
the summary) — every page, or only ``--pages``. A page is converted (merged into its file, if it has one) as its
children list arrives and only its id, version, digest and base are kept, so memory does not hold the site; a page
whose file refers to pages (their ids are known only once the walk is done) is merged after the walk; how a page read
becomes content is ``cmssync.sync.pull_page_form``. Stacks are found once the walk is done
(``cmssync.sync.pull_stacks``: the API lists none); a page holding a stack display is staged after that, its
displays named from its rendering and the stacks' (``cmssync.sync.stack_displays``).

A page whose handle holds a word Concrete drops from the URLs it makes gets its ``id:`` pinned, so it loads; a page
whose existing file pins another id is left alone.
"""

from __future__ import annotations

import asyncio
from collections import ChainMap
from collections.abc import Callable, Collection, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from cmssync.api.models import Page
from cmssync.content import writer
from cmssync.content.models import PageSpec
from cmssync.content.paths import STACKS_PREFIX, check_page_path, is_stack_path, page_named
from cmssync.content.values import with_values
from cmssync.plan.conflicts import field_matches, live_area_digest, site_fields
from cmssync.plan.desired import DEFAULT_ATTRIBUTE_TYPES, Resolver
from cmssync.plan.page_form import DesiredPage, page_form, render_desired
from cmssync.plan.snapshot import LivePage
from cmssync.plan.subareas import hidden_sub_areas, is_sub_area
from cmssync.state.records import PageRecord, State
from cmssync.sync.observe_pages import PageProgress, observe_progress
from cmssync.sync.page_read import to_live_page
from cmssync.sync.pull_merge import keep_explicit, merge_page
from cmssync.sync.pull_page_form import (
    PLACEHOLDER_NOTE,
    PULLED_ATTRIBUTE_TYPES,
    FileLinks,
    page_spec,
    placeholder_note,
    stack_data,
)
from cmssync.sync.pull_record import staged_form, watching
from cmssync.sync.pull_scope import PullScope
from cmssync.sync.pull_stacks import find_stacks
from cmssync.sync.pull_tree import read_page_map, read_tree
from cmssync.sync.pull_writes import Kind, Pulled, PulledPage, Staged
from cmssync.sync.pulling import PullRun
from cmssync.sync.site_trees import list_sites, other_sites_note, read_trees
from cmssync.sync.stack_displays import page_holds_displays, stack_renders, with_stacks_named


async def pull_pages(run: PullRun) -> None:
    """The page kind's pull hook: the page tree walked, each page staged as it arrives (see the module
    docstring)."""
    client, root, state, result = run.client, run.root, run.state, run.result
    # Read while files and users are: the flat page list (a chain of list pages) and the site's home page id.
    page_map = None if run.only else asyncio.ensure_future(read_page_map(client))
    site = asyncio.ensure_future(read_trees(client))
    # a whole pull of the default site says which other sites the installation has (none: no note)
    listed = None if run.only or client.site_handle is not None else asyncio.ensure_future(list_sites(client))
    try:
        await run.turn("page")
        pages = _PageStaging.of(client.base_url, root, state, result, run.only, run.scope)
        pages_read = PageProgress(observe_progress.get())  # the command's display: pages read so far

        def stage(batch: list[Page]) -> None:
            pages_read.done(len(batch))
            for page in batch:
                pages.arrived(page)

        the_site, result.trees = await site
        roots = result.trees.roots(the_site.home_page_id or 1)
        tree = await read_tree(client, roots, stage, wanted=pages.wanted, page_map=page_map)
        pages_read.finish()
        result.page_ids.update(tree.ids)
        if pages.to_name:  # pages holding stack displays: named once the stacks are read
            pages.renders = stack_renders(await _site_stacks(run, probe=run.scope.takes("stack")))
            for page in pages.to_name:
                pages.arrived(page)
        result.notes += _moved_on_the_site(root, state, tree.ids, pages.wanted)
        if listed is not None:
            result.notes += other_sites_note(await listed, the_site)
        result.read_alone = dict(tree.alone)
        result.unread = tree.unread
        if pages.not_taken:
            result.not_taken["page"] = pages.not_taken
        for page in pages.to_merge:
            pages.stage(page)
    finally:
        early = [task for task in (page_map, site, listed) if task is not None]
        for task in early:
            task.cancel()
        await asyncio.gather(*early, return_exceptions=True)


async def pull_stacks(run: PullRun) -> None:
    """The stack kind's pull hook: the site's stacks (found by probing past the pages the walk read, or named by
    the state), staged like pages."""
    await run.turn("stack")
    result = run.result
    pages = _PageStaging.of(run.client.base_url, run.root, run.state, result, run.only, run.scope)
    if not pages.wanted or any(is_stack_path(path) for path in pages.wanted):
        await _stage_stacks(run, pages)
    missing = sorted(pages.wanted - set(result.page_ids))
    result.skipped += [f"{page_named(path)}: not found on the site" for path in missing]
    for page in pages.to_merge:
        pages.stage(page)


async def _site_stacks(run: PullRun, *, probe: bool) -> list[Page]:
    """The site's stacks with their renderings (found by probing past the pages read when ``probe``, else those the
    state names), read once per pull: the page hook names stack displays with them, the stack hook stages them."""
    result = run.result
    if result.stacks_found is not None and (result.stacks_found[0] or not probe):
        return result.stacks_found[1]
    named = {record.id: path for path, record in run.state.pages.items() if is_stack_path(path)}
    seen = set(result.page_ids.values())
    stacks = await find_stacks(run.client, seen, named, result.unread, probe=probe)
    if untold := result.trees.untold_stacks_note(stack.url_path for stack in stacks):
        result.notes.append(untold)
    result.stacks_found = (probe, stacks)
    return stacks


async def _stage_stacks(run: PullRun, pages: _PageStaging) -> None:
    """The site's stacks (found by probing the pages read, or named by the state), staged like pages."""
    result, wanted = pages.result, pages.wanted
    stacks = await _site_stacks(run, probe=pages.scope.takes("stack") or bool(wanted))
    pages.renders = stack_renders(stacks)
    for read in stacks:
        stack = with_stacks_named(read, pages.renders)
        path = stack.url_path
        result.page_ids[path] = stack.id
        if wanted and path not in wanted:
            continue
        if result.page_file(path).is_file():
            pages.to_merge.append(stack)
        elif wanted or pages.scope.takes("stack"):
            pages.stage(stack)
        else:
            result.not_taken.setdefault("stack", []).append(path)


@dataclass
class _PageStaging:
    """How one pull stages its pages and stacks: into ``result``, against ``state``, references resolved by
    ``resolve`` (which learns the page ids as the walk finds them)."""

    root: Path
    state: State
    result: Pulled
    resolve: Resolver
    base_url: str
    links: FileLinks
    uuids: Mapping[str, str]
    scope: PullScope
    wanted: set[str]
    """``--pages``: only these paths; empty for every page the scope takes."""
    to_merge: list[Page] = field(default_factory=list)
    """Pages whose merge needs every page's id: staged once the walk is done."""
    renders: dict[str, str] | None = None
    """The stacks' renderings (path → its ``Main`` area's), once read: what names stack displays."""
    to_name: list[Page] = field(default_factory=list)
    """Pages holding stack displays that arrived before the stacks were read: staged once they are."""
    not_taken: list[str] = field(default_factory=list)

    @classmethod
    def of(
        cls, base_url: str, root: Path, state: State, result: Pulled, only: tuple[str, ...], scope: PullScope
    ) -> _PageStaging:
        file_urls = {path: file.url or "" for path, (file, _spec) in result.files.items()}
        file_ids = {path: file.id for path, (file, _spec) in result.files.items()}
        if only:
            # Files are not read for --pages: their references resolve to what the state recorded, and references
            # to pages not read to their recorded ids, so a page file reads as a whole pull reads it (else its
            # ${file:…} links differ from the site and an editor's change is refused as a local edit).
            file_urls = {path: record.url for path, record in state.files.items()}
            file_ids = {path: str(record.id) for path, record in state.files.items()}
        recorded = {path: record.id for path, record in state.pages.items()} if only else {}
        page_ids = ChainMap(result.page_ids, recorded)  # the walk's ids (filled as it goes) first
        resolve = Resolver(file_urls=file_urls, file_ids=file_ids, page_ids=page_ids, strict=False)
        result.resolver = resolve  # what the pages are recorded with (``cmssync.sync.pull_record``)
        links = FileLinks(base_url, file_urls)  # once: per page it cost pages x files
        uuids = {str(file_id).lower(): path for path, file_id in file_ids.items()}
        return cls(root, state, result, resolve, base_url, links, uuids, scope, set(only))

    def arrived(self, page: Page) -> None:
        """A page of a children list: staged now, set aside for after the walk, or listed as not taken."""
        path = page.url_path
        if self.wanted and path not in self.wanted:
            return
        if page_holds_displays(page):
            if self.renders is None:
                self.to_name.append(page)
                return
            page = with_stacks_named(page, self.renders)
        if self.result.page_file(path).is_file():
            if not self.stage(page, walking=True):
                self.to_merge.append(page)  # its merge needs every page's id: once the walk is done
        elif self.wanted or self.scope.takes("page"):
            self.stage(page)
        else:
            self.not_taken.append(path)

    def stage(self, page: Page, *, walking: bool = False) -> bool:
        """Stage one page's file, merged into the file there is; only the page's id and live version are kept.
        While ``walking`` (not every page's id is known yet), a page whose file's desired form needs one is not
        staged: False (stage it once the walk is done)."""
        path = page.url_path
        result = self.result
        try:
            check_page_path(path.replace(STACKS_PREFIX, "/", 1), existing=True)
        except ValueError as exc:
            result.skipped.append(f"{page_named(path)}: {exc}")
            return True
        target = result.page_file(path)
        existing = writer.read_plain(target)
        pinned = _pinned_elsewhere(existing, page)
        if pinned is not None:
            result.skipped.append(
                f"{page_named(path)}: its file pins id {pinned}, but the site's page at {path} is id {page.id}; "
                "left as it is (fix the id or move the file)"
            )
            return True
        watched, asked = watching(self.resolve) if walking else (self.resolve, lambda: False)
        readable = with_values(existing, result.values) if isinstance(existing, dict) else existing
        desired = _desired(readable, path, watched, self.base_url)
        if asked():
            return False
        notes: list[str] = []
        placeholders: list[str] = []
        verdicts = self.state.site.block_types if self.state.site is not None else {}
        spec = page_spec(
            page, self.base_url, self.links, self.uuids, notes=notes, placeholders=placeholders, verdicts=verdicts
        )
        types = {
            a.handle: a.type or DEFAULT_ATTRIBUTE_TYPES.get(a.handle, "") for a in page.custom_attributes if a.handle
        }
        written = stack_data(page, writer.spec_data(spec)) if is_stack_path(path) else writer.spec_data(spec)
        tree = result.trees.tree_of(path) if path != "/" and result.trees.is_home(path) else None
        if tree is not None:  # a locale tree's home says which tree it is (cmssync.plan.locales)
            written = _with_locale(written, tree.locale)
        data = keep_explicit(existing, written, types, frozenset(PULLED_ATTRIBUTE_TYPES))
        if isinstance(existing, dict) and desired is not None:
            data = self._merged(page, existing, data, desired)
            notes, placeholders = _written_placeholders(path, data, notes, placeholders)
        try:
            spec = PageSpec.model_validate(with_values(data, result.values))
        except ValueError as exc:  # a ValidationError, or a ${value:…} the settings do not hold
            reason = exc.errors()[0]["msg"] if isinstance(exc, ValidationError) else str(exc)
            result.skipped.append(f"{page_named(path)}: {target.name} cannot keep what it says: {reason}")
            return True
        result.notes += notes
        result.placeholders += placeholders
        self._staged(page, target, data, spec)
        return True

    def _merged(
        self, page: Page, existing: dict[str, Any], data: dict[str, Any], desired: DesiredPage
    ) -> dict[str, Any]:
        """The site's page merged into its existing file (``cmssync.sync.pull_merge``); the file's edits the site
        does not have are listed as local edits."""
        path = page.url_path
        live = to_live_page(page, None, self.base_url)
        pending: list[str] = []
        hidden = hidden_sub_areas(live)
        unchanged = _site_unchanged(self.state.pages.get(path), live, hidden)
        take_all = self.scope.take_all
        data = merge_page(existing, data, desired, live, take_all=take_all, unchanged=unchanged, pending=pending)
        for name in hidden if isinstance(data.get("areas"), dict) else ():  # its layout is gone: not an edit to keep
            data["areas"].pop(name, None)
        if pending:
            self.result.local_edits[path] = pending
        return data

    def _staged(self, page: Page, target: Path, data: dict[str, Any], spec: PageSpec) -> None:
        """Stage the file and keep what the summary and the record need: editable block types, sub-areas, the
        page's id, live version and desired form."""
        path, result = page.url_path, self.result
        areas = data["areas"] if isinstance(data.get("areas"), dict) else {}
        result.editable.update(
            str(block.get("type"))
            for blocks in areas.values()
            if isinstance(blocks, list)
            for block in blocks
            if isinstance(block, dict) and "keep" not in block
        )
        result.sub_areas += [(path, name, len(blocks)) for name, blocks in areas.items() if is_sub_area(name)]
        clean = _page_clean(path, self.state, self.resolve, self.base_url, result.values)
        kind: Kind = "stack" if is_stack_path(path) else "page"
        result.staged.append(Staged(kind, path, target, text=writer.render_yaml(target, data), clean=clean))
        site = site_fields(to_live_page(page, None, self.base_url))
        form = staged_form(spec, path, self.resolve, self.base_url, site)
        version = page.version
        approved = version.date_approved.isoformat() if version and version.date_approved else None
        result.pages[path] = PulledPage(page.id, version.id if version else None, form, approved, site)


def _with_locale(data: dict[str, Any], locale: str) -> dict[str, Any]:
    """``data`` with ``locale:`` right after the page's name."""
    out: dict[str, Any] = {}
    for key, value in data.items():
        out[key] = value
        if key == "name":
            out["locale"] = locale
    out.setdefault("locale", locale)
    return out


def _moved_on_the_site(root: Path, state: State, ids: Mapping[str, int], wanted: set[str]) -> list[str]:
    """Managed pages the site moved: their file stays where it is (one binding), said with what to do."""
    paths = {page_id: path for path, page_id in ids.items()}
    return [
        f"{page_named(path)}: moved on the site to {paths[record.id]} (id {record.id}); its file stays at "
        f"{writer.page_file(root, path).relative_to(root).as_posix()} and is not pulled: move the file to match, or "
        "move the page back in the dashboard"
        for path, record in sorted(state.pages.items())
        if path not in ids and record.id in paths and (not wanted or path in wanted)
    ]


def _site_unchanged(record: PageRecord | None, live: LivePage, hidden: Collection[str]) -> Callable[[str], bool]:
    """Whether the site still holds, for a field or ``area:NAME``, what cmssync last applied or pulled (the base);
    never for a ``hidden`` sub-area (its blocks are still there, but its layout or container is gone)."""
    base = record.base if record is not None else None

    def unchanged(name: str) -> bool:
        if base is None:
            return False
        if name.startswith("area:"):
            area = None if name.removeprefix("area:") in hidden else base.areas.get(name.removeprefix("area:"))
            return (
                area is not None
                and live_area_digest(live.blocks(name.removeprefix("area:")), area.shape) == area.digest
            )
        return name in base.fields and field_matches(name, base.fields[name], live)

    return unchanged


def _written_placeholders(
    path: str, data: dict[str, Any], notes: list[str], placeholders: list[str]
) -> tuple[list[str], list[str]]:
    """The notes and placeholders of the blocks a merge kept as placeholders (not those the file holds as it says)."""
    areas = data.get("areas") if isinstance(data.get("areas"), dict) else {}
    kept_ids = {
        block["keep"].get("id")
        for blocks in (areas or {}).values()
        if isinstance(blocks, list)
        for block in blocks
        if isinstance(block, dict) and isinstance(block.get("keep"), dict)
    }
    written = [entry for entry in placeholders if int(entry.split(" ", 2)[1]) in kept_ids]
    others = [note for note in notes if not note.startswith(f"{page_named(path)}: {PLACEHOLDER_NOTE}")]
    return [*others, *([f"{page_named(path)}: {placeholder_note(written)}"] if written else [])], written


def _pinned_elsewhere(existing: Any, page: Page) -> int | None:
    """The id a page's file pins when it is not the site's page's at that path, or None."""
    pinned = existing.get("id") if isinstance(existing, dict) else None
    if isinstance(pinned, int) and not isinstance(pinned, bool) and pinned != page.id:
        return pinned
    return None


def _desired(existing: Any, path: str, resolve: Resolver, base_url: str) -> DesiredPage | None:
    """The desired form of an existing page file, or None when it is not a valid page."""
    if not isinstance(existing, dict):
        return None
    try:
        return render_desired(page_form(PageSpec.model_validate(existing)), path, resolve, base_url=base_url)
    except (ValidationError, ValueError, KeyError):
        return None


def _page_clean(
    path: str, state: State, resolve: Resolver, base_url: str, values: Mapping[str, str]
) -> Callable[[Path], bool]:
    """Whether a page file is what the last apply or pull recorded: its digest is the state's."""

    def clean(target: Path) -> bool:
        record = state.pages.get(path)
        data = writer.read_plain(target)
        if record is None or record.digest is None or not isinstance(data, dict):
            return False
        try:
            spec = PageSpec.model_validate(with_values(data, values))
            desired = render_desired(page_form(spec), path, resolve, base_url=base_url)
        except (ValidationError, ValueError, KeyError):
            return False
        return desired.digest == record.digest

    return clean
