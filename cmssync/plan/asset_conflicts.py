"""Three-way conflicts for users and files: changed in the content and on the site since cmssync last applied them.

Pure. Unlike a page, a user or a file has no per-field base in the state: only the digest of what cmssync last
applied (``UserRecord.digest`` = ``user_digest``: email and language; ``FileRecord.digest`` = ``file_digest``: the
sidecar's normalised metadata, only the keys the content stated). The base values are therefore *reconstructed*:
every field's base can only have been the site's value (the content changed it), the content's value (the site
changed it), or absent (not managed then), so the bases made of those choices are digested until one is the recorded
digest (:func:`explain`; at most 3 choices for each of the 2 user and 7 file fields, tried only when the content
changed and the site differs). Found, it tells for each differing field which side changed it:

* the content's value is the base → only the site changed it: drift, settled by the drift policy as a page's
  (``cmssync.plan.drift.Settling``: by default kept on the site and listed as a site change);
* the site's value is the base (or the field was not managed) → only the content changed it: an ordinary update;

and no field can then be in conflict. When no such base exists, something changed on both sides in a way one-sided
edits cannot explain (typically the same field): every differing field is a :class:`FieldConflict` with the base not
known, settled like a page's by :class:`~cmssync.plan.conflicts.ConflictPolicies` (kind ``user`` or ``file``;
users and files have no ``on_conflict`` of their own). A state without digests (``digest: null``) claims neither
drift nor conflict: the content wins, as before digests existed.

Limits: when both sides changed one field to the *same* value and another field differs, the base cannot be
reconstructed and that other field is reported in conflict too; passwords are never part of this (they are kept as
keyed digests and compared on their own). After an apply, :func:`applied_user_digest` / :func:`applied_file_digest`
keep the recorded digest while a ``site_wins`` field is left different on the site, so the next run sees the same
conflict (settled the same way) instead of drift that would revert the editor.
"""

from __future__ import annotations

import itertools
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from cmssync.content.models import UserSpec
from cmssync.plan.actions import Action, FieldChange, FieldConflict, Kind
from cmssync.plan.asset_forms import UserForm
from cmssync.plan.normalize import digest, normalize_attribute, normalize_text
from cmssync.plan.snapshot import LiveFile, LiveUser

FILE_ATTRIBUTES = ("width", "height", "duration")


class _Absent:
    """A field the base did not hold (not managed when cmssync last applied the object)."""

    def __repr__(self) -> str:
        return "ABSENT"


ABSENT = _Absent()


@dataclass(frozen=True)
class Sides:
    """What the three-way comparison found for one object: conflicted fields, and the fields only the site changed
    (drift)."""

    conflicts: tuple[FieldConflict, ...] = ()
    site_fields: frozenset[str] = frozenset()

    @property
    def drift(self) -> bool:
        return bool(self.site_fields)


def live_user_fields(live: LiveUser) -> dict[str, Any]:
    return {"email": live.email, "language": live.language}


def live_file_fields(live: LiveFile) -> dict[str, Any]:
    """The live file's metadata in the form of ``cmssync.plan.asset_forms.desired_file_meta``."""
    current: dict[str, Any] = {
        "title": normalize_text(live.title),
        "description": normalize_text(live.description),
        "tags": list(live.tags),
        "folder": live.folder,
    }
    for name in FILE_ATTRIBUTES:
        current[f"attributes.{name}"] = normalize_attribute(live.attributes.get(name), attribute_type="number")
    return current


def _choices(*values: Any) -> list[Any]:
    unique: list[Any] = []
    for value in values:
        if not any(value == seen and type(value) is type(seen) for seen in unique):
            unique.append(value)
    return unique


def explain(
    recorded: str, options: Mapping[str, Sequence[Any]], build: Callable[[dict[str, Any]], Any]
) -> dict[str, Any] | None:
    """The base (field → value, or :data:`ABSENT`) among the combinations of ``options`` whose ``build`` digests to
    ``recorded``, or None. Options are listed most likely first (the site's value: only the content changed)."""
    names = list(options)
    for combination in itertools.product(*(options[name] for name in names)):
        candidate = dict(zip(names, combination, strict=True))
        if digest(build(candidate)) == recorded:
            return candidate
    return None


