"""Applying a stack (``stack:<handle>`` in plans): a stack is a page of the site at ``/!stacks/<handle>``
(``cmssync.content.paths.page_object``), written in a draft and approved like a page, and recorded in the state as
that page, so states written before stacks were a kind of their own read unchanged. Only its areas are managed; it
is never created, moved or deleted (``cmssync.plan.stacks`` says what the plan says of stacks only)."""

from __future__ import annotations

from cmssync.content.paths import STACKS_PREFIX
from cmssync.plan.actions import Action
from cmssync.sync.apply_pages import apply_page
from cmssync.sync.engine import ApplyContext


async def apply_stack(action: Action, context: ApplyContext) -> str:
    return await apply_page(action.model_copy(update={"kind": "page", "key": STACKS_PREFIX + action.key}), context)
