"""Which objects a plan covers: ``--target`` and ``--exclude`` patterns.

A pattern is ``KIND:KEY`` with shell-style wildcards matched against the whole object id (``page:/about``,
``file:images/logo.png``, ``user:jane.editor``, ``group:Editors``): ``*`` matches any run of characters, ``/``
included (``page:/blog/*`` is every page below /blog, at any depth; ``file:*.pdf`` every PDF in any folder), ``?``
one character, ``[abc]`` one of a set. Matching is case-sensitive. A target brings the actions it depends on; an
exclude takes out the actions that depend on what it excludes (a page linking to an excluded new file waits with it).
"""

from __future__ import annotations

import fnmatch
from collections.abc import Collection, Iterable
from typing import TypeVar

from cmssync.errors import PlanError
from cmssync.plan.actions import Action, BlockedDeletes, KeptObjects
from cmssync.plan.builtin_kinds import BUILT_IN_KINDS

Keyed = TypeVar("Keyed", BlockedDeletes, KeptObjects)


def matches(object_id: str, patterns: Iterable[str]) -> bool:
    return any(fnmatch.fnmatchcase(object_id, p) for p in patterns)


def check_targets(
    targets: Iterable[str],
    known: Iterable[str],
    *,
    flag: str = "--target",
    kinds: Collection[str] = BUILT_IN_KINDS.names,
) -> None:
    """Refuse a malformed pattern, or one that names no object of the content, the state or the plan.

    A typo in ``--target`` or ``--exclude`` must not read as "no changes": it is an error naming the pattern.
    """
    ids = list(known)
    for target in targets:
        kind, sep, key = target.partition(":")
        if not sep or kind not in kinds or not key:
            raise PlanError(
                f"invalid {flag} {target!r}: use KIND:KEY with KIND one of {', '.join(kinds)} "
                "(e.g. page:/about, file:images/logo.png; * matches any characters, / included, ? one)"
            )
        if not any(fnmatch.fnmatchcase(object_id, target) for object_id in ids):
            raise PlanError(f"{flag} {target!r} matches no {kind} of the content or the state")


def targeted(actions: list[Action], targets: Iterable[str]) -> list[Action]:
    """The actions matching a ``KIND:KEY`` pattern, plus everything they depend on (transitively)."""
    patterns = list(targets)
    by_id = {a.id: a for a in actions}
    wanted = {a.id for a in actions if matches(a.id, patterns)}
    stack = list(wanted)
    while stack:
        for dependency in by_id[stack.pop()].depends_on:
            if dependency in by_id and dependency not in wanted:
                wanted.add(dependency)
                stack.append(dependency)
    return [a for a in actions if a.id in wanted]


def excluded(actions: list[Action], patterns: Iterable[str]) -> tuple[list[Action], list[str]]:
    """The actions without those matching ``patterns`` and, transitively, those depending on one; and the ids of
    the dependents left out that no pattern named (for a warning)."""
    patterns = list(patterns)
    named = {a.id for a in actions if matches(a.id, patterns)}
    out = set(named)
    grew = True
    while grew:
        grew = False
        for action in actions:
            if action.id not in out and out & set(action.depends_on):
                out.add(action.id)
                grew = True
    return [a for a in actions if a.id not in out], sorted(out - named)