def compare(
    kind: Kind,
    key: str,
    changes: Iterable[FieldChange],
    recorded: str | None,
    content_digest: str,
    base_of: Callable[[], dict[str, Any] | None],
    same: Callable[[str, Any, Any], bool],
) -> Sides:
    """Three-way comparison of the planned ``changes`` (live ``before``, content ``after``) of one object.

    ``base_of`` reconstructs the base (see :func:`explain`); it is called only when both the content and the site
    may have changed. ``same(field, a, b)`` compares two values of a field as the planner does.
    """
    changed = [c for c in changes if not c.sensitive]
    if recorded is None or not changed:
        return Sides()
    if recorded == content_digest:  # the content is what cmssync last applied: only the site changed
        return Sides(site_fields=frozenset(c.field for c in changed))
    base = base_of()
    if base is None:
        conflicts = tuple(
            FieldConflict(kind=kind, key=key, field=c.field, base_known=False, content=c.after, site=c.before)
            for c in changed
        )
        return Sides(conflicts=conflicts)
    kept = [c for c in changed if base.get(c.field, ABSENT) is not ABSENT and same(c.field, base[c.field], c.after)]
    return Sides(site_fields=frozenset(c.field for c in kept))


# --- users --------------------------------------------------------------------------------------------------------


def user_base(spec: UserSpec, live: LiveUser, recorded: str) -> dict[str, Any] | None:
    """The email and language cmssync last applied to this user, reconstructed from the recorded digest."""
    current = live_user_fields(live)
    options = {
        # an address compares as one mailbox, case aside: a server that lower-cased it did not change it
        "email": _choices(current["email"], spec.email, current["email"].lower(), spec.email.lower()),
        "language": _choices(current["language"], spec.language, None),
    }
    found = explain(recorded, options, lambda base: base)
    if found is not None and found["language"] is None:
        found["language"] = ABSENT
    return found


def applied_user_digest(
    spec: UserForm, action: Action, live: LiveUser | None, old: str | None, new: str, same: Callable[..., bool]
) -> str:
    """The digest to record after applying ``action`` to a user: ``new`` (the content's), unless a managed field
    the action did not write still differs on the site (a ``site_wins`` conflict): then ``old`` stays."""
    if old is None or live is None or action.op != "update":
        return new
    written = {change.field for change in action.changes}
    current = live_user_fields(live)
    desired = {"email": spec.email} | ({"language": spec.language} if spec.language is not None else {})
    kept = any(name not in written and not same(name, current[name], value) for name, value in desired.items())
    return old if kept else new


# --- files --------------------------------------------------------------------------------------------------------


def file_base(desired: Mapping[str, Any], live: LiveFile, recorded: str) -> dict[str, Any] | None:
    """The metadata cmssync last applied to this file, reconstructed from the recorded digest."""
    current = live_file_fields(live)
    options: dict[str, list[Any]] = {}
    for name, value in current.items():
        if name in desired:
            options[name] = _choices(value, desired[name], ABSENT)
        else:
            options[name] = _choices(ABSENT, value) if value not in (None, []) else [ABSENT]
    return explain(recorded, options, lambda base: {k: v for k, v in base.items() if v is not ABSENT})


def applied_file_digest(
    desired: Mapping[str, Any], action: Action, live: LiveFile | None, old: str | None, new: str
) -> str:
    """As :func:`applied_user_digest`, for a file's metadata (an ``update`` or ``move``; an upload writes it all)."""
    if old is None or live is None or action.op not in ("update", "move"):
        return new
    written = {change.field for change in action.changes}
    current = live_file_fields(live)
    kept = any(name not in written and current.get(name) != value for name, value in desired.items())
    return old if kept else new


def folder_by_path(change: FieldChange, folders: Mapping[int, str]) -> FieldChange:
    """A folder change with paths for ids (apply moves the file by the sidecar's folder, not by these values)."""
    if change.field != "folder":
        return change

    def name(value: object) -> object:
        return folders.get(value, f"folder {value}") if isinstance(value, int) else value

    return change.model_copy(update={"before": name(change.before), "after": name(change.after)})


def same_user_field(name: str, a: Any, b: Any) -> bool:
    """Whether two values of a user's field are the same: addresses are stored as given, but compare as the same
    mailbox regardless of case."""
    if name == "email":
        return str(a or "").lower() == str(b or "").lower()
    return bool(a == b)
