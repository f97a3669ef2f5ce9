"""Applying page actions (create, update, publish, delete) with a :class:`~cmssync.sync.page_writer.PageWriter`.

A new page is created with its last path segment as its name, because Concrete derives the page's URL from the
name at creation and never changes it afterwards; the real name, description and attributes follow in the draft.
What is written comes from the plan (``Action.page``, ``BlockChange.write``), never from the content.
"""

from __future__ import annotations

import re

from cmssync.api.errors import NotFound, PendingDeletion
from cmssync.api.models import Page
from cmssync.content.paths import page_named, parent_path
from cmssync.errors import ApiError, ApplyError
from cmssync.plan.actions import Action
from cmssync.plan.page_form import DEFAULT_TEMPLATE, DEFAULT_TYPE, DesiredPage, PageForm, render_desired
from cmssync.state.records import PageRecord
from cmssync.sync.engine import ApplyContext, Skipped, create_verified
from cmssync.sync.page_writer import PageWriter
from cmssync.sync.type_defaults import creation_blocks


async def apply_page(action: Action, context: ApplyContext) -> str:
    if action.op == "create":
        return await _create(action, context)
    if action.op in ("update", "publish"):
        return await _update(action, context)
    if action.op == "delete":
        return await _delete(action, context)
    raise Skipped(action.note or "a page move needs --replace-moved")


async def _create(action: Action, context: ApplyContext) -> str:
    path = action.key
    form = _form(action)
    parent = parent_path(path) or "/"
    parent_id = context.page_ids.get(parent)
    if parent_id is None:
        raise ApplyError(f"{page_named(path)}: its parent {parent} does not exist on the site")
    segment = path.rstrip("/").rsplit("/", 1)[-1]
    page = await create_verified(
        lambda: context.client.create_page(
            parent_id=parent_id,
            name=segment,
            type=str(form.fields.get("type") or DEFAULT_TYPE),
            template=str(form.fields.get("template") or DEFAULT_TEMPLATE),
        ),
        lambda: _created_child(context, parent_id, path),
    )
    if page.url_path != path:  # never recorded: the state must not point at a page elsewhere (issue 15)
        raise ApplyError(await _misplaced(context, path, page))
    context.page_ids[path] = page.id
    context.state.record_page(path, PageRecord(id=page.id, live_version_id=page.version.id if page.version else None))
    context.save()
    desired = _desired(context, form, path)  # rendered once the page has its id (a link to itself resolves)
    blocks, sizes = await creation_blocks(context, page.id, form, desired, action.blocks)  # the type's default blocks
    writer = PageWriter(
        context,
        path,
        page.id,
        desired,
        recent_version_id=page.version.id if page.version else None,
        recent_is_draft=False,
        area_sizes=sizes,
    )
    wanted = {change.field for change in action.changes} - {"type", "template", "publish_end_date"}
    await writer.update_fields(form, wanted)
    for change in blocks:
        await writer.block(change)
    return f"created (id {page.id}); " + await writer.finish(form, action)


def _desired(context: ApplyContext, form: PageForm, path: str) -> DesiredPage:
    """The page as the content wants it, rendered once per apply: its digest is recorded with the draft and at the
    end (what the planner compares the record's digest with), its fields and areas become the next base."""
    return render_desired(form, path, context.resolver(strict=False), base_url=context.base_url)


async def _created_child(context: ApplyContext, parent_id: int, path: str) -> Page | None:
    """After an ambiguous create: the child of ``parent_id`` at ``path``, if the create happened."""
    for child in await context.client.page_children(parent_id):
        if child.url_path == path:
            return await context.client.get_page(child.id)
    return None


async def _update(action: Action, context: ApplyContext) -> str:
    path = action.key
    form = _form(action)
    page_id = context.page_ids.get(path)
    if page_id is None:
        raise ApplyError(f"{page_named(path)}: not found on the site")
    live = context.snapshot.pages.get(path)
    writer = PageWriter(
        context,
        path,
        page_id,
        _desired(context, form, path),
        recent_version_id=live.recent_version_id if live else None,
        recent_is_draft=live.has_draft if live else False,
        area_sizes={area: len(blocks) for area, blocks in live.areas.items()} if live else {},
    )
    wanted = {change.field for change in action.changes} - {"publish_end_date"}
    if wanted:
        await writer.update_fields(form, wanted)
    for change in action.blocks:
        await writer.block(change)
    if not writer.writes and action.op == "update" and any(c.field == "publish_end_date" for c in action.changes):
        # Only the end date differs: it is set on the live version directly.
        live_version = live.live_version_id if live else None
        if live_version is not None and form.end_date is not None:
            await context.client.update_page_version(page_id, live_version, publish_end_date=form.end_date)
    return await writer.finish(form, action)


def _form(action: Action) -> PageForm:
    if action.page is None:
        raise ApplyError(
            f"{page_named(action.key)}: the plan does not say what to write (a plan file of an older cmssync?)"
        )
    return action.page


async def _delete(action: Action, context: ApplyContext) -> str:
    record = context.state.pages.get(action.key)
    page_id = int(action.precondition.remote_id or (record.id if record else 0))
    await context.client.delete_page(page_id)
    try:
        page = await context.client.get_page(page_id)
    except (NotFound, PendingDeletion):
        context.state.forget_page(action.key)
        context.save()
        return "deleted (moved to the trash)"
    raise ApplyError(
        f"{page_named(action.key)}: the server answered 'deleted' but the page is still there at {page.url_path} "
        "(Concrete silently refuses to delete some pages, such as the home page)"
    )


async def _misplaced(context: ApplyContext, path: str, page: Page) -> str:
    """A new page that landed at another path: it is not recorded, and the empty page cmssync just made is moved
    to the trash again so that nothing is left at a path nobody asked for; the message says why it happened."""
    try:
        await context.client.delete_page(page.id)
        cleanup = "the duplicate was moved to the trash again"
    except ApiError as exc:
        cleanup = f"moving it to the trash failed ({exc}): delete it in the dashboard"
    return _wrong_path_reason(path, page.url_path, page.id, cleanup)


def _wrong_path_reason(path: str, made: str, page_id: int, cleanup: str) -> str:
    """Why a new page landed elsewhere: ``path-N`` means a page already had the path (Concrete numbers the
    duplicate): a conflict with a page this run did not see; anything else is Concrete's URL rules (it drops words
    such as 'the' from a URL made from a name)."""
    if re.fullmatch(re.escape(path) + r"-\d+", made):
        return (
            f"conflict: {page_named(path)}: a page with this path already exists on the site, so Concrete created a "
            f"duplicate at {made} (id {page_id}); {cleanup}. cmssync did not see that page when it planned: run "
            f"`cmssync plan` to see it, and pin its id in the page file to manage it"
        )
    return (
        f"{page_named(path)}: the site created it at {made} (id {page_id}; Concrete makes the URL from the name and "
        f"drops words such as 'the' or 'of'); {cleanup}. Rename the page file to match, or move the page in the "
        "dashboard"
    )
