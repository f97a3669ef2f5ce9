"""What a pull brought in from the site, object by object and field by field, with the values before and after.

Pure: it compares what a content file held (``before``, as the branch had it) with what pull wrote (``after``),
both as plain data (a page's, stack's or sidecar's YAML, ``users.yaml``, ``groups.yaml``) or as an asset's size.
A field is named by its place in the file (``name``, ``attributes.meta_title``, ``areas.Main[0].value.content``);
lists of users or groups are matched by username or name, other lists by position (a list that changed length is
one change, the whole list before and after). The proposal's commit message (:func:`commit_message`) and the
daemon's notifications (the values before and after) are made from these.
"""

from __future__ import annotations

import json
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from cmssync.content.paths import page_named

NAMED_LISTS = {"users": "username", "groups": "name"}
"""The files holding a list of objects, and the key that names each."""

SHORT = 60
"""Values up to this many characters are written into the commit message; longer ones only in the diff."""


@dataclass(frozen=True)
class FieldChange:
    """One field the site changed: where in the file, and its value before and after (``None``: absent)."""

    field: str
    before: Any
    after: Any

    def as_dict(self) -> dict[str, Any]:
        return {"field": self.field, "before": self.before, "after": self.after}


@dataclass(frozen=True)
class SiteChange:
    """One object whose file pull changed: ``object`` as messages name it (``page /about``, ``file logo.png``),
    the file (relative to the repository's top), the fields, and the site's version of it when it has versions."""

    object: str
    file: str
    fields: tuple[FieldChange, ...]
    version: int | None = None
    who: str | None = None
    """The version's author or approver, when the site's API says who."""

    def as_dict(self) -> dict[str, Any]:
        payload: dict[str, Any] = {
            "object": self.object,
            "file": self.file,
            "fields": [change.as_dict() for change in self.fields],
        }
        if self.version is not None:
            payload["version"] = self.version
        if self.who is not None:
            payload["who"] = self.who
        return payload


def object_name(kind: str, key: str) -> str:
    """How a message names what a staged file of ``kind`` is about (the kinds of ``sync.pull_writes.Staged``)."""
    if kind in ("page", "stack"):
        return page_named(key)
    if kind == "sidecar":
        return f"file {key} (sidecar)"
    if kind == "file":
        return f"file {key}"
    return key  # users.yaml, groups.yaml, cmssync.yaml


def field_changes(before: Any, after: Any, *, named_by: str | None = None) -> tuple[FieldChange, ...]:
    """Every leaf that differs between two plain YAML documents (see the module docstring)."""
    return tuple(_differences("", before, after, named_by))


def _differences(where: str, before: Any, after: Any, named_by: str | None) -> Iterator[FieldChange]:
    if before == after:
        return
    if isinstance(before, Mapping) and isinstance(after, Mapping):
        for key in [*before, *(k for k in after if k not in before)]:
            yield from _differences(_join(where, str(key)), before.get(key), after.get(key), None)
        return
    if _is_list(before) and _is_list(after):
        if named_by is not None and _named(before, named_by) and _named(after, named_by):
            old = {item[named_by]: item for item in before}
            new = {item[named_by]: item for item in after}
            for name in [*old, *(n for n in new if n not in old)]:
                yield from _differences(_join(where, str(name)), old.get(name), new.get(name), None)
            return
        if len(before) == len(after):
            for index, (old_item, new_item) in enumerate(zip(before, after, strict=True)):
                yield from _differences(f"{where}[{index}]", old_item, new_item, None)
            return
    yield FieldChange(where or "(file)", before, after)


def _join(where: str, key: str) -> str:
    return f"{where}.{key}" if where else key


def _is_list(value: Any) -> bool:
    return isinstance(value, Sequence) and not isinstance(value, str | bytes)


def _named(items: Sequence[Any], key: str) -> bool:
    names = [item.get(key) for item in items if isinstance(item, Mapping)]
    return len(names) == len(items) and all(isinstance(n, str) for n in names) and len(set(names)) == len(names)


def shown(value: Any) -> str:
    """A value as a commit message shows it: JSON, shortened to :data:`SHORT` characters."""
    if value is None:
        return "(none)"
    text = json.dumps(value, ensure_ascii=False, default=str)
    return text if len(text) <= SHORT else text[: SHORT - 1] + "…"


def commit_message(changes: Sequence[SiteChange], *, site: str, subject: str | None = None) -> str:
    """The proposal's commit message: a subject (``subject``, or one naming what changed), then each object with
    its site version and who made it when known, and each field with its values when they are short."""
    objects = [change.object for change in changes]
    if subject is None:
        named = ", ".join(objects[:3]) + (f" and {len(objects) - 3} more" if len(objects) > 3 else "")
        subject = f"Site changes: {named}" if named else "Site changes"
    lines = [subject.strip().splitlines()[0] if subject.strip() else "Site changes", ""]
    lines.append(f"Changed on {site} and pulled by cmssync:")
    for change in changes:
        version = f" (site version {change.version})" if change.version is not None else ""
        who = f", by {change.who}" if change.who else ""
        lines.append("")
        lines.append(f"{change.object}{version}{who} - {change.file}")
        for item in change.fields:
            lines.append(f"  {item.field}: {shown(item.before)} -> {shown(item.after)}")
    return "\n".join(lines) + "\n"
