"""Planning the group kind (pure): the groups of ``groups.yaml`` and ``groups/``, each keyed by name.

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
from cmssync.plan.snapshot import Snapshot
from cmssync.state.records import State


def plan_groups(content: SiteContent, observed: Snapshot, state: State, warnings: list[str]) -> list[Action]:
    actions = [
        Action(
            kind="group",
            key=name,
            op="create",
            changes=(FieldChange(field="name", after=name),),
            precondition=Precondition(absent=True),
        )
        for name in sorted(content.groups)
        if name not in observed.groups
    ]
    dropped = sorted((set(state.groups) & set(observed.groups)) - set(content.groups))
    if dropped and observed.complete:
        warnings.append(
            f"groups managed before but no longer in the content, left on the site (the API deletes no group): "
            f"{', '.join(dropped)}"
        )
    return actions
