"""What ``cmssync pull`` records in the state once its files are written: every file, user, group and page it wrote
(or found already holding the site's data) as managed, with the digests the planner computes from the content.

A page's digest and three-way base are computed when its file is staged, from the data written (which loads back as
the same spec: ``tests/content/test_content_roundtrip.py``), unless its desired form looks up a page id — the walk
does not know every page's id yet — in which case it is computed here from the written file as it loads back
(:func:`cmssync.content.loader.load_page`), one page at a time. Either way the whole content is never loaded back (at
10,000 pages that was pull's memory peak). A path bound to the same site object as a pulled one is found through an
index by id, not a scan of every record per object.
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Iterator, Mapping
from dataclasses import replace
from pathlib import Path
from typing import Any

from cmssync.content.lists import list_kind
from cmssync.content.loader import load_page
from cmssync.content.models import PageSpec
from cmssync.content.paths import is_stack_path, page_named
from cmssync.errors import ContentError
from cmssync.plan.asset_forms import file_digest, file_hash
from cmssync.plan.conflicts import page_base
from cmssync.plan.desired import Resolver
from cmssync.plan.page_form import page_form, render_desired
from cmssync.state.records import FileRecord, PageBase, PageRecord, State
from cmssync.sync.pull_writes import Pulled, PulledPage


def staged_form(
    spec: PageSpec, path: str, resolve: Resolver, base_url: str, site: Mapping[str, Any]
) -> tuple[str, PageBase] | None:
    """The digest and base of page ``path`` staged as ``spec`` (``site``: the page's fields as read,
    ``cmssync.plan.conflicts.site_fields``); None when its desired form looks up a page id (known only once the
    walk is done) and for a stack (the loader reads its file as a stack)."""
    if is_stack_path(path):
        return None
    watched, asked = watching(resolve)
    desired = render_desired(page_form(spec), path, watched, base_url=base_url)
    if asked():
        return None
    return desired.digest, page_base(desired.fields, desired.areas, desired.end_date, site)


def watching(resolve: Resolver) -> tuple[Resolver, Callable[[], bool]]:
    """``resolve`` as one that notes whether it was asked a page's id, and how to know it; what it resolves is the
    same (its unresolved references are noted apart)."""
    watched = _Watched(resolve.page_ids)
    return replace(resolve, page_ids=watched, pending=set()), lambda: watched.asked


class _Watched(Mapping[str, int]):
    """A mapping that notes whether it was asked anything."""

    def __init__(self, ids: Mapping[str, int]) -> None:
        self.ids = ids
        self.asked = False

    def __getitem__(self, key: str) -> int:
        self.asked = True
        return self.ids[key]

    def __iter__(self) -> Iterator[str]:
        self.asked = True
        return iter(self.ids)

    def __len__(self) -> int:
        self.asked = True
        return len(self.ids)


class _Bindings:
    """Paths by the site id their record holds, kept as records are written."""

    def __init__(self, records: Mapping[str, FileRecord] | Mapping[str, PageRecord]) -> None:
        self.of = {path: str(record.id).lower() for path, record in records.items()}
        self.paths: dict[str, set[str]] = {}
        for path, key in self.of.items():
            self.paths.setdefault(key, set()).add(path)

    def bind(self, path: str, site_id: object) -> list[str]:
        """Bind ``path`` to ``site_id``; the other paths bound to it, which the caller forgets."""
        key = str(site_id).lower()
        if (old := self.of.get(path)) is not None:
            self.paths[old].discard(path)
        others = sorted(self.paths.get(key, set()) - {path})
        for other in others:
            del self.of[other]
        self.paths[key], self.of[path] = {path}, key
        return others


def record_pulled(root: Path, state: State, base_url: str, result: Pulled, kinds: Collection[str] = ()) -> None:
    """Record what was written (or already held) as managed; a kept local edit leaves its record as it was. The
    records a kind's pull hook handed back (``result.records``; of ``kinds``, the run's) are recorded when none of
    its files was kept (a list kind's: its list file)."""
    for kind, records in result.records.items():
        listed = list_kind(kind)  # a list kind's records: recorded when its list file was written
        if kind in kinds and not result.settled.not_written(listed.plural if listed is not None else kind):
            for key, kind_record in records.items():
                state.record(kind, key, kind_record)
    kept_files = result.settled.not_written("file") | result.settled.not_written("sidecar") | set(result.local_files)
    files = _Bindings(state.files)
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
        for other in files.bind(path, record.id):
            state.forget_file(other)
            result.notes.append(f"file {other}: bound to the same site file as {path}; that binding is dropped")
        state.record_file(path, record)
    if not result.settled.not_written("users"):
        for username, user_record in result.user_records.items():
            known = state.users.get(username)
            if known is not None and known.id == user_record.id:  # its password digest stays (pull reads none)
                user_record = known.model_copy(update={"digest": user_record.digest})
            state.record_user(username, user_record)
    # Pages and stacks kept as local edits keep the record they have.
    kept_pages = result.settled.not_written("page") | result.settled.not_written("stack") | set(result.local_edits)
    pages = {path: read for path, read in result.pages.items() if path not in kept_pages}
    if pages:
        _record_pages(root, state, base_url, result, pages)


def _record_pages(root: Path, state: State, base_url: str, result: Pulled, pages: Mapping[str, PulledPage]) -> None:
    resolve = result.resolver or Resolver(
        file_urls={path: file.url or "" for path, (file, _spec) in result.files.items()},
        file_ids={p: f.id for p, (f, _) in result.files.items()},
        page_ids=result.page_ids,
        strict=False,
    )
    bindings = _Bindings(state.pages)
    targets = {staged.key: staged.target for staged in result.staged if staged.kind in ("page", "stack")}
    for path, page in pages.items():
        form = page.form
        if form is None:
            try:
                spec = load_page(root, path, targets[path], result.values)
            except ContentError:
                continue  # not recorded: the next plan shows the file's problem
            desired = render_desired(page_form(spec), path, resolve, base_url=base_url)
            form = desired.digest, page_base(desired.fields, desired.areas, desired.end_date, page.site)
        digest, base = form  # the base is the three-way base: site == content
        version = page.live_version_id
        page_record = PageRecord(id=page.id, digest=digest, live_version_id=version, base=base)
        recorded = state.pages.get(path)
        if recorded is not None and recorded.id == page.id:  # what pull does not read (a draft cmssync started) stays
            page_record = recorded.model_copy(update={"digest": digest, "live_version_id": version, "base": base})
        for other in bindings.bind(path, page.id):
            state.forget_page(other)
            result.notes.append(f"{page_named(other)}: bound to the same site page as {path}; that binding is dropped")
        state.record_page(path, page_record)
