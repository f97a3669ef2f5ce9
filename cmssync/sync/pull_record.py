"""What ``cmssync pull`` records in the state once its files are written: every file, user, group and page it wrote
(or found already holding the site's data) as managed, with the digests the planner computes from the content.

Page digests come from each written file as it loads back (:func:`cmssync.content.loader.load_page`), one page at a
time: the whole content is never held (at 10,000 pages loading it back was pull's memory peak), and a page bound
to the same site page under another path is found through an index by id, not a scan of every record per page.
"""

from __future__ import annotations

from pathlib import Path

from cmssync.content.loader import load_page
from cmssync.errors import ContentError
from cmssync.plan.asset_forms import file_digest, file_hash
from cmssync.plan.conflicts import page_base
from cmssync.plan.desired import Resolver
from cmssync.plan.page_form import page_form, render_desired
from cmssync.state.records import FileRecord, PageRecord, State
from cmssync.sync.pull_writes import Pulled


def record_pulled(root: Path, state: State, base_url: str, result: Pulled) -> None:
    """Record what was written (or already held) as managed; a kept local edit leaves its record as it was."""
    kept_files = result.settled.not_written("file") | result.settled.not_written("sidecar") | set(result.local_files)
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
        for other in [p for p, r in state.files.items() if p != path and str(r.id).lower() == record.id]:
            state.forget_file(other)
            result.notes.append(f"file {other}: bound to the same site file as {path}; that binding is dropped")
        state.record_file(path, record)
    if not result.settled.not_written("users"):
        for username, user_record in result.user_records.items():
            known = state.users.get(username)
            if known is not None and known.id == user_record.id:  # its password digest stays (pull reads none)
                user_record = known.model_copy(update={"digest": user_record.digest})
            state.record_user(username, user_record)
    if not result.settled.not_written("groups"):
        for name, group_record in result.group_records.items():
            state.record_group(name, group_record)
    # Pages and stacks kept as local edits keep the record they have.
    kept_pages = result.settled.not_written("page") | result.settled.not_written("stack") | set(result.local_edits)
    pages = {path: read for path, read in result.pages.items() if path not in kept_pages}
    if not pages:
        return
    file_urls = {path: file.url or "" for path, (file, _spec) in result.files.items()}
    resolve = Resolver(
        file_urls=file_urls,
        file_ids={p: f.id for p, (f, _) in result.files.items()},
        page_ids=result.page_ids,
        strict=False,
    )
    bound: dict[int, set[str]] = {}  # page id -> paths whose record holds it (one pass, not one per page)
    for held, held_record in state.pages.items():
        bound.setdefault(held_record.id, set()).add(held)
    targets = {staged.key: staged.target for staged in result.staged if staged.kind in ("page", "stack")}
    for path, page in pages.items():
        # Recorded from each file as it loads back, one at a time (the whole content is never held), so digests
        # are exactly what the planner computes.
        try:
            spec = load_page(root, path, targets[path])
        except ContentError:
            continue  # not recorded: the next plan shows the file's problem
        desired = render_desired(page_form(spec), path, resolve, base_url=base_url)
        version = page.live_version_id
        base = page_base(desired.fields, desired.areas, desired.end_date)  # the three-way base: site == content
        page_record = PageRecord(id=page.id, digest=desired.digest, live_version_id=version, base=base)
        recorded = state.pages.get(path)
        if recorded is not None and recorded.id == page.id:  # what pull does not read (a draft cmssync started) stays
            page_record = recorded.model_copy(
                update={"digest": desired.digest, "live_version_id": version, "base": base}
            )
        for other in sorted(bound.get(page.id, set()) - {path}):
            state.forget_page(other)
            bound[page.id].discard(other)
            result.notes.append(f"page {other}: bound to the same site page as {path}; that binding is dropped")
        if recorded is not None and recorded.id != page.id:
            bound[recorded.id].discard(path)
        bound.setdefault(page.id, set()).add(path)
        state.record_page(path, page_record)
