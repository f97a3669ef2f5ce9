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
from dataclasses import dataclass, field

from cmssync.config import DriftPolicy, DriftRule
from cmssync.plan.actions import (
    Action,
    BlockChange,
    BlockOperation,
    FieldChange,
    FieldConflict,
    HeldObject,
    Kind,
    Rebase,
    SiteChange,
    SiteChangeAction,
)
from cmssync.plan.asset_conflicts import Sides
from cmssync.plan.conflicts import AREA_PREFIX, ConflictPolicies, ThreeWay, first_rule, own_choice, settle

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
    adopts: bool = True,
) -> Kept:
    """Take the site's changes the policy keeps out of ``action`` and list them (see the module docstring). Areas
    the content owns (``areas: owned``, a page's ``areas_owned: true``) are the content's: their site changes are
    reverted whatever the policy. Where the kind's changes cannot be written into the content (not ``adopts``),
    ``adopt`` proposes them."""
    kind, key = action.kind, action.key
    fields: dict[SiteChangeAction, list[FieldChange]] = {"propose": [], "adopt": []}
    blocks: dict[SiteChangeAction, list[BlockChange]] = {"propose": [], "adopt": []}
    writes: list[FieldChange] = []
    block_writes: list[BlockChange] = []
    reverted = False
    for change in action.changes:
        policy = _field_policy(action, change, found, policies, own, adopts=adopts)
        if policy == "propose" or policy == "adopt":
            fields[policy].append(FieldChange(field=change.field, before=change.after, after=change.before))
            continue
        reverted = reverted or policy == "revert"
        writes.append(change)
    for block in action.blocks:
        policy = _block_policy(action, block, found, policies, own, areas_owned=areas_owned)
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


def _field_policy(
    action: Action,
    change: FieldChange,
    found: ThreeWay,
    policies: DriftPolicies,
    own: DriftPolicy | Mapping[str, DriftPolicy] | None,
    *,
    adopts: bool,
) -> DriftPolicy | None:
    """The policy that settles a field's change, or None: the site did not change the field alone. ``adopt`` is
    ``propose`` where the kind's changes cannot be written into the content (not ``adopts``)."""
    if change.field not in found.site_fields:
        return None
    policy = policies.resolve(action.kind, action.key, change.field, own)
    return "propose" if policy == "adopt" and not adopts else policy


def _block_policy(
    action: Action,
    block: BlockChange,
    found: ThreeWay,
    policies: DriftPolicies,
    own: DriftPolicy | Mapping[str, DriftPolicy] | None,
    *,
    areas_owned: bool,
) -> DriftPolicy | None:
    """The policy that settles a block's change, or None: neither its area nor the block is the site's change
    alone. An area the content owns reverts it, whatever the policy."""
    name = AREA_PREFIX + block.area
    if name not in found.site_fields and block.live_position not in found.site_blocks.get(block.area, ()):
        return None
    return "revert" if areas_owned else policies.resolve(action.kind, action.key, name, own)


def _from_content(block: BlockChange) -> BlockChange:
    """A planned block change turned round: from what the content says to what the site holds."""
    return block.model_copy(
        update={"op": _INVERSE[block.op], "before": block.after, "after": block.before, "write": None}
    )


@dataclass
class Settling:
    """Users' and files' three-way comparisons (``cmssync.plan.asset_conflicts``) settled and collected: the fields
    only the site changed by the drift policy, as a page's (:func:`keep_site_changes`: ``propose`` lists them and
    writes them not; ``revert`` writes over them), then the conflicts by the conflict policies; and the objects
    whose content caught up with the site (:meth:`caught_up`), whose digest apply records.

    ``adopt`` proposes a user's or file's change: pull writes ``users.yaml`` and the sidecars kind by kind, all of a
    kind's managed objects at once, not one object's change (``cmssync.sync.adopt`` pulls pages by path), so it is
    listed as a site change to bring back, and said in ``warnings``."""

    policies: ConflictPolicies = field(default_factory=ConflictPolicies)
    drift: DriftPolicies = field(default_factory=DriftPolicies)
    warnings: list[str] = field(default_factory=list)
    conflicts: list[FieldConflict] = field(default_factory=list)
    held: list[HeldObject] = field(default_factory=list)
    site_changes: list[SiteChange] = field(default_factory=list)
    rebase: list[Rebase] = field(default_factory=list)

    def settle(self, action: Action, sides: Sides) -> Action | None:
        """The action to plan (site changes the drift policy keeps and ``site_wins`` fields dropped), or None (held,
        or nothing left to write)."""
        found = ThreeWay(list(sides.conflicts), sides.site_fields)
        kept = keep_site_changes(action, found, self.drift, None, None, adopts=False)
        self.site_changes.extend(kept.site_changes)
        kind, key = action.kind, action.key
        adopted = [name for name in sorted(sides.site_fields) if self.drift.resolve(kind, key, name) == "adopt"]
        if adopted:
            self.warnings.append(
                f"{kind} {key}: drift: adopt writes pages and stacks into the content, not a {kind}'s fields; its "
                f"site change ({', '.join(adopted)}) is proposed instead: `cmssync pull` brings it back"
            )
        if kept.action is None:
            return None
        settled = settle(kept.action, sides.conflicts, self.policies, None)
        self.conflicts.extend(settled.conflicts)
        if settled.held is not None:
            self.held.append(settled.held)
        return settled.action

    def caught_up(self, kind: Kind, key: str, recorded: str | None, content: str) -> None:
        """An object with nothing to write whose content changed since it was last applied (``recorded``): it took
        the site's values, so apply records ``content`` as its digest (else a later change of the content would be
        taken for a conflict with a base no longer known)."""
        if recorded is not None and recorded != content:
            self.rebase.append(Rebase(kind=kind, key=key, digest=content))
