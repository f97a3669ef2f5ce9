"""Reading one YAML file of the content safely, keeping every value's source position.

Round-trip mode (ruamel ``typ="rt"``) gives ``CommentedMap``/``CommentedSeq`` whose ``lc`` holds 0-based
positions; :func:`position_of` turns a pydantic error ``loc`` into a 1-based ``(line, column)``.

Refused before anything reaches pydantic, each as one located :class:`~cmssync.errors.Problem`:

* files over :data:`MAX_YAML_BYTES` (checked with ``stat`` before reading, so a huge file costs nothing);
* text that is not UTF-8;
* YAML syntax errors, tabs used for indentation, duplicate keys;
* anchors and aliases (``&a`` / ``*a``): content has no use for them, and refusing them outright is the simplest
  complete defence against alias bombs ("billion laughs"), whose expansion is exponential in the file's size;
* nesting deeper than :data:`MAX_DEPTH`.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ruamel.yaml import YAML
from ruamel.yaml.comments import CommentedMap, CommentedSeq
from ruamel.yaml.composer import Composer
from ruamel.yaml.error import MarkedYAMLError, YAMLError
from ruamel.yaml.events import AliasEvent

from cmssync.errors import Problem

MAX_YAML_BYTES = 5 * 1024 * 1024
MAX_DEPTH = 64


class AnchorRefused(MarkedYAMLError):
    """An anchor or alias in a content file."""


class _NoAnchorComposer(Composer):
    """A composer that stops at the first anchor or alias, before anything is expanded."""

    def compose_node(self, parent: Any, index: Any) -> Any:
        event = self.parser.peek_event()
        if isinstance(event, AliasEvent) or getattr(event, "anchor", None) is not None:
            raise AnchorRefused(
                problem="anchors and aliases (&name, *name) are not allowed in content files; write values out",
                problem_mark=event.start_mark,
            )
        return super().compose_node(parent, index)


def new_yaml() -> YAML:
    """A round-trip YAML instance with the content's limits (one per thread; ruamel instances are not shared)."""
    yaml = YAML(typ="rt")
    yaml.Composer = _NoAnchorComposer
    yaml.max_depth = MAX_DEPTH
    return yaml


@dataclass(frozen=True)
class YamlDocument:
    """A parsed content file: its content-relative POSIX name, the round-trip tree (``None`` when empty) and its
    text (to point into multi-line strings)."""

    name: str
    data: Any
    text: str = ""


class ParseCache:
    """Parsed documents by name, reused while a file's text is unchanged.

    For long-lived callers (the daemon re-loads the whole content on every run, and parsing with ruamel's pure-Python
    round-trip parser is nearly all of that time). The cached trees are shared between loads, which is safe because
    the loader only reads them.
    """

    def __init__(self) -> None:
        self._documents: dict[str, YamlDocument] = {}

    def parse(self, text: str, name: str, yaml: YAML | None = None) -> YamlDocument | Problem:
        cached = self._documents.get(name)
        if cached is not None and cached.text == text.removeprefix("\ufeff"):
            return cached
        result = parse_yaml(text, name, yaml)
        if isinstance(result, YamlDocument):
            self._documents[name] = result
        else:
            self._documents.pop(name, None)
        return result


def read_yaml(
    path: Path, name: str, yaml: YAML | None = None, *, cache: ParseCache | None = None
) -> YamlDocument | Problem:
    """Parse ``path`` (shown as ``name``); a ``Problem`` instead of a document when it cannot be used."""
    try:
        size = path.stat().st_size
    except OSError as exc:
        return Problem(name, 0, 0, f"cannot read: {exc.strerror or exc}")
    if size > MAX_YAML_BYTES:
        return Problem(name, 0, 0, f"file is too large ({size} bytes; a content YAML file may have at most 5 MiB)")
    try:
        raw = path.read_bytes()
    except OSError as exc:
        return Problem(name, 0, 0, f"cannot read: {exc.strerror or exc}")
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        line = raw[: exc.start].count(b"\n") + 1
        return Problem(name, line, 1, "not UTF-8 text")
    return cache.parse(text, name, yaml) if cache is not None else parse_yaml(text, name, yaml)


