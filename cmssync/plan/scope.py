"""Scoped runs: which objects a run looks at, so a one-block edit or a ``--target`` costs a handful of requests.

A ``Scope`` names the pages, files, users and groups a run observes and plans. The content is restricted to those
objects, ``observe`` reads only them (no list walks for kinds outside the scope), and the snapshot is marked
incomplete, so the planner plans no deletes: only a full run can know that something disappeared.

Two kinds of runs are scoped: the daemon's incremental runs (:func:`scope_for_paths`, from changed files) and
``plan``/``apply --target`` (:func:`scope_for_targets`, from the content and the state: the targets and everything
their plan depends on, so the plan equals the whole-site plan restricted to the targets). A targeted scope may also
name pages outside the content (``lookups``: delete and move candidates read by their state id) and, for a targeted
file or user delete, every object the delete guards count (``deletes``: the snapshot is then complete for deletes).
A targeted file whose bytes changed is replaced, and its old copy deleted: the pages that link to it
(:func:`linking_pages`) are planned with it, as in a whole-site plan, or their links would break.
"""

from __future__ import annotations

import fnmatch
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, replace
from pathlib import PurePosixPath

from pydantic import BaseModel

from cmssync.content.paths import (
    is_hidden,
    object_page_path,
    page_named,
    parent_path,
)
from cmssync.content.site import SiteContent
from cmssync.content.text import PageIdRef, PageLinkRef, Reference, Text
from cmssync.plan.asset_forms import file_hash, user_digest
from cmssync.plan.builtin_kinds import BUILT_IN_KINDS
from cmssync.plan.kinds import KindTable
from cmssync.plan.scope_model import Scope
from cmssync.state.records import State


def scope_for_paths(changed: Iterable[str], kinds: KindTable = BUILT_IN_KINDS) -> Scope | None:
    """The scope that covers changed content files (paths relative to the content directory, POSIX): each file's
    by its kind's scope rule (``KindTable.path_scope``: every kind of the run's table).

    ``None`` means a full run is needed (``cmssync.yaml`` changed, or a path cmssync cannot map).
    """
    scope = Scope()
    for name in changed:
        if not name or is_hidden(name):
            continue
        try:
            found = kinds.path_scope(name)
        except ValueError:
            return None  # not a valid file of its kind: the full run reports it
        if found is None:
            return None
        scope |= found
    return scope


def with_parents(scope: Scope) -> frozenset[str]:
    """Scoped page paths and their parents (a new page needs its parent's id)."""
    found = set(scope.pages)
    for path in scope.pages:
        parent = parent_path(path)
        while parent is not None:
            found.add(parent)
            parent = parent_path(parent)
    return frozenset(found)


# --- --target ---------------------------------------------------------------------------------------------------

MAX_LOOKUPS = 50
"""A targeted run reads at most this many pages by id besides its targets' (delete and move candidates); more,
and it reads the whole site instead, which the batched tree walk does in a request per parent."""


@dataclass(frozen=True)
class WholeSite:
    """A targeted run whose scope cannot be computed safely: it reads the whole site, for this reason."""

    reason: str


def with_changed_users(scope: Scope, content: SiteContent, state: State, passwords_changed: Iterable[str]) -> Scope:
    """An incremental run's "every user" (``users.yaml`` changed) narrowed to the users it can change: those the
    state does not know, those whose email or language differ from what was last applied (``user_digest``), and
    those whose password changed. An incremental run plans no deletes, so users the content dropped do not matter
    here; what else changed on the site is the next full run's. The users the state knows are then read by id
    (``cmssync.sync.observe``), not by walking the whole list."""
    if not scope.all_users:
        return scope
    passwords = set(passwords_changed)
    changed = {
        name
        for name, spec in content.users.items()
        if (record := state.users.get(name)) is None or record.digest != user_digest(spec) or name in passwords
    }
    return replace(scope, users=scope.users | changed, all_users=False)


def with_references(scope: Scope, content: SiteContent, state: State) -> Scope | WholeSite:
    """An incremental run's scope (the changed files) grown by what its pages' plans need, as a ``--target`` run's
    is (:func:`scope_for_targets`), so that references resolve exactly as in a full run: pages they refer to are
    read by their state id (``lookups``, not planned) unless they are likely new (then planned and created first,
    with their parents), referenced files are read (and planned); a page to be created also reads the pages it may
    have moved from. A :class:`WholeSite` when a reference cannot be placed from the content and the state, or
    there are too many pages to read by id."""
    builder = _ScopeBuilder(content, state)
    for path in sorted(scope.pages & set(content.pages)):
        builder.expand(path)
    for path in sorted(scope.files & set(content.files)):
        builder.add_file(path)
    if builder.problem is not None:
        return WholeSite(builder.problem)
    planned = scope.pages | {p for p in builder.pages if p in scope.pages or builder.likely_new(p)}
    page_orphans = set(state.pages) - set(content.pages)
    lookups = (builder.pages - planned) | builder.lookups | (page_orphans if builder.creates else set())
    if len(lookups) > MAX_LOOKUPS:
        return WholeSite(f"{len(lookups)} pages to read by id besides the changed ones")
    return replace(
        scope,
        pages=frozenset(planned),
        files=scope.files | builder.files,
        lookups=scope.lookups | frozenset(lookups - planned),
    )


