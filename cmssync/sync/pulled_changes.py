"""What a pull brought in from the site, object by object and field by field, with the values before and after.

Pure: it compares what a content file held (``before``, as the branch had it) with what pull wrote (``after``),
both as plain data (a page's, stack's or sidecar's YAML, a list kind's file such as ``users.yaml``) or as an
asset's size. A field is named by its place in the file (``name``, ``attributes.meta_title``,
``areas.Main[0].value.content``); a list kind's entries are matched by their key (a user's username), other lists
by position (a list that changed length is
one change, the whole list before and after). The proposal's commit message (:func:`commit_message`) and the
daemon's notifications (the values before and after) are made from these.
"""

from __future__ import annotations

import json
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from cmssync.content.lists import list_kinds
from cmssync.content.paths import page_named

NAMED_LISTS = {kind.plural: kind.key_field for kind in list_kinds()}
"""The files holding a list of objects (a list kind's, by its plural), and the key that names each."""

SHORT = 60
"""Values up to this many characters are written into the commit message; longer ones only in the diff."""


@dataclass(frozen=True)
class FieldValues:
    """One field and its value before and after (``None``: absent): a field pull changed, named by its place in the
    file; a field a notification is about (``cmssync.daemon.events``)."""

    field: str
    before: Any
    after: Any


@dataclass(frozen=True)
class PulledChange:
    """One object whose file pull changed — ``kind`` and ``key`` as pull stages it (``page``, ``/about``; ``file``,
    ``logo.png``) — the file (relative to the repository's top), the fields, and the site's version of it when it
    has versions."""

    kind: str
    key: str
    file: str
    fields: tuple[FieldValues, ...]
    version: int | None = None
    approved: str | None = None
    """When the site's version was approved (ISO 8601). Who wrote or approved it the REST API does not say
    (Concrete 9.3.1: ``tests/conformance/concrete-9.3.1/versions.jsonl``)."""

    @property
    def object(self) -> str:
        """As messages name it: ``page /about``, ``stack footer``, ``file logo.png``."""
        return object_name(self.kind, self.key)


def object_name(kind: str, key: str) -> str:
    """How a message names what a staged file of ``kind`` is about (the kinds of ``sync.pull_writes.Staged``)."""
    if kind in ("page", "stack"):
        return page_named(key)
    if kind == "sidecar":
        return f"file {key} (sidecar)"
    if kind == "file":
        return f"file {key}"
    return key  # a list kind's file (users.yaml, …), cmssync.yaml


def named_once(changes: Sequence[PulledChange]) -> list[str]:
    """The objects of ``changes`` as a subject line names them, each once: a file's bytes and its sidecar are one
    file (``file logo.png``)."""
    return list(dict.fromkeys(object_name("file" if c.kind == "sidecar" else c.kind, c.key) for c in changes))


def field_changes(before: Any, after: Any, *, named_by: str | None = None) -> tuple[FieldValues, ...]:
    """Every leaf that differs between two plain YAML documents (see the module docstring)."""
    return tuple(_differences("", before, after, named_by))


def _differences(where: str, before: Any, after: Any, named_by: str | None) -> Iterator[FieldValues]:
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
    yield FieldValues(where or "(file)", before, after)


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


def commit_message(changes: Sequence[PulledChange], *, site: str, subject: str | None = None) -> str:
    """The proposal's commit message: a subject (``subject``, or one naming what changed), then each object with
    its site version and approval time, and each field with its values when they are short."""
    objects = named_once(changes)
    if subject is None:
        named = ", ".join(objects[:3]) + (f" and {len(objects) - 3} more" if len(objects) > 3 else "")
        subject = f"Site changes: {named}" if named else "Site changes"
    lines = [subject.strip().splitlines()[0] if subject.strip() else "Site changes", ""]
    lines.append(f"Changed on {site} and pulled by cmssync:")
    for change in changes:
        version = f" (site version {change.version}" if change.version is not None else ""
        version += f", approved {change.approved}" if version and change.approved else ""
        version += ")" if version else ""
        lines.append("")
        lines.append(f"{change.object}{version} - {change.file}")
        for item in change.fields:
            lines.append(f"  {item.field}: {shown(item.before)} -> {shown(item.after)}")
    return "\n".join(lines) + "\n"
