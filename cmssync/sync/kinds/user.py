"""The user kind: ``users.yaml`` ↔ the site's users (planned by ``cmssync.plan.users``, observed by
``cmssync.sync.observe_users``, applied by ``cmssync.sync.apply_assets.apply_user``, pulled by
``cmssync.sync.pull_users.pull_users``)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from cmssync.api.client import ConcreteClient
from cmssync.plan.builtin_kinds import USER
from cmssync.plan.preconditions import stale_user
from cmssync.state.records import UserRecord
from cmssync.sync.apply_assets import apply_user
from cmssync.sync.kinds import ManagedKind, ObserveRun
from cmssync.sync.observe_users import observe_users
from cmssync.sync.pull_users import pull_users


async def _read(run: ObserveRun) -> Mapping[str, Any]:
    """The users the content or the state names (none when neither does, or the scope holds none)."""
    content, state, scope = run.content, run.state, run.scope
    if not (content.users or state.users) or not (scope is None or scope.all_users or scope.users):
        return {"users": {}}
    listed = scope is None or scope.all_users
    return {"users": await observe_users(run.client, state, content.users, run.unreadable, run.ties, listed=listed)}


async def _bind(client: ConcreteClient, number: int) -> tuple[UserRecord, str]:
    user = await client.get_user(number)
    return UserRecord(id=number), f"user {user.username}"


KIND = ManagedKind(USER, apply_user, stale=stale_user, read=_read, pull=pull_users, bind=_bind)
