"""Read the live objects that the content and the state describe, and nothing else. Read-only.

Requests, for a site whose pages cmssync already manages: the default site (1), one read per page with every
include the planner needs (``areas,custom_attributes`` in the recent version; one more only for a page with a
pending draft, to learn its live version), and the file, user and group lists at ``limit=100``. So a no-op plan
costs about pages + files/100 + users/100 + a constant.

Pages are found by id (from the state or a pinned ``id``) and otherwise by path through the page tree
(``/pages/{id}/children``, one request per parent level, cached), never through ``GET /pages``: a real server's
page list repeats and skips pages whose modification dates tie (concrete-api.md §13). Lists of files and users
have the same weakness, so objects the state knows but a list walk missed are read by id. Site files that a content
file unknown to the state could adopt (same name, folder and size) are downloaded and hashed, because only the same
bytes prove it is ours (``cmssync.sync.file_adoption``).

Concurrency is bounded by the client (its semaphore); here every independent read is started at once.

Progress: ``progress(read, expected)`` is called as each page read finishes (``reading site: 120/301 pages``);
``expected`` grows when the tree walk finds more pages to read. Without the argument, the callable in
:data:`observe_progress` is used, so a command can show progress without threading a callback through the
planning and apply layers.
"""

from __future__ import annotations

import asyncio
from collections import Counter
from collections.abc import AsyncIterator, Awaitable, Callable, Iterable
from contextvars import ContextVar
from dataclasses import dataclass, field
from pathlib import PurePosixPath
from typing import TypeVar

from cmssync.api.client import ConcreteClient
from cmssync.api.errors import NotFound, PendingDeletion, PermissionDenied
from cmssync.api.models import File, Group, Page, User
from cmssync.content.paths import parent_path
from cmssync.content.site import SiteContent
from cmssync.errors import ObjectUnreadable
from cmssync.plan.blocks import LiveBlock
from cmssync.plan.normalize import normalize_block_value, normalize_date, normalize_tags
from cmssync.plan.references import is_sub_area
from cmssync.plan.scope import Scope, with_parents
from cmssync.plan.snapshot import LiveFile, LiveGroup, LivePage, LiveUser, Snapshot
from cmssync.state.records import State
from cmssync.sync.file_adoption import hash_adoption_candidates

PAGE_INCLUDES = ("areas", "custom_attributes")
T = TypeVar("T")

ObserveProgress = Callable[[int, int], None]
"""``(pages read, pages expected)``, called as each page read finishes."""
observe_progress: ContextVar[ObserveProgress | None] = ContextVar("observe_progress", default=None)
"""The progress callback of :func:`observe` calls that are not given one (set by the command showing it)."""


@dataclass
class _Progress:
    report: ObserveProgress | None
    read: int = 0
    expected: int = 0

    def expect(self, count: int) -> None:
        self.expected += count
        if self.report is not None and count:
            self.report(self.read, self.expected)

    async def tick(self, awaitable: Awaitable[T]) -> T:
        try:
            return await awaitable
        finally:
            self.read += 1
            if self.report is not None:
                self.report(self.read, self.expected)


@dataclass
class _PageIndex:
    by_path: dict[str, LivePage] = field(default_factory=dict)
    by_id: dict[int, LivePage] = field(default_factory=dict)
    children: dict[int, list[Page]] = field(default_factory=dict)

    def add(self, page: LivePage) -> None:
        self.by_path[page.path] = page
        self.by_id[page.id] = page


async def observe(
    client: ConcreteClient,
    content: SiteContent,
    state: State,
    *,
    scope: Scope | None = None,
    progress: ObserveProgress | None = None,
) -> Snapshot:
    """A snapshot of every live object the content or the state names (see the module docstring).

    With a ``scope`` (incremental runs), only the objects in scope are read, and the snapshot is incomplete.
    """
    pages_read = _Progress(progress or observe_progress.get())
    site = await client.default_site(includes=())
    home_id = site.home_page_id or 1
    base_url = client.base_url
    if scope is not None:
        content = scope.restrict(content)
        state = _restricted_state(state, scope)
    warnings: list[str] = []
    pages, files, users, groups = await asyncio.gather(
        _observe_pages(client, content, state, home_id, base_url, pages_read),
        _observe_files(
            client, state, list_all=scope is None or bool(set(content.files) - set(state.files)), warnings=warnings
        ),
        _observe_users(client, state, content.users) if scope is None or scope.all_users else _no_users(),
        _gather_list(client.iter_groups()) if scope is None or scope.all_groups else _no_groups(),
    )
    files = await hash_adoption_candidates(client, content, state, files, warnings)  # adopt by bytes only
    return Snapshot(
        site_url=base_url,
        home_page_id=home_id,
        pages=pages.by_path,
        pages_by_id=pages.by_id,
        files=files,
        users=users,
        groups={group.name or "": LiveGroup(group.id, group.name or "") for group in groups},
        complete=scope is None,
        warnings=tuple(warnings),
    )


