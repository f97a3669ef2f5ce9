"""The one YAML reader: content files and ``cmssync.yaml`` are read by the same rules, keeping source positions.

Round-trip mode (ruamel ``typ="rt"``) gives ``CommentedMap``/``CommentedSeq`` whose ``lc`` holds 0-based
positions; :func:`position_of` turns a pydantic error ``loc`` into a 1-based ``(line, column)``.

Refused before anything is built, each as one located :class:`~cmssync.errors.Problem`:

* files over the caller's size limit (checked with ``stat`` before reading, so a huge file costs nothing);
* text that is not UTF-8;
* YAML syntax errors, tabs used for indentation, duplicate keys;
* anchors and aliases (``&a`` / ``*a``): neither content nor settings have a use for them, and refusing them
  outright is the simplest complete defence against alias bombs ("billion laughs"), whose expansion is exponential
  in the file's size;
* tags (``!!str``, ``!include``): a tag asks the loader to build something other than plain data;
* nesting deeper than :data:`MAX_DEPTH`.

**One parser state per file.** Every call builds its own ruamel ``YAML`` instance. ruamel's composer counts depth
on the instance and does not reset the count when a load fails, so a shared instance, once it met one over-deep
file, refused every later file as "nested too deeply". A fresh instance costs about 0.2 ms, against about 3 ms to
parse a typical page file.
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

MAX_DEPTH = 64
CONTENT_FILES = "content files"
"""The default subject of messages ("… are not allowed in content files")."""


class _Refused(MarkedYAMLError):
    """An anchor, alias or tag: the message is complete as it is."""


def _refusing_composer(subject: str) -> type[Composer]:
    class RefusingComposer(Composer):
        """Stops at the first anchor, alias or tag, before anything is built or expanded."""

        def compose_node(self, parent: Any, index: Any) -> Any:
            event = self.parser.peek_event()
            if isinstance(event, AliasEvent) or getattr(event, "anchor", None) is not None:
                raise _Refused(
                    problem=f"anchors and aliases (&name, *name) are not allowed in {subject}; write values out",
                    problem_mark=event.start_mark,
                )
            tag = getattr(event, "tag", None)
            if tag is not None:
                raise _Refused(
                    problem=f"tags are not allowed in {subject} (found {_short_tag(tag)}); write the value plainly",
                    problem_mark=event.start_mark,
                )
            return super().compose_node(parent, index)

    return RefusingComposer


def _short_tag(tag: Any) -> str:
    text = str(getattr(tag, "value", tag))
    return "!!" + text.removeprefix("tag:yaml.org,2002:") if text.startswith("tag:yaml.org,2002:") else text


def new_yaml(subject: str = CONTENT_FILES) -> YAML:
    """A fresh round-trip YAML instance with the reader's limits: for one file only (see the module docstring)."""
    yaml = YAML(typ="rt")
    yaml.Composer = _refusing_composer(subject)
    yaml.max_depth = MAX_DEPTH
    return yaml


@dataclass(frozen=True)
class YamlDocument:
    """A parsed file: its POSIX name as shown in messages, the round-trip tree (``None`` when empty) and its text
    (to point into multi-line strings)."""

    name: str
    data: Any
    text: str = ""


def read_yaml_file(
    path: Path, name: str, *, max_bytes: int, limit_text: str, subject: str = CONTENT_FILES
) -> YamlDocument | Problem:
    """Read and parse ``path`` (shown as ``name``); a ``Problem`` instead of a document when it cannot be used.

    ``limit_text`` completes "file is too large (N bytes; …)", e.g. "a content YAML file may have at most 5 MiB".
    """
    text = read_yaml_text(path, name, max_bytes=max_bytes, limit_text=limit_text)
    return text if isinstance(text, Problem) else parse_yaml(text, name, subject=subject)


def read_yaml_text(path: Path, name: str, *, max_bytes: int, limit_text: str) -> str | Problem:
    """The UTF-8 text of ``path``, or a ``Problem`` (too large, unreadable, not UTF-8)."""
    try:
        size = path.stat().st_size
    except OSError as exc:
        return Problem(name, 0, 0, f"cannot read: {exc.strerror or exc}")
    if size > max_bytes:
        return Problem(name, 0, 0, f"file is too large ({size} bytes; {limit_text})")
    try:
        raw = path.read_bytes()
    except OSError as exc:
        return Problem(name, 0, 0, f"cannot read: {exc.strerror or exc}")
    try:
        return raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        line = raw[: exc.start].count(b"\n") + 1
        return Problem(name, line, 1, "not UTF-8 text")


def parse_yaml(text: str, name: str, *, subject: str = CONTENT_FILES) -> YamlDocument | Problem:
    """Parse ``text`` with a parser state of its own; a located ``Problem`` when it is refused."""
    text = text.removeprefix("\ufeff")
    try:
        return YamlDocument(name, new_yaml(subject).load(text), text)
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
    if isinstance(exc, _Refused):
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


def start_of(node: Any) -> tuple[int, int]:
    """Where a collection starts (1:1 for a scalar or an empty document)."""
    if isinstance(node, CommentedMap | CommentedSeq) and getattr(node.lc, "line", None) is not None:
        return node.lc.line + 1, node.lc.col + 1
    return 1, 1
