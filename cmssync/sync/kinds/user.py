"""The user kind: ``users.yaml`` ↔ the site's users (planned by ``cmssync.plan.users``, observed by
``cmssync.sync.observe_users``, applied by ``cmssync.sync.apply_assets.apply_user``)."""

from __future__ import annotations

from cmssync.plan.builtin_kinds import USER
from cmssync.plan.preconditions import stale_user
from cmssync.sync.apply_assets import apply_user
from cmssync.sync.kinds import ManagedKind
from cmssync.sync.pull_users import pull_users

KIND = ManagedKind(USER, apply_user, stale=stale_user, pull=pull_users)