def parse_yaml(text: str, name: str, yaml: YAML | None = None) -> YamlDocument | Problem:
    yaml = yaml or new_yaml()
    if text.startswith("\ufeff"):
        text = text[1:]
    try:
        return YamlDocument(name, yaml.load(text), text)
    except MarkedYAMLError as exc:
        return _marked_problem(name, exc)
    except YAMLError as exc:
        return Problem(name, 1, 1, f"invalid YAML: {exc}")
    except RecursionError:
        return Problem(name, 1, 1, f"invalid YAML: nested too deeply (at most {MAX_DEPTH} levels)")


_DUPLICATE = re.compile(r'found duplicate key "(?P<key>.*?)"')


def _marked_problem(name: str, exc: MarkedYAMLError) -> Problem:
    mark = exc.problem_mark or exc.context_mark
    line, column = (mark.line + 1, mark.column + 1) if mark is not None else (1, 1)
    problem = str(exc.problem or exc.context or "").strip()
    if isinstance(exc, AnchorRefused):
        return Problem(name, line, column, problem)
    duplicate = _DUPLICATE.search(problem)
    if duplicate:
        first = exc.context_mark
        where = f" (the mapping starts at line {first.line + 1})" if first is not None else ""
        return Problem(name, line, column, f"duplicate key {duplicate.group('key')!r}{where}")
    if "'\\t'" in problem or "\t" in problem:
        return Problem(
            name, line, column, "tab character where YAML expects spaces (indent and separate values with spaces)"
        )
    if "maximum depth" in problem:
        return Problem(name, line, column, f"invalid YAML: nested too deeply (at most {MAX_DEPTH} levels)")
    if problem.startswith("but ") and exc.context:
        problem = f"{exc.context.strip()}, {problem}"
    return Problem(name, line, column, f"invalid YAML: {problem}")


# --- positions ----------------------------------------------------------------------------------------------------


def value_position(node: Any, part: str | int) -> tuple[int, int] | None:
    """1-based position of ``node[part]`` in a round-trip tree, or ``None`` if it is not there."""
    try:
        if isinstance(node, CommentedMap) and part in node:
            line, column = node.lc.value(part)
        elif isinstance(node, CommentedSeq) and isinstance(part, int) and 0 <= part < len(node):
            line, column = node.lc.item(part)
        else:
            return None
    except (KeyError, TypeError, AttributeError):
        return None
    return line + 1, column + 1


def key_position(node: Any, key: str) -> tuple[int, int] | None:
    if isinstance(node, CommentedMap) and key in node:
        line, column = node.lc.key(key)
        return line + 1, column + 1
    return None


def position_of(document: Any, loc: tuple[str | int, ...], *, at_key: bool = False) -> tuple[int, int]:
    """1-based position of the deepest node of ``loc`` present in ``document``.

    ``at_key``: point at the last key itself rather than its value (for "unknown key" errors).
    """
    node = document
    line, column = start_of(document)
    for index, part in enumerate(loc):
        if at_key and index == len(loc) - 1 and isinstance(part, str):
            found = key_position(node, part)
            return found if found is not None else (line, column)
        found = value_position(node, part)
        if found is None:
            break
        line, column = found
        node = node[part]
    return line, column


def find_in_text(lines: list[str], needle: str, start: tuple[int, int], limit: int = 10_000) -> tuple[int, int] | None:
    """1-based position of the first ``needle`` at or after ``start`` (1-based), within ``limit`` lines."""
    line, column = start
    for index in range(line - 1, min(len(lines), line - 1 + limit)):
        found = lines[index].find(needle, column - 1 if index == line - 1 else 0)
        if found >= 0:
            return index + 1, found + 1
    return None


def start_of(node: Any) -> tuple[int, int]:
    """Where a collection starts (1:1 for a scalar or an empty document)."""
    if isinstance(node, CommentedMap | CommentedSeq) and getattr(node.lc, "line", None) is not None:
        return node.lc.line + 1, node.lc.col + 1
    return 1, 1
