"""The group kind in the content: ``groups.yaml`` and/or ``groups/*.yaml``, one :class:`GroupSpec` per entry, keyed
by name (unique on a Concrete site, compared without case). The content's digest holds the names alone."""

from __future__ import annotations

from collections.abc import Mapping

from cmssync.content.fields import LocatedSpec, Name
from cmssync.content.lists.kind import ListKind


class GroupSpec(LocatedSpec):
    """One entry of ``groups.yaml`` (or ``groups/*.yaml``)."""

    name: Name


def _names(groups: Mapping[str, GroupSpec]) -> list[str]:
    return sorted(groups)


KIND = ListKind(
    "group", "groups", GroupSpec, "name", rank=1, unique=(("group", "name"),), canonical=_names, key_only=True
)