def scope_for_targets(
    content: SiteContent,
    state: State,
    targets: Sequence[str],
    *,
    prune: bool,
    replace_moved: bool,
    table: KindTable | None = None,
) -> Scope | WholeSite:
    """What a ``--target`` run must read so that it plans exactly what the whole-site plan plans for its targets.

    Computed from the content and the state before anything is read:

    * the targeted objects (``KIND:KEY`` patterns, as the planner matches them), each placed in the scope by its
      kind's rule (``KindTable.scope_of``: a stack as its page);
    * for every page whose plan a targeted action can depend on (a target, and pages likely to be created: not in
      the state, not pinned), the pages and files its fields, attributes and blocks refer to (``${page-link:…}``,
      ``${page-id:…}``, ``${file:…}``, ``${file-id:…}``, ``${file-link:…}``: their ids and URLs resolve the
      references, and the numeric file ids a write needs are learned for exactly those files), and, for a page to
      be created, its parents in the content (created first when missing) and every page the state manages that
      the content no longer has (the page may be one of them moved: ``plan.page_identity.moved_from``);
    * for a file the state does not know, the other such content files of its name and size (which of them adopts a
      site file holding the same bytes depends on all of them);
    * users the state knows are read by id (the whole list when a targeted user is new, or turns out deleted or
      renamed on the site: only the list shows who holds its name); groups are planned from their whole list;
    * a targeted delete of a file or user (pruning on): every managed file and user no longer in the content, as
      the delete guards (``max_deletes``, ``max_fraction``) count them all; the scope then plans deletes;
    * a targeted file whose bytes changed (a replace): the pages that link to it (:func:`linking_pages`), expanded
      like targeted pages, as their plan re-points the links before the old file is deleted.

    Pages that turn out to be missing although the state knows them are added after the observation
    (:func:`scope_after_observation`). A :class:`WholeSite` says why the whole site must be read instead: a
    targeted page delete or replacement (guarded by, and possibly a move of, pages anywhere in the site) or delete
    of a registered kind (the planner plans no delete from an incomplete observation), a
    reference whose target neither the content nor the state can place, or too many pages to read by id.
    """
    kinds = table or BUILT_IN_KINDS
    ids = kinds.object_ids(content, state)
    named = kinds.scope_of(i for i in ids if any(fnmatch.fnmatchcase(i, t) for t in targets))
    page_orphans = set(state.pages) - set(content.pages)
    file_orphans = set(state.files) - set(content.files)
    user_orphans = set(state.users) - set(content.users)
    if named.pages & page_orphans and (prune or replace_moved):
        return WholeSite("a page delete is guarded by, and may be a move of, pages anywhere in the site")
    if prune and named.kinds & _added_orphans(content, state, kinds):
        return WholeSite("a registered kind's delete is planned from a complete observation")
    builder = _ScopeBuilder(content, state)
    for path in sorted(named.pages & set(content.pages) | set(replace_companions(content, state, targets))):
        builder.expand(path)
    for path in sorted(named.files & set(content.files)):
        builder.add_file(path)
    if builder.problem is not None:
        return WholeSite(builder.problem)
    deletes = prune and bool(named.files & file_orphans or named.users & user_orphans)
    files = builder.files | (file_orphans if deletes else set())
    lookups = builder.lookups | (page_orphans if builder.creates else set())
    if len(lookups) > MAX_LOOKUPS:
        return WholeSite(f"{len(lookups)} pages to read by id besides the targets")
    return Scope(
        pages=frozenset(builder.pages),
        files=frozenset(files),
        users=named.users,
        all_users=bool(named.users) and (deletes or not named.users <= set(state.users) & set(content.users)),
        lookups=frozenset(lookups - builder.pages),
        deletes=deletes,
        kinds=named.kinds,
    )


def _added_orphans(content: SiteContent, state: State, kinds: KindTable) -> set[str]:
    """``KIND:KEY`` of the added kinds' objects the state records and the content no longer names."""
    return {
        kind.id_of(key)
        for kind in kinds.kinds
        if kind.keys is not None
        for key in set(kind.records_in(state)) - set(kind.keys_in(content))
    }


def replaced_files(content: SiteContent, state: State, targets: Sequence[str]) -> list[str]:
    """Targeted content files the state knows with other bytes: the plan replaces them (and deletes the old copy)."""
    return sorted(
        path
        for path, spec in content.files.items()
        if (record := state.files.get(path)) is not None
        and record.hash != file_hash(spec)
        and any(fnmatch.fnmatchcase(f"file:{path}", target) for target in targets)
    )


