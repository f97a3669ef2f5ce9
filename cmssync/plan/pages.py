"""Planning one page: create, update (fields, attributes, managed areas), publish a pending draft, or move.

Pure. A page is compared in its recent version (design.md §5). Block changes come from the optimal area alignment
(``cmssync.plan.blocks``); a page whose content is exactly what cmssync last applied but whose site differs is
marked as drift. The API cannot change a page's parent, so a page whose file moved is a ``move`` action that
explains the limit, unless the run asks for ``--replace-moved`` (create the new page, then delete the old one).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from dataclasses import dataclass, field
from functools import cached_property
from typing import Any

from cmssync.config import ForeignDraftPolicy
from cmssync.content.blocktypes import block_type
from cmssync.content.paths import dropped_words, is_stack_path, page_named, page_object, parent_path
from cmssync.content.site import SiteContent
from cmssync.plan.actions import (
    Action,
    BlockChange,
    DraftInfo,
    FieldChange,
    HeldObject,
    Precondition,
    Rebase,
    SiteAdditions,
)
from cmssync.plan.additions import without_additions
from cmssync.plan.block_changes import alignment_changes, desired_change
from cmssync.plan.blocks import AlignmentError, align_area, honourable
from cmssync.plan.conflicts import PageSides, ThreeWay, applied_base, find_conflicts, settle
from cmssync.plan.desired import Resolver, attribute_matches
from cmssync.plan.drift import keep_site_changes
from cmssync.plan.ignore import page_ignore, visible_desired_areas, visible_live_page
from cmssync.plan.kinds import KindPlan, PlanOptions
from cmssync.plan.page_form import DEFAULT_TEMPLATE, DEFAULT_TYPE, DesiredPage, PageForm, page_form, render_desired
from cmssync.plan.page_identity import identity_conflict, move_actions, moved_from, pinned_move
from cmssync.plan.snapshot import LivePage, Snapshot
from cmssync.plan.stacks import stack_warnings
from cmssync.plan.subareas import writable_areas
from cmssync.state.records import State


@dataclass(frozen=True)
class PageContext:
    """What the page kind plans with: the content, the site observed, the state, the run's options (publish mode,
    base URL, conflict and drift policies, ignore rules, protected pages, ``--replace-moved``, ``areas: owned``), and
    what the files' plan says of the files the pages reference."""

    content: SiteContent
    observed: Snapshot
    state: State
    options: PlanOptions
    file_urls: Mapping[str, str]
    file_ids: Mapping[str, str]
    changing_files: frozenset[str]

    def protected(self, path: str) -> bool:
        """A page never deleted or replaced: ``protect: true`` in its file or its record, or ``protect.pages``."""
        spec = self.content.pages.get(path)
        record = self.state.pages.get(path)
        return (
            path == "/"
            or is_stack_path(path)
            or path in self.options.protect_pages
            or (spec is not None and spec.protect)
            or (record is not None and record.protected)
        )

    def owns_areas(self, path: str) -> bool:
        """Whether the content owns the page's managed areas (``areas_owned`` in its file, else ``areas: owned``)."""
        spec = self.content.pages[path]
        return spec.areas_owned if spec.areas_owned is not None else self.options.areas_owned

    def resolver(self) -> Resolver:
        return Resolver(file_urls=self.file_urls, file_ids=self.file_ids, page_ids=self._page_ids)

    @cached_property
    def _page_ids(self) -> Mapping[str, int]:
        """Built once per context (it was rebuilt for every planned page: quadratic in the site's size)."""
        return {path: page.id for path, page in self.observed.pages.items()}


@dataclass
class PageResult(KindPlan):
    """The page kind's plan, and the live paths its moves leave (``moved_from``: never delete candidates)."""

    moved_from: set[str] = field(default_factory=set)


def desired_page(path: str, context: PageContext, form: PageForm | None = None) -> DesiredPage:
    form = form if form is not None else page_form(context.content.pages[path])
    return render_desired(form, path, context.resolver(), base_url=context.options.base_url)


def plan_pages(context: PageContext, warnings: list[str]) -> PageResult:
    """The page kind's plan: every content page and stack, parents first (a new page needs its parent's id)."""
    result = PageResult()
    for path in sorted(context.content.pages, key=depth_then_path):
        plan_page(path, context, warnings, result)
    return result


def depth_then_path(path: str) -> tuple[int, str]:
    return (0 if path == "/" else path.count("/"), path)


