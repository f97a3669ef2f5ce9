"""The group kind: ``groups.yaml`` ↔ the site's groups (planned by ``cmssync.plan.groups``, applied by
``cmssync.sync.apply_assets.apply_group``, pulled by ``cmssync.sync.pull_users.pull_groups``).

Observed from the whole group list (only the list shows a group by name; groups are few, so the list is read whole
whenever the content or the state names a group or a user: groups matter to the content's users, memberships).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from cmssync.api.client import ConcreteClient
from cmssync.plan.builtin_kinds import GROUP
from cmssync.plan.preconditions import stale_group
from cmssync.plan.snapshot import LiveGroup
from cmssync.sync.apply_assets import apply_group
from cmssync.sync.kinds import ManagedKind, ObserveRun
from cmssync.sync.pull_users import pull_groups


async def observe_groups(client: ConcreteClient) -> dict[str, LiveGroup]:
    """The site's groups, keyed by name."""
    return {group.name or "": LiveGroup(group.id, group.name or "") async for group in client.iter_groups()}


async def _read(run: ObserveRun) -> Mapping[str, Any]:
    content, state, scope = run.content, run.state, run.scope
    wanted = bool(content.groups or state.groups or content.users) and (scope is None or scope.all_groups)
    return {"groups": await observe_groups(run.client) if wanted else {}}


KIND = ManagedKind(GROUP, apply_group, stale=stale_group, read=_read, pull=pull_groups)
