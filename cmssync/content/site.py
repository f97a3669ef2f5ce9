"""The loaded content: :class:`SiteContent`, its digest and summary (passwords: ``cmssync.content.passwords``).

``digest()`` is a SHA-256 over a canonical JSON form of everything the content asks of the site (pages, file
hashes and metadata, each list kind's entries), not of how it is written: reformatting a file or reordering keys
keeps the digest, changing a value or a file's bytes changes it. Plan files record it to refuse a stale plan.
Settings are not part of it (they hold secrets and connection details, not desired content); passwords enter only
as their ``${env:NAME}`` reference.

The digest costs ~44 ms for 1,000 pages (a JSON dump of every spec), and a plan asks for it in both of its phases
(``cmssync.sync.planning.plan_site``), so it is computed once per :class:`SiteContent` and kept on it. That is right
because a ``SiteContent`` does not change once loaded: a frozen dataclass whose fields are read-only mappings
of frozen specs (pydantic ``frozen=True`` models, frozen ``FileSpec`` dataclasses), built from fresh dicts by the
loader and never mutated after (nothing in cmssync writes into a spec's dicts or lists, though Python would let
it). A different content (``Scope.restrict``, ``dataclasses.replace``) is a new object, which starts without the
kept digest: the cache is an ``init=False`` field that ``replace`` does not copy.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, cast

from cmssync.config import Settings
from cmssync.content.fields import LocatedSpec
from cmssync.content.files import FileSpec
from cmssync.content.lists import list_kinds
from cmssync.content.models import PageSpec, UserSpec
from cmssync.content.paths import is_stack_path

DIGEST_VERSION = 1


@dataclass(frozen=True)
class SiteContent:
    """Everything the content directory asks for, validated, keyed by the objects' identities (design.md §5)."""

    root: Path
    settings: Settings
    pages: Mapping[str, PageSpec]
    """Page path (``/``, ``/about``, …) → page; ``spec.source`` names its file."""
    files: Mapping[str, FileSpec]
    """Path relative to ``files/`` → file."""
    lists: Mapping[str, Mapping[str, LocatedSpec]] = field(default_factory=dict)
    """Each list kind's objects (:mod:`cmssync.content.lists`): its name (``user``, …) → key → entry."""
    _digest: str | None = field(default=None, init=False, repr=False, compare=False)
    """:meth:`digest`, once computed (see the module docstring)."""

    @property
    def users(self) -> Mapping[str, UserSpec]:
        """Username → user (the user kind's list)."""
        return cast("Mapping[str, UserSpec]", self.of("user"))

    @property
    def empty(self) -> bool:
        """Whether the content names nothing: no page, stack, file or list entry."""
        return not (self.pages or self.files or any(self.lists.values()))

    def of(self, kind: str) -> Mapping[str, LocatedSpec]:
        """A list kind's objects by key (empty when the content has none)."""
        return self.lists.get(kind, {})

    def canonical(self, *, pages: bool = True) -> dict[str, Any]:
        """A JSON-ready normal form of the content (sorted keys, written forms of texts); ``pages=False``: all but
        the pages (:meth:`digest` adds them one at a time)."""
        canonical: dict[str, Any] = {
            "version": DIGEST_VERSION,
            "files": {path: spec.canonical() for path, spec in sorted(self.files.items())},
            **{kind.plural: kind.canonical_of(self.of(kind.name)) for kind in list_kinds()},
        }
        if pages:
            canonical["pages"] = {path: spec.model_dump(mode="json") for path, spec in sorted(self.pages.items())}
        return canonical

    def digest(self) -> str:
        """SHA-256 of :meth:`canonical` as compact JSON; computed on the first call and kept (module docstring).

        The JSON is hashed page by page as it is made, the same text as one dump of :meth:`canonical`: a dump of
        the whole content at once held every spec a second time as plain data (~3 KiB a page) and its text."""
        if self._digest is None:
            hashed = hashlib.sha256()
            others = self.canonical(pages=False)
            for index, key in enumerate(sorted([*others, "pages"])):
                hashed.update(f"{',' if index else '{'}{_compact(key)}:".encode())
                if key == "pages":
                    hashed.update(b"{")
                    for number, (path, spec) in enumerate(sorted(self.pages.items())):
                        entry = f"{',' if number else ''}{_compact(path)}:{_compact(spec.model_dump(mode='json'))}"
                        hashed.update(entry.encode())
                    hashed.update(b"}")
                else:
                    hashed.update(_compact(others[key]).encode())
            hashed.update(b"}")
            object.__setattr__(self, "_digest", hashed.hexdigest())
        assert self._digest is not None
        return self._digest

    def summary(self) -> str:
        stacks = sum(1 for path in self.pages if is_stack_path(path))
        counts = (
            (len(self.pages) - stacks, "page"),
            *(((stacks, "stack"),) if stacks else ()),
            (len(self.files), "file"),
            *((len(self.of(kind.name)), kind.name) for kind in list_kinds()),
        )
        return ", ".join(f"{n} {word}{'' if n == 1 else 's'}" for n, word in counts)


def _compact(value: Any) -> str:
    return json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
