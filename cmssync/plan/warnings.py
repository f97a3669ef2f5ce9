"""Kinds of plan warnings, so each can be silenced in the settings (``warnings: {unmanaged_groups: off}``).

A warning is a sentence (``Plan.warnings``); its kind is the first pattern of :data:`KINDS` it matches. A
warning of no listed kind is always shown. Silencing a kind removes its warnings from the plan in every format
(and from the daemon's log); it changes nothing else: what a warning is about is planned (or not) all the same.
"""

from __future__ import annotations

import re
from collections.abc import Iterable

KINDS: dict[str, re.Pattern[str]] = {
    "unmanaged_groups": re.compile(r"groups managed before but no longer in the content"),
    "protected": re.compile(r"(page|stack|user) \S.* is protected and will not be deleted"),
    "foreign_draft_merge": re.compile(r"(page|stack) \S.*: changes go into its pending draft"),
    "renamed_files": re.compile(r"file \S.*: renamed on the site"),
    "duplicate_files": re.compile(r"file \S.*: \d+ site files hold its bytes"),
    "unreliable_lists": re.compile(r"the site's \w+ list cannot be read completely"),
    "retired_files": re.compile(r"\d+ replaced file\(s\) left on the site"),
}
"""Each kind and how its warnings begin."""


def kind_of(warning: str) -> str | None:
    return next((kind for kind, pattern in KINDS.items() if pattern.match(warning)), None)


def shown(warnings: Iterable[str], silenced: frozenset[str]) -> list[str]:
    """``warnings`` without those of a silenced kind."""
    return [w for w in warnings if not silenced or kind_of(w) not in silenced]