def _restricted_state(state: State, scope: Scope) -> State:
    """The part of the state that a scoped run looks at (pages in scope and their parents, scoped files)."""
    pages = with_parents(scope)
    return State(
        site=state.site,
        pages={p: r for p, r in state.pages.items() if p in pages},
        files={p: r for p, r in state.files.items() if p in scope.files},
        users=state.users if scope.all_users else {},
        groups=state.groups if scope.all_groups else {},
    )


async def _no_users() -> dict[str, LiveUser]:
    return {}


async def _no_groups() -> list[Group]:
    return []


# --- pages --------------------------------------------------------------------------------------------------------


async def _observe_pages(
    client: ConcreteClient, content: SiteContent, state: State, home_id: int, base_url: str, progress: _Progress
) -> _PageIndex:
    index = _PageIndex()
    known: dict[int, str | None] = {home_id: "/"}
    for path, record in state.pages.items():
        known.setdefault(record.id, path)
    for path, spec in content.pages.items():
        if spec.id is not None:
            known.setdefault(spec.id, path)
    progress.expect(len(known))
    for page in await _all(progress.tick(_read_page(client, page_id, base_url)) for page_id in known):
        if page is not None:
            index.add(page)

    wanted = set(content.pages) | set(content.settings.existing_pages)
    wanted |= {parent for path in wanted if (parent := parent_path(path)) is not None}
    missing = sorted(path for path in wanted if path not in index.by_path)
    await _find_by_path(client, missing, index, base_url, progress)
    return index


async def _read_page(
    client: ConcreteClient, page_id: int, base_url: str, *, listed_at: str | None = None
) -> LivePage | None:
    """A page in its recent version, or None when it does not exist or sits in the trash.

    ``listed_at``: the page tree lists this page at that path, so it exists; if it cannot be read (403, or a 404
    that the tree contradicts) that is an error naming the page and the server's reason, never "absent", which
    would plan it to be created again (a duplicate on every run).
    """
    try:
        recent = await client.get_page(page_id, includes=PAGE_INCLUDES, version="recent")
    except PendingDeletion:
        return None
    except (NotFound, PermissionDenied) as exc:
        if listed_at is None:
            return None
        raise ObjectUnreadable(
            f"page {listed_at} (id {page_id}): the page tree lists it but it cannot be read ({exc}); "
            "it is not created again: let the API user read it, or move it out of the way"
        ) from exc
    live_version_id = recent.version.id if recent.version and recent.version.is_approved else None
    if recent.version is not None and not recent.version.is_approved:
        live = await client.get_page(page_id)
        live_version_id = live.version.id if live.version and live.version.is_approved else None
    return to_live_page(recent, live_version_id, base_url)


async def _find_by_path(
    client: ConcreteClient, paths: list[str], index: _PageIndex, base_url: str, progress: _Progress
) -> None:
    """Walk down the tree from the nearest known ancestor of each path, one level (and request) at a time."""
    pending = [path for path in paths if path.startswith("/") and path != "/"]
    depth = 1
    while pending:
        level = sorted({_prefix(path, depth) for path in pending})
        parents = {parent_path(p) or "/" for p in level if p not in index.by_path}
        parent_ids = [index.by_path[p].id for p in parents if p in index.by_path]
        missing_children = [pid for pid in parent_ids if pid not in index.children]
        for page_id, children in zip(
            missing_children, await _all(client.page_children(pid) for pid in missing_children), strict=True
        ):
            index.children[page_id] = children
        found: list[tuple[str, int]] = []
        for path in level:
            parent = parent_path(path) or "/"
            if path in index.by_path or parent not in index.by_path:
                continue
            match = next((c for c in index.children[index.by_path[parent].id] if c.url_path == path), None)
            if match is not None:
                found.append((path, match.id))
        progress.expect(len(found))
        reads = (progress.tick(_read_page(client, pid, base_url, listed_at=path)) for path, pid in found)
        for page in await _all(reads):
            if page is not None:
                index.add(page)
        pending = [path for path in pending if path not in index.by_path and path.count("/") > depth]
        pending = [path for path in pending if _prefix(path, depth) in index.by_path]
        depth += 1


