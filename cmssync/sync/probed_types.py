"""Block types cmssync does not model (a theme's or a package's), as this site's probe verdicts say.

``cmssync probe-block-type HANDLE`` (:mod:`cmssync.sync.block_type_probe`) records in the state, per site, whether
such a type round-trips through the API (:class:`~cmssync.state.records.BlockTypeVerdict`). This module is what
the verdict means, with no I/O: how a read value is described (:func:`field_kinds`), how two reads are compared
(:func:`first_difference`), and whether ``pull`` may write one block of the type as content (:func:`keep_reason`).
Nothing is assumed: a type never probed, probed as asymmetric, or whose block reads differently from what the probe
saw (another field, a site reference) stays a ``keep:`` placeholder whose reason names the command.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

from cmssync.state.records import BlockTypeVerdict, ProbedKind

_NUMBER = re.compile(r"-?\d+(\.\d+)?")
_SITE_REFERENCE = re.compile(r"\{ccm:export:[a-z_]+:[^{}]*\}", re.IGNORECASE)
"""How an API read shows a file, page, page-type or folder column: an id the generic form cannot write back."""


def command(handle: str) -> str:
    return f"`cmssync probe-block-type {handle}`"


def field_kinds(value: Mapping[str, Any]) -> dict[str, ProbedKind]:
    """What each field of a read reads as (every value of a real site's read is a string)."""
    kinds: dict[str, ProbedKind] = {}
    for name, item in value.items():
        text = _text(item)
        kinds[name] = "empty" if text == "" else "number" if _NUMBER.fullmatch(text) else "text"
    return kinds


def unwritable(value: object) -> str | None:
    """Why a read cannot be written back as the generic form (a list, a nested map, a site reference), else None."""
    if not isinstance(value, Mapping) or not value:
        return "the API reads it without a value (no table of its own, or its data kept elsewhere)"
    for name, item in value.items():
        if isinstance(item, (list, dict)):
            return f"its field {name} reads as a {'list' if isinstance(item, list) else 'map'}, not one value"
        found = _SITE_REFERENCE.search(_text(item))
        if found is not None:
            return (
                f"its field {name} reads as a site reference ({found.group(0)}), which the generic form cannot "
                "write back as the id the site stores"
            )
    return None


def first_difference(sent: Mapping[str, Any], read: Mapping[str, Any]) -> str | None:
    """The first field where ``read`` differs from ``sent`` (compared as the strings a real site reads), else None."""
    for name in sorted(set(sent) | set(read)):
        if name not in read:
            return f"field {name} is not read back"
        if name not in sent:
            return f"field {name} is read back ({_short(read[name])}) though it was not sent"
        if _text(sent[name]) != _text(read[name]):
            return f"field {name} was written as {_short(sent[name])} and reads back as {_short(read[name])}"
    return None


def keep_reason(handle: str, value: object, verdict: BlockTypeVerdict | None) -> str | None:
    """Why ``pull`` must keep a block of the unmodelled type ``handle`` read as ``value`` as a placeholder, given the
    site's verdict; None when it is written as content (``raw: true`` with its read value)."""
    if verdict is None:
        return f"cmssync has not verified that {handle} blocks round-trip through the API ({command(handle)} checks it)"
    if not verdict.symmetric:
        return (
            f"{handle} blocks do not round-trip through this site's API: {verdict.reason} (found by {command(handle)} "
            f"at {verdict.probed_at})"
        )
    problem = unwritable(value)
    if problem is not None:
        return f"this {handle} block cannot be written back: {problem}"
    assert isinstance(value, Mapping)
    if set(value) != set(verdict.fields):
        unseen = sorted(set(value) ^ set(verdict.fields))
        return (
            f"this {handle} block reads fields the probe of {verdict.probed_at} did not see as they are "
            f"({', '.join(unseen)}): the block type changed; run {command(handle)} again"
        )
    return None


def _text(value: Any) -> str:
    if value is None or value is False:
        return ""
    if value is True:
        return "1"
    return str(value)


def _short(value: Any) -> str:
    text = repr(_text(value))
    return text if len(text) <= 60 else text[:57] + "…'"
