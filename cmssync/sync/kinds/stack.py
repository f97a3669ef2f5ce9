"""The stack kind (global areas): ``stacks/`` ↔ the site's stacks, planned and recorded as their pages
(``/!stacks/<handle>``; ``cmssync.plan.kinds.STACK``), applied by ``cmssync.sync.apply_stacks``, pulled by
``cmssync.sync.pull_pages.pull_stacks``."""

from __future__ import annotations

from typing import Any

from cmssync.api.client import ConcreteClient
from cmssync.plan.builtin_kinds import STACK
from cmssync.plan.preconditions import stale_page
from cmssync.sync.apply_stacks import apply_stack
from cmssync.sync.kinds import ManagedKind
from cmssync.sync.pull_pages import pull_stacks


async def _stack_mark(client: ConcreteClient, limit: int, after: Any) -> list[tuple[str, Any]]:
    """A stack is in no list; its recent version moves on every write and ``date_last_updated`` on an approval or a
    page update (``tests/conformance/concrete-9.3.1/stack-feed.jsonl``): one ``GET /pages/{id}?version=recent``."""
    page = await client.get_page(int(after), version="recent")
    return [(str(page.id), (page.date_last_updated, page.version.id if page.version is not None else None))]


KIND = ManagedKind(
    STACK, apply_stack, stale=stale_page, pull=pull_stacks, latest=_stack_mark, latest_every=2, latest_by_id=True
)
