"""Planning the group kind (pure): the groups of ``groups.yaml`` and ``groups/``, each keyed by name.

Groups can only be created through the API: a group on the site that the content does not name is reported, never
an error; a group of the content's name is that group (Concrete keeps group names unique). A create carries
``Precondition(absent=True)``: a plan file applied after the group appeared is refused.
"""

from __future__ import annotations

from cmssync.content.site import SiteContent
from cmssync.plan.actions import Action, FieldChange, Precondition
from cmssync.plan.snapshot import Snapshot


def plan_groups(content: SiteContent, observed: Snapshot, warnings: list[str]) -> list[Action]:
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
    unmanaged = sorted(set(observed.groups) - set(content.groups))
    if unmanaged and observed.complete:
        warnings.append(f"groups on the site but not in the content (left alone): {', '.join(unmanaged)}")
    return actions