def _prefix(path: str, depth: int) -> str:
    return "/" + "/".join(path.strip("/").split("/")[:depth])


def to_live_page(page: Page, live_version_id: int | None, base_url: str) -> LivePage:
    """The planner's view of a page read. Sub-areas of layouts and containers (``Main : 13 : Column 1``) are left
    out: nothing in the API ties them to their container block, and they are neither managed nor drift."""
    areas = {
        area.name: tuple(
            LiveBlock(
                block.id, block.type or "", normalize_block_value(block.type or "", block.value, base_url=base_url)
            )
            for block in area.blocks
        )
        for area in page.areas or []
        if not is_sub_area(area.name)
    }
    attributes = {a.handle: a.value for a in page.custom_attributes if a.handle}
    types = {a.handle: a.type for a in page.custom_attributes if a.handle and a.type}
    version = page.version
    return LivePage(
        id=page.id,
        path=page.url_path,
        name=page.name or "",
        description=page.description or "",
        type=page.type,
        template=page.template,
        attributes=attributes,
        attribute_types=types,
        areas=areas,
        live_version_id=live_version_id,
        recent_version_id=version.id if version else None,
        publish_end_date=normalize_date(version.publish_end_date) if version else None,
        recent_version_created=normalize_date(version.date_created) if version else None,
    )


# --- files, users -------------------------------------------------------------------------------------------------


def unreliable_list_warning(kind: str, dates: list[object]) -> str | None:
    """A warning when a list walk cannot have returned everything.

    The server's cursor skips items whose sort dates tie across a page boundary (concrete-api.md §13); a group of
    ties larger than half a page (a bulk import, the sample content of an install) cannot be walked completely.
    """
    if len(dates) < 100:
        return None
    largest = max(Counter(dates).values())
    if largest < 50:
        return None
    return (
        f"the site's {kind} list cannot be read completely: {largest} {kind} share the same date, and the API skips "
        f"some of them; {kind} it did not return look absent (a content {kind[:-1]} not yet in the state may be "
        "created again)"
    )


async def _observe_files(
    client: ConcreteClient, state: State, *, list_all: bool, warnings: list[str]
) -> dict[str, LiveFile]:
    files: dict[str, File] = {}
    if list_all:
        files = {f.id.lower(): f for f in await _gather_list(client.iter_files(includes=("custom_attributes",)))}
        warning = unreliable_list_warning("files", [f.date_added for f in files.values()])
        if warning is not None:
            warnings.append(warning)
    unseen = [str(r.id) for r in state.files.values() if str(r.id).lower() not in files]
    for extra in await _all(_maybe(client.get_file(file_id, includes=("custom_attributes",))) for file_id in unseen):
        if extra is not None:
            files[extra.id.lower()] = extra
    return {file_id: to_live_file(f) for file_id, f in files.items()}


def to_live_file(file: File) -> LiveFile:
    url = file.url or ""
    return LiveFile(
        id=file.id.lower(),
        name=PurePosixPath(url.split("?")[0]).name,
        url=url,
        title=file.title or "",
        description=file.description or "",
        tags=tuple(normalize_tags(file.tags)),
        folder=file.folder,
        size=file.size.exact if file.size else None,
        attributes={a.handle: a.value for a in file.custom_attributes if a.handle},
    )


async def _observe_users(client: ConcreteClient, state: State, wanted: Iterable[str]) -> dict[str, LiveUser]:
    listed, complete = await client.list_users()
    users: dict[int, User] = {u.id: u for u in listed}
    unseen = [r.id for r in state.users.values() if r.id not in users]
    for extra in await _all(_maybe(client.get_user(user_id)) for user_id in unseen):
        if extra is not None:
            users[extra.id] = extra
    names = {u.username for u in users.values()}
    if not complete and any(name not in names for name in wanted):
        # A content user is neither known nor listed: it may be one a multi-page walk skipped (tied dates), so
        # read the ids the walk did not return before planning to create it. A one-page list is complete.
        users.update({u.id: u for u in await client.find_missed_users(set(users))})
    return {
        u.username: LiveUser(id=u.id, username=u.username, email=u.email or "", language=u.language)
        for u in users.values()
        if u.username
    }


# --- helpers ------------------------------------------------------------------------------------------------------


async def _all(awaitables: Iterable[Awaitable[T]]) -> list[T]:
    return list(await asyncio.gather(*awaitables))


async def _maybe(awaitable: Awaitable[T]) -> T | None:
    try:
        return await awaitable
    except (NotFound, PermissionDenied):
        return None


async def _gather_list(iterator: AsyncIterator[T]) -> list[T]:
    return [item async for item in iterator]
