"""The drift policy: what becomes of an editor's approved change to what the content did not change since the last
sync (issue 34).

Pure. The three-way comparison (:func:`cmssync.plan.conflicts.find_conflicts`) tells, per field, area or block,
whether only the site changed it since the base (what cmssync last applied or pulled). Such a change is settled by
the first that names it of: the page file's ``on_drift`` (a policy, or field → policy with ``*`` for the others),
the first matching rule of ``drift.rules`` in ``cmssync.yaml`` (``match: "page:/blog/*"``, optional ``fields``, as
``conflicts.rules``), then ``drift`` (``drift.policy``), default ``propose``:

* ``propose`` — nothing is written over it: its change is taken out of the page's update and listed as a
  :class:`~cmssync.plan.actions.SiteChange` (from the content's value to the site's) to bring back into the content
  (``pull``; a merged proposal). The fields the content changed are still written; a field both changed stays a
  conflict. The base keeps the content's value for it (``applied_base``), so every run lists it until the content
  takes the site's value; then the plan is empty and the next apply records the site's version as the base.
* ``adopt`` — the same in the plan; ``apply`` then writes the page's site changes into the content directory
  (``cmssync.sync.adopt``).
* ``revert`` — the content wins: the change stays in the update ("changed outside cmssync"), as before issue 34.

``--force`` settles conflicts only; it never reverts a site change (``CMSSYNC_DRIFT=revert`` does, for one run).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from cmssync.config import DriftPolicy, DriftRule
from cmssync.plan.actions import (
    Action,
    BlockChange,
    BlockOperation,
    FieldChange,
    Kind,
    SiteChange,
    SiteChangeAction,
)
from cmssync.plan.conflicts import AREA_PREFIX, ThreeWay, first_rule, own_choice

_INVERSE: dict[str, BlockOperation] = {"add": "delete", "delete": "add", "update": "update"}


@dataclass(frozen=True)
class DriftPolicies:
    """Which policy settles an editor's change: the page file's ``on_drift``, then the first matching rule of
    ``drift.rules``, then ``drift`` (``drift.policy``)."""

    default: DriftPolicy = "propose"
    rules: tuple[DriftRule, ...] = ()

    def resolve(
        self, kind: Kind, key: str, field: str, own: DriftPolicy | Mapping[str, DriftPolicy] | None = None
    ) -> DriftPolicy:
        rule = first_rule(self.rules, kind, key, field)
        return own_choice(own, field) or (rule.policy if rule is not None else self.default)


@dataclass(frozen=True)
class Kept:
    action: Action | None
    """The update left to write (the content's changes, reverted site changes), or None: nothing left."""
    site_changes: tuple[SiteChange, ...]


def keep_site_changes(
    action: Action,
    found: ThreeWay,
    policies: DriftPolicies,
    own: DriftPolicy | Mapping[str, DriftPolicy] | None,
    live_version_id: int | None,
    *,
    areas_owned: bool = False,
) -> Kept:
    """Take the site's changes the policy keeps out of ``action`` and list them (see the module docstring). Areas
    the content owns (``areas: owned``, a page's ``areas_owned: true``) are the content's: their site changes are
    reverted whatever the policy."""
    kind, key = action.kind, action.key
    fields: dict[SiteChangeAction, list[FieldChange]] = {"propose": [], "adopt": []}
    blocks: dict[SiteChangeAction, list[BlockChange]] = {"propose": [], "adopt": []}
    writes: list[FieldChange] = []
    block_writes: list[BlockChange] = []
    reverted = False
    for change in action.changes:
        policy = policies.resolve(kind, key, change.field, own) if change.field in found.site_fields else None
        if policy == "propose" or policy == "adopt":
            fields[policy].append(FieldChange(field=change.field, before=change.after, after=change.before))
            continue
        reverted = reverted or policy == "revert"
        writes.append(change)
    for block in action.blocks:
        name = AREA_PREFIX + block.area
        site_only = name in found.site_fields or block.live_position in found.site_blocks.get(block.area, ())
        policy = ("revert" if areas_owned else policies.resolve(kind, key, name, own)) if site_only else None
        if policy == "propose" or policy == "adopt":
            blocks[policy].append(_from_content(block))
            continue
        reverted = reverted or policy == "revert"
        block_writes.append(block)
    kept = tuple(
        SiteChange(
            kind=kind,
            key=key,
            action=policy,
            changes=tuple(fields[policy]),
            blocks=tuple(blocks[policy]),
            live_version_id=live_version_id,
        )
        for policy in ("propose", "adopt")
        if fields[policy] or blocks[policy]
    )
    if not kept:  # every site change reverted (or none): as before issue 34
        drift = action.drift or (found.site_changed and not found.conflicts)
        return Kept(action.model_copy(update={"drift": drift}), ())
    if not writes and not block_writes:
        return Kept(None, kept)
    left = action.model_copy(update={"changes": tuple(writes), "blocks": tuple(block_writes), "drift": reverted})
    return Kept(left, kept)


def _from_content(block: BlockChange) -> BlockChange:
    """A planned block change turned round: from what the content says to what the site holds."""
    return block.model_copy(
        update={"op": _INVERSE[block.op], "before": block.after, "after": block.before, "write": None}
    )