def plan_page(path: str, context: PageContext, warnings: list[str], result: PageResult) -> None:
    """The actions, conflicts and held objects of the page at ``path`` (a content page or stack), into ``result``."""
    spec = context.content.pages[path]
    form = page_form(spec)
    desired = desired_page(path, context, form)
    observed = context.observed
    live = observed.pages_by_id.get(spec.id) if spec.id is not None else observed.pages.get(path)
    if spec.id is not None and live is None:
        why = "; a stack cannot be created through the API" if is_stack_path(path) else ""
        named = page_named(path)
        warnings.append(f"{named}: pinned id {spec.id} does not exist on the site{why}; nothing planned for it")
        return
    conflict = identity_conflict(path, live, context.state, observed) if spec.id is None else None
    if conflict is not None:
        warnings.append(conflict)
        return
    if live is not None and live.path != path:
        result.actions.append(pinned_move(path, live))
        result.moved_from.add(live.path)
        return
    if live is None:
        moved = moved_from(path, desired.digest, context.content, context.state, observed)
        if moved is not None:
            protected, replace = context.protected(moved.path), context.options.replace_moved
            create = _create(path, desired, form, context, []) if replace and not protected else None
            actions = move_actions(path, moved, replace_moved=replace, protected=protected, create=create)
            result.actions.extend(actions)
            result.moved_from.add(moved.path)
            return
        create = _create(path, desired, form, context, warnings)
        if create is not None:
            result.actions.append(create)
        return
    update = _update(path, live, desired, form, context, warnings, result)
    if update is not None:
        result.actions.append(update)


def page_deletes(context: PageContext, moved_from: set[str], warnings: list[str]) -> list[Action]:
    """The deletes of the managed pages the content no longer has (and did not move), children first; a protected
    page is said and kept."""
    content, observed, state = context.content, context.observed, context.state
    deletes: list[Action] = []
    for path, record in sorted(state.pages.items(), key=lambda item: depth_then_path(item[0]), reverse=True):
        live = observed.pages.get(path)
        if path in content.pages or path in moved_from or live is None or live.id != record.id:
            continue  # kept, moved, or already gone (or replaced by another page at that path): nothing to delete
        if context.protected(path) or live.id == observed.home_page_id or observed.trees.is_home(path):
            warnings.append(f"{page_named(path)} is protected and will not be deleted")
            continue
        children = tuple(f"page:{p}" for p in sorted(state.pages) if parent_path(p) == path and p not in content.pages)
        precondition = Precondition(remote_id=str(live.id), live_version_id=live.live_version_id)
        deletes.append(Action(kind="page", key=path, op="delete", precondition=precondition, depends_on=children))
    return deletes


def _create(
    path: str, desired: DesiredPage, form: PageForm, context: PageContext, warnings: list[str]
) -> Action | None:
    parent = parent_path(path)
    depends = set(desired.depends_on)
    if parent is not None and parent not in context.observed.pages:
        if parent not in context.content.pages:
            warnings.append(f"{page_named(path)}: its parent {parent} does not exist on the site; it cannot be created")
            return None
        depends.add(f"page:{parent}")
    dropped = dropped_words(path.rsplit("/", 1)[-1])
    if dropped:
        warnings.append(
            f"{page_named(path)}: it does not exist on the site, and Concrete leaves the word {dropped[0]!r} out of "
            "the URLs it makes, so cmssync cannot create it at this path; rename the page file"
        )
        return None
    kept = [b.keep_id for blocks in desired.areas.values() for b in blocks if b.keep_id is not None]
    if kept:
        warnings.append(
            f"{page_named(path)}: it does not exist on the site, so its kept blocks ({', '.join(map(str, kept))}) "
            "cannot be re-created; it is created without them"
        )
    fields = {"type": DEFAULT_TYPE, "template": DEFAULT_TEMPLATE, **desired.fields}
    changes = [FieldChange(field=name, after=value) for name, value in fields.items()]
    if desired.end_date is not None:
        changes.append(FieldChange(field="publish_end_date", after=desired.end_date))
    blocks = [
        desired_change(area, block)
        for area, area_blocks in desired.areas.items()
        for block in area_blocks
        if block.keep_id is None
    ]
    record = context.state.pages.get(path)
    note = "managed before, but deleted outside cmssync" if record is not None else None
    return Action(
        kind="page",
        key=path,
        op="create",
        changes=tuple(changes),
        blocks=tuple(blocks),
        depends_on=tuple(sorted(depends)),
        precondition=Precondition(absent=True),
        drift=record is not None,
        note=note,
        page=form,
    )


@dataclass(frozen=True)
class _Compared:
    """One page as the update compares it: the site and the content with ignored parts hidden from both sides,
    the changes between them, and whether the page's pending draft is cmssync's own."""

    path: str
    kind: str
    key: str
    live: LivePage
    seen: LivePage
    desired: DesiredPage
    wanted: DesiredPage
    form: PageForm
    changes: list[FieldChange]
    blocks: list[BlockChange]
    ours: bool
    additions: list[SiteAdditions]
    """Blocks an editor added to areas cmssync does not own: set aside, reported."""

    @property
    def changed(self) -> bool:
        return bool(self.changes or self.blocks)

    def precondition(self) -> Precondition:
        return Precondition(remote_id=str(self.live.id), live_version_id=self.live.live_version_id)


