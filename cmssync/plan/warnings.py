"""Kinds of plan warnings, so each can be silenced in the settings (``warnings: {protected: off}``).

A warning is a sentence (``Plan.warnings``); its kind is the first pattern of :data:`KINDS`, or of the managed
kinds' own (``KindFacts.warnings``: the kinds of warnings a kind's planner gives), it matches. A warning of no
listed kind is always shown. Silencing a kind removes its warnings from the plan in every format
(and from the daemon's log); it changes nothing else: what a warning is about is planned (or not) all the same.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping

KINDS: dict[str, re.Pattern[str]] = {
    "protected": re.compile(r"(page|stack|user) \S.* is protected and will not be deleted"),
    "foreign_draft_merge": re.compile(r"(page|stack) \S.*: changes go into its pending draft"),
    "renamed_files": re.compile(r"file \S.*: renamed on the site"),
    "duplicate_files": re.compile(r"file \S.*: \d+ site files hold its bytes"),
    "unreliable_lists": re.compile(r"the site's \w+ list cannot be read completely"),
    "retired_files": re.compile(r"\d+ replaced file\(s\) left on the site"),
}
"""Each kind and how its warnings begin."""


def kind_of(warning: str, kinds: Mapping[str, re.Pattern[str]] = KINDS) -> str | None:
    return next((kind for kind, pattern in kinds.items() if pattern.match(warning)), None)


def shown(warnings: Iterable[str], silenced: frozenset[str], more: Iterable[tuple[str, str]] = ()) -> list[str]:
    """``warnings`` without those of a silenced kind (``more``: the managed kinds' own, name and pattern)."""
    kinds = {**KINDS, **{name: re.compile(pattern) for name, pattern in more}}
    return [w for w in warnings if not silenced or kind_of(w, kinds) not in silenced]
