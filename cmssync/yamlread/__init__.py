"""The one YAML reader: content files and ``cmssync.yaml`` are read by the same rules, keeping source positions.

Refused before anything is built, each as one located :class:`~cmssync.errors.Problem`:

* files over the caller's size limit (checked with ``stat`` before reading, so a huge file costs nothing);
* text that is not UTF-8;
* YAML syntax errors, tabs used for indentation, duplicate keys;
* anchors and aliases (``&a`` / ``*a``): neither content nor settings have a use for them, and refusing them
  outright is the simplest complete defence against alias bombs ("billion laughs"), whose expansion is exponential
  in the file's size;
* tags (``!!str``, ``!include``): a tag asks the loader to build something other than plain data;
* nesting deeper than :data:`MAX_DEPTH`, more than :data:`~cmssync.yamlread.roundtrip.MAX_KEYS` keys in a mapping or
  :data:`~cmssync.yamlread.roundtrip.MAX_NODES` values in a file (memory is bounded by what is read);
* values Python cannot build or encode: integers of more than 4,300 digits, dates that do not exist, escapes of
  lone UTF-16 surrogates (``"\\ud800"``).

Two trees, one set of rules:

* :func:`parse_yaml` gives ruamel's round-trip tree (``CommentedMap``/``CommentedSeq``; the settings loader reads
  ``cmssync.yaml`` this way), parsed by :mod:`~cmssync.yamlread.roundtrip`, which words every refusal;
* :func:`parse_located` gives a :mod:`located tree <cmssync.yamlread.located>` (plain ``dict``/``list`` with
  positions), built by libyaml's C parser (:mod:`~cmssync.yamlread.fast`, about 30 times faster) whenever it can
  vouch for the text, and from the round-trip reader's tree otherwise — so a refused file gets the round-trip
  reader's message, and an accepted one the same data and positions either way.

:func:`position_of` and its kin turn a pydantic error ``loc`` into a 1-based ``(line, column)`` in either tree.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from cmssync.errors import Problem
from cmssync.yamlread import fast
from cmssync.yamlread.located import (
    YamlList,
    YamlMap,
    from_roundtrip,
    key_position,
    position_of,
    start_of,
    value_position,
)
from cmssync.yamlread.roundtrip import CONTENT_FILES, MAX_DEPTH, load_roundtrip, new_yaml

__all__ = [
    "CONTENT_FILES",
    "MAX_DEPTH",
    "YamlDocument",
    "YamlList",
    "YamlMap",
    "key_position",
    "new_yaml",
    "parse_located",
    "parse_yaml",
    "position_of",
    "read_yaml_file",
    "read_yaml_text",
    "start_of",
    "value_position",
]


@dataclass(frozen=True)
class YamlDocument:
    """A parsed file: its POSIX name as shown in messages, the tree (``None`` when empty) and its text (to point
    into multi-line strings)."""

    name: str
    data: Any
    text: str = ""
    values: int = 0
    """How many values (keys, scalars, lists, mappings) the located tree holds (:func:`parse_located` only)."""


def read_yaml_file(
    path: Path, name: str, *, max_bytes: int, limit_text: str, subject: str = CONTENT_FILES
) -> YamlDocument | Problem:
    """Read and parse ``path`` (shown as ``name``) round-trip; a ``Problem`` instead of a document when it cannot
    be used.

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
    """The round-trip tree of ``text``, parsed with a parser state of its own; a located ``Problem`` when it is
    refused."""
    text = text.removeprefix("\ufeff")
    data = load_roundtrip(text, name, subject=subject)
    return data if isinstance(data, Problem) else YamlDocument(name, data, text)


def parse_located(text: str, name: str, *, subject: str = CONTENT_FILES) -> YamlDocument | Problem:
    """The located tree of ``text`` (see the module docstring); a located ``Problem`` when it is refused."""
    text = text.removeprefix("\ufeff")
    try:
        tree, values = fast.compose_counted(text)
        return YamlDocument(name, tree, text, values)
    except fast.Unsure:
        pass
    except fast.TooLarge as exc:
        return Problem(name, exc.line, exc.column, exc.message)
    data = load_roundtrip(text, name, subject=subject)
    if isinstance(data, Problem):
        return data
    tree = from_roundtrip(data)
    return YamlDocument(name, tree, text, _count_values(tree))


def _count_values(tree: Any) -> int:
    """Values in a located tree, counted as the fast path counts them (a mapping's keys too)."""
    if isinstance(tree, dict):
        return 1 + sum(1 + _count_values(value) for value in tree.values())
    if isinstance(tree, list):
        return 1 + sum(_count_values(item) for item in tree)
    return 1