def _update(
    path: str,
    live: LivePage,
    desired: DesiredPage,
    form: PageForm,
    context: PageContext,
    warnings: list[str],
    result: PageResult,
) -> Action | None:
    spec = context.content.pages[path]
    page = _compare(path, live, desired, form, context, warnings)
    result.additions.extend(page.additions)
    note = None
    if live.has_draft and not page.ours:
        note, held = _foreign_draft(page, spec.on_foreign_draft or context.options.on_foreign_draft, warnings)
        if held is not None:
            result.held.append(held)
            return None
    warnings += stack_warnings(path, spec.name, live, changes=page.changed, draft=context.options.publish == "draft")
    if page.changed:
        return _changed(page, context, note, result)
    rebase = _caught_up(page, context)
    if rebase is not None:
        result.rebase.append(rebase)
    if context.options.publish == "approve" and live.has_draft:
        if page.ours:
            return Action(
                kind=page.kind,
                key=page.key,
                op="publish",
                precondition=page.precondition(),
                page=form,
                note=f"approve the draft (version {live.recent_version_id}) left by an interrupted run",
            )
        warnings.append(f"{page_named(path)}: {note}; left as it is")
    return None


def _compare(
    path: str, live: LivePage, desired: DesiredPage, form: PageForm, context: PageContext, warnings: list[str]
) -> _Compared:
    """Hide what the ignore rules hide, keep the areas cmssync may write, set aside an editor's additions (areas not
    owned), and compute the field and block changes."""
    spec = context.content.pages[path]
    kind, key = page_object(path)  # a stack is its own kind in the plan
    rules = page_ignore(path, spec.ignore, context.options.ignore_rules)  # cmssync.plan.ignore: hidden from both sides
    seen = visible_live_page(live, rules)
    wanted = desired
    if rules:  # most pages have no ignore rule: nothing to hide, nothing to copy
        wanted = dataclasses.replace(
            desired,
            fields={name: value for name, value in desired.fields.items() if not rules.ignores_field(name)},
            areas=visible_desired_areas(desired.areas, rules),
            end_date=None if rules.ignores_field("publish_end_date") else desired.end_date,
        )
    record = context.state.pages.get(path)
    base = record.base if record is not None else None
    known = set(base.areas) if base is not None else set()
    wanted = dataclasses.replace(wanted, areas=writable_areas(path, wanted.areas, seen, known, warnings))
    draft_id = record.draft_version_id if record is not None else None
    ours = draft_id is not None and draft_id == live.recent_version_id
    added: list[SiteAdditions] = []
    if not context.owns_areas(path) and base is not None:
        # in cmssync's own draft only the blocks it started from can be an editor's; the rest are its own writes
        started = record.draft_from if ours and record is not None else None
        seen, added = without_additions(path, seen, wanted.areas, base, started)
    changes = _field_changes(path, seen, wanted, warnings)
    blocks = _block_changes(path, seen, wanted, warnings)
    return _Compared(path, kind, key, live, seen, desired, wanted, form, changes, blocks, ours, added)


def _foreign_draft(page: _Compared, policy: ForeignDraftPolicy, warnings: list[str]) -> tuple[str, HeldObject | None]:
    """The note on a page with someone else's pending draft, and the page held if it has changes and the policy
    does not merge them into that draft."""
    assert page.live.recent_version_id is not None
    draft = DraftInfo(version_id=page.live.recent_version_id, created=page.live.recent_version_created)
    note = f"the page has an {draft.describe()}, not made by cmssync"
    if not page.changed:
        return note, None
    if policy == "merge":
        warnings.append(f"{page_named(page.path)}: changes go into its pending draft (on_foreign_draft: merge)")
        return note, None
    changes, blocks = tuple(page.changes), tuple(page.blocks)
    action = Action(kind=page.kind, key=page.key, op="update", changes=changes, blocks=blocks, note=note)
    verb = "refused" if policy == "fail" else "skipped"
    message = (
        f"{verb}: the page has an {draft.describe()}; cmssync neither writes into nor approves someone "
        "else's draft (on_foreign_draft: merge to do so; approve or delete the draft on the site)"
    )
    held = HeldObject(
        kind=page.kind,
        key=page.key,
        reason="foreign_draft",
        message=message,
        fails=policy == "fail",
        draft=draft,
        action=action,
    )
    return note, held


