"""The group kind's pure facts and planning: the groups of ``groups.yaml`` and ``groups/``, each keyed by name (its
content: ``cmssync.content.lists.group``; its I/O: ``cmssync.sync.kinds.group``).

Groups can only be created through the API: a group the content no longer names but cmssync managed (the state
records it) is reported — it stays on the site, as the API deletes no group — never an error; a group the content
never named (the site's own Administrators, an editor's group) is not cmssync's and is not mentioned, as a page or
user the content does not manage is not; a group of the content's name is that group (Concrete keeps group names
unique). A create carries
``Precondition(absent=True)``: a plan file applied after the group appeared is refused.
"""

from __future__ import annotations

from cmssync.content.site import SiteContent
from cmssync.plan.actions import Action, FieldChange, Precondition
from cmssync.plan.kinds import KindFacts, KindInputs, KindPlan
from cmssync.plan.scope_model import Scope
from cmssync.plan.snapshot import Snapshot
from cmssync.state.records import State


def plan_groups(content: SiteContent, observed: Snapshot, state: State, warnings: list[str]) -> list[Action]:
    named = content.of("group")
    actions = [
        Action(
            kind="group",
            key=name,
            op="create",
            changes=(FieldChange(field="name", after=name),),
            precondition=Precondition(absent=True),
        )
        for name in sorted(named)
        if name not in observed.groups
    ]
    dropped = sorted((set(state.records_of("group")) & set(observed.groups)) - set(named))
    if dropped and observed.complete:
        warnings.append(
            f"groups managed before but no longer in the content, left on the site (the API deletes no group): "
            f"{', '.join(dropped)}"
        )
    return actions


def _planned(given: KindInputs) -> KindPlan:
    return KindPlan(plan_groups(given.content, given.observed, given.state, given.warnings))


def _scope(name: str) -> Scope | None:
    """A change to ``groups.yaml`` or ``groups/``: every group (a scope names its objects by pattern)."""
    return Scope(kinds=frozenset({"group:*"})) if name.split("/", 1)[0] in ("groups", "groups.yaml") else None


FACTS = KindFacts(
    "group",
    "groups",
    pull_rank=4,
    scope=_scope,
    plan_rank=0,
    plan=_planned,
    warnings=(("unmanaged_groups", "groups managed before but no longer in the content"),),
)
"""The group kind's facts: planned first, pulled after the users, never deleted (the API deletes no group)."""
