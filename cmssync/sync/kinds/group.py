"""The group kind: ``groups.yaml`` ↔ the site's groups (planned by ``cmssync.plan.groups``, observed by
``cmssync.sync.observe_groups``, applied by ``cmssync.sync.apply_assets.apply_group``)."""

from __future__ import annotations

from cmssync.plan.builtin_kinds import GROUP
from cmssync.plan.preconditions import stale_group
from cmssync.sync.apply_assets import apply_group
from cmssync.sync.kinds import ManagedKind
from cmssync.sync.pull_users import pull_groups

KIND = ManagedKind(GROUP, apply_group, stale=stale_group, pull=pull_groups)
