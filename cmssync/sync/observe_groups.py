"""Observing the group kind: the site's groups by name, from the whole group list (only the list shows a group by
name; groups are few, so the list is read whole whenever the content or the state names a group or a user)."""

from __future__ import annotations

from cmssync.api.client import ConcreteClient
from cmssync.plan.snapshot import LiveGroup


async def observe_groups(client: ConcreteClient) -> dict[str, LiveGroup]:
    """The site's groups, keyed by name."""
    return {group.name or "": LiveGroup(group.id, group.name or "") async for group in client.iter_groups()}