def linking_pages(content: SiteContent, state: State, files: Iterable[str]) -> dict[str, list[str]]:
    """For each of ``files``, the content pages that refer to it (any reference: URL, id, download link) and may
    already exist on the site (the state knows them, or their id is pinned): their links point at the file's
    current copy."""
    wanted = set(files)
    found: dict[str, set[str]] = {path: set() for path in wanted}
    for page, spec in content.pages.items():
        if page not in state.pages and spec.id is None:
            continue
        for ref in _references(spec):
            if not isinstance(ref, PageIdRef | PageLinkRef) and ref.path in wanted:
                found[ref.path].add(page)
    return {path: sorted(pages) for path, pages in found.items()}


def replace_companions(content: SiteContent, state: State, targets: Sequence[str]) -> list[str]:
    """The pages a targeted run plans besides its targets: those linking to a targeted file it replaces
    (``cmssync.sync.planning`` adds them to the planner's targets, and says so in a warning)."""
    replaced = replaced_files(content, state, targets)
    if not replaced:
        return []
    return sorted({page for pages in linking_pages(content, state, replaced).values() for page in pages})


def scope_after_observation(
    scope: Scope, content: SiteContent, state: State, pages_found: Iterable[str], unreadable: Iterable[str] = ()
) -> Scope | WholeSite:
    """``scope`` grown by what the observation showed: content pages of the scope that are missing from the site
    although the state knows them (deleted outside cmssync: they are created again, so they need what a new page
    needs, see :func:`scope_for_targets`). Equal to ``scope`` when nothing is missing (the common case). Pages
    that could not be read (``unreadable``: ``page:PATH`` ids) are not missing: they are never created again."""
    found = set(pages_found) | {p for object_id in unreadable if (p := object_page_path(*object_id.split(":", 1)))}
    missing = sorted(
        p
        for p in scope.pages
        if p in content.pages and p not in found and p in state.pages and content.pages[p].id is None
    )
    if not missing:
        return scope
    builder = _ScopeBuilder(content, state)
    for path in missing:
        builder.expand(path, absent=True)
    if builder.problem is not None:
        return WholeSite(builder.problem)
    lookups = scope.lookups | builder.lookups | set(state.pages) - set(content.pages)
    if len(lookups) > MAX_LOOKUPS:
        return WholeSite(f"{len(lookups)} pages to read by id besides the targets")
    grown = scope | Scope(pages=frozenset(builder.pages), files=frozenset(builder.files))
    return replace(grown, lookups=frozenset(lookups - grown.pages))


class _ScopeBuilder:
    """The pages and files the plans of some pages need (see :func:`scope_for_targets`)."""

    def __init__(self, content: SiteContent, state: State) -> None:
        self.content = content
        self.state = state
        self.pages: set[str] = set()
        self.files: set[str] = set()
        self.lookups: set[str] = set()
        self.creates = False
        """Some page of the scope is likely to be created: the pages it may have moved from are read."""
        self.problem: str | None = None
        self._expanded: set[str] = set()
        self._existing = {p.rstrip("/") or "/" for p in content.settings.existing_pages}

    def expand(self, path: str, *, absent: bool = False) -> None:
        """``path`` (a content page) and what its plan needs."""
        stack = [(path, absent)]
        while stack:
            current, gone = stack.pop()
            if current in self._expanded:
                continue
            self._expanded.add(current)
            self.pages.add(current)
            spec = self.content.pages[current]
            for ref in _references(spec):
                if isinstance(ref, PageIdRef | PageLinkRef):
                    if ref.path in self.content.pages:
                        self.pages.add(ref.path)
                        if self.likely_new(ref.path):
                            stack.append((ref.path, False))
                    elif ref.path == "/" or ref.path in self.state.pages:
                        self.lookups.add(ref.path)
                    else:
                        self.problem = (
                            f"{page_named(current)} refers to {ref.path}, which the state does not know "
                            "(only existing_pages names it): finding it takes the tree walk"
                        )
                else:
                    self.add_file(ref.path)
            if gone or self.likely_new(current):
                self.creates = True
                parent = parent_path(current)
                if parent is not None and parent in self.content.pages:
                    self.pages.add(parent)
                    if self.likely_new(parent):
                        stack.append((parent, False))

    def add_file(self, path: str) -> None:
        spec = self.content.files.get(path)
        if spec is None:
            self.problem = f"a reference to file {path}, which the content does not have"
            return
        self.files.add(path)
        if path in self.state.files:
            return
        name = PurePosixPath(path).name
        self.files.update(
            other
            for other, candidate in self.content.files.items()
            if other not in self.state.files
            and PurePosixPath(other).name == name
            and candidate.size == spec.size
            and candidate.folder_id == spec.folder_id
        )

    def likely_new(self, path: str) -> bool:
        return path not in self.state.pages and self.content.pages[path].id is None


def _references(value: object) -> Iterator[Reference]:
    """Every reference anywhere in a content object (a page spec: fields, attributes, blocks, nested values)."""
    if isinstance(value, Text):
        yield from value.references
    elif isinstance(value, BaseModel):
        for item in value.__dict__.values():
            yield from _references(item)
    elif isinstance(value, Mapping):
        for item in value.values():
            yield from _references(item)
    elif isinstance(value, list | tuple):
        for item in value:
            yield from _references(item)
