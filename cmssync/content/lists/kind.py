"""What a list kind of the content is (:class:`ListKind`), apart from the table of them (``__init__``), so its
modules import this and not the package that lists them."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from cmssync.content.fields import LocatedSpec


@dataclass(frozen=True)
class ListKind:
    """A kind of the content whose objects are entries of lists: ``<plural>.yaml`` at the top of the content
    and/or ``<plural>/*.yaml``, each a list of ``- `` entries validated by :attr:`spec`, keyed by :attr:`key_field`."""

    name: str
    """The kind's name (plans' ``KIND:KEY``, ``SiteContent.lists``)."""
    plural: str
    """Its list file (``<plural>.yaml``), its directory (``<plural>/``), its part of the JSON Schema and of the
    content's digest."""
    spec: type[LocatedSpec]
    """The model of one entry."""
    key_field: str
    """The field of an entry that names the object (its key; unique within the kind)."""
    rank: int
    """Where the kind comes among the list kinds (messages, the summary, the schema: users 0, then groups 1)."""
    unique: tuple[tuple[str, str], ...] = ()
    """What no two entries may share, compared without case: (how a duplicate is named, the field)."""
    canonical: Callable[[Mapping[str, Any]], Any] | None = None
    """The kind's objects (key → spec) in the content's digest (``SiteContent.canonical``); None: each entry's
    JSON form by key."""
    key_only: bool = False
    """An entry of its key alone is valid, and is all a saved plan's action of the kind needs to stand for
    (``cmssync.sync.plan_files.planned_objects``: :meth:`stub`)."""

    @property
    def file(self) -> str:
        """The list file at the top of the content (``users.yaml``)."""
        return f"{self.plural}.yaml"

    @property
    def title(self) -> str:
        """The title of its JSON Schema."""
        return f"cmssync {self.plural} ({self.file}, {self.plural}/*.yaml)"

    def key(self, entry: Any) -> str:
        """The entry's key."""
        return str(getattr(entry, self.key_field))

    def stub(self, key: str) -> LocatedSpec:
        """An entry of this key and nothing else (:attr:`key_only`)."""
        return self.spec.model_validate({self.key_field: key})

    def canonical_of(self, objects: Mapping[str, Any]) -> Any:
        if self.canonical is not None:
            return self.canonical(objects)
        return {key: spec.model_dump(mode="json") for key, spec in sorted(objects.items())}