def _changed(page: _Compared, context: PageContext, note: str | None, result: PageResult) -> Action | None:
    """The update of a page with changes, its conflicts with the site's changes settled by the conflict policy."""
    record = context.state.pages.get(page.path)
    spec = context.content.pages[page.path]
    if context.options.publish == "draft":
        note = (note + "; " if note else "") + "left as an unapproved draft for review"
    action = Action(
        kind=page.kind,
        key=page.key,
        op="update",
        changes=tuple(page.changes),
        blocks=tuple(page.blocks),
        depends_on=tuple(sorted(page.desired.depends_on)),
        precondition=page.precondition(),
        drift=record is not None and record.digest == page.desired.digest,
        note=note,
        page=page.form,
    )
    if record is None:
        return action
    sides = PageSides(page.kind, page.key, page.seen, record, page.desired.digest, page.wanted.areas)
    found = find_conflicts(sides, page.changes, page.blocks)
    if page.ours and record.draft_target == page.desired.digest:
        # The pending draft is cmssync's own, left half written by a run aiming at this very content: what
        # differs from the base there is its own writes, not a change made on the site (issue 29 item 3).
        found = ThreeWay()
    kept = keep_site_changes(
        action,
        found,
        context.options.drift,
        spec.on_drift,
        page.live.live_version_id,
        areas_owned=context.owns_areas(page.path),
    )
    result.site_changes.extend(kept.site_changes)
    if kept.action is None:
        return None
    settled = settle(kept.action, found.conflicts, context.options.conflicts, spec.on_conflict)
    result.conflicts.extend(settled.conflicts)
    if settled.held is not None:
        result.held.append(settled.held)
    return settled.action


def _caught_up(page: _Compared, context: PageContext) -> Rebase | None:
    """A page with nothing to write whose content changed since cmssync last applied or pulled it: the content took
    the site's values (a merged proposal), so the site's version becomes its base once applied; None otherwise."""
    record = context.state.pages.get(page.path)
    if record is None or record.digest is None or record.digest == page.desired.digest:
        return None
    if page.live.has_draft and not page.ours:
        return None  # compared with someone else's unapproved draft: no base of that
    desired = page.desired
    nothing = Action(kind=page.kind, key=page.key, op="update")  # nothing written: where the site differs (an
    # ignored field), the old base stays
    base = applied_base(record.base, desired.fields, desired.areas, desired.end_date, nothing, page.live)
    return Rebase(
        kind=page.kind, key=page.key, digest=desired.digest, base=base, live_version_id=page.live.live_version_id
    )


def _field_changes(path: str, live: LivePage, desired: DesiredPage, warnings: list[str]) -> list[FieldChange]:
    changes: list[FieldChange] = []
    for name, value in desired.fields.items():
        before = live.field(name)
        if not name.startswith("attributes."):
            if before != value:
                changes.append(FieldChange(field=name, before=before, after=value))
            continue
        handle = name.removeprefix("attributes.")
        kind = live.attribute_type(handle)
        if attribute_matches(value, before, kind):
            continue
        if kind == "select" and not _all_ints(value):
            warnings.append(
                f"{page_named(path)}: attribute {handle} is a select attribute; the API sets it by option id, "
                f"so write the option ids (numbers) to manage it"
            )
            continue
        changes.append(FieldChange(field=name, before=before, after=value))
    if desired.end_date is not None and desired.end_date != live.publish_end_date:
        changes.append(FieldChange(field="publish_end_date", before=live.publish_end_date, after=desired.end_date))
    return changes


def _all_ints(value: Any) -> bool:
    items = value if isinstance(value, list) else [value]
    return all(isinstance(item, int) and not isinstance(item, bool) for item in items)


def _block_changes(path: str, live: LivePage, desired: DesiredPage, warnings: list[str]) -> list[BlockChange]:
    changes: list[BlockChange] = []
    for area, wanted in desired.areas.items():
        live_blocks = live.blocks(area)
        types = {block.id: block.type for block in live_blocks}
        honoured = honourable(path, area, wanted, types, warnings)
        try:
            alignment = align_area(live_blocks, honoured)
        except AlignmentError as exc:
            warnings.append(f"{page_named(path)}, area {area}: {exc}; nothing planned for this area")
            continue
        found = alignment_changes(area, live_blocks, honoured, alignment)
        for change in found:
            declared = block_type(change.block_type) if change.op == "delete" else None
            if declared is not None and declared.holds_areas:
                warnings.append(
                    f"{page_named(path)}, area {area}: deleting {change.block_type} block {change.block_id} through "
                    "the API leaves the blocks of its sub-areas behind (no longer shown, still in the page); remove "
                    "them in the page editor if they should go"
                )
        changes += found
    return changes
