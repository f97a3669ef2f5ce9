"""Located trees: plain ``dict``/``list`` data that remembers where each key, value and item is written.

The content is read into :class:`YamlMap` and :class:`YamlList`: a ``dict`` and a ``list`` (pydantic and every
other reader see plain data) with a ``start`` and one position per key or item, all 1-based ``(line, column)``.
Building them costs about one tuple per entry, against ruamel's ``CommentedMap`` whose ``__setitem__`` and
line/column bookkeeping run in Python for every key.

The position functions (:func:`position_of`, :func:`value_position`, :func:`key_position`, :func:`start_of`) work
on located trees and on ruamel round-trip trees alike (``cmssync.yaml`` is still read round-trip by the settings
loader), so every message is located the same way whichever reader built the tree.
"""

from __future__ import annotations

from typing import Any

from ruamel.yaml.comments import CommentedMap, CommentedSeq

Position = tuple[int, int]


class YamlMap(dict[Any, Any]):
    """A mapping with its start and, per key, ``(key line, key column, value line, value column)``."""

    __slots__ = ("at", "start")

    def __init__(self, start: Position = (1, 1)) -> None:
        super().__init__()
        self.start = start
        self.at: dict[Any, tuple[int, int, int, int]] = {}


class YamlList(list[Any]):
    """A sequence with its start and the position of each item."""

    __slots__ = ("at", "start")

    def __init__(self, start: Position = (1, 1)) -> None:
        super().__init__()
        self.start = start
        self.at: list[Position] = []


def from_roundtrip(node: Any) -> Any:
    """The located tree of a ruamel round-trip tree (the same data, the same positions)."""
    if isinstance(node, CommentedMap):
        mapping = YamlMap(start_of(node))
        for key, value in node.items():
            mapping[key] = from_roundtrip(value)
            found = (node.lc.data or {}).get(key)
            if found is not None:  # a key merged in with ``<<`` has no position of its own
                key_line, key_column, value_line, value_column = found
                mapping.at[key] = (key_line + 1, key_column + 1, value_line + 1, value_column + 1)
        return mapping
    if isinstance(node, CommentedSeq):
        sequence = YamlList(start_of(node))
        for index, item in enumerate(node):
            line, column = node.lc.item(index)
            sequence.append(from_roundtrip(item))
            sequence.at.append((line + 1, column + 1))
        return sequence
    if isinstance(node, str) and type(node) is not str:
        return str(node)  # LiteralScalarString and its kin: the text is what counts
    return node


def value_position(node: Any, part: str | int) -> Position | None:
    """1-based position of ``node[part]``, or ``None`` if it is not there."""
    if isinstance(node, YamlMap):
        try:
            found = node.at.get(part)
        except TypeError:
            return None
        return (found[2], found[3]) if found is not None else None
    if isinstance(node, YamlList):
        return node.at[part] if isinstance(part, int) and 0 <= part < len(node) else None
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


def key_position(node: Any, key: str) -> Position | None:
    """1-based position of the key ``key`` itself, or ``None`` if it is not there."""
    if isinstance(node, YamlMap):
        found = node.at.get(key)
        return (found[0], found[1]) if found is not None else None
    if isinstance(node, CommentedMap) and key in node:
        line, column = node.lc.key(key)
        return line + 1, column + 1
    return None


def position_of(document: Any, loc: tuple[str | int, ...], *, at_key: bool = False) -> Position:
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


def start_of(node: Any) -> Position:
    """Where a collection starts (1:1 for a scalar or an empty document)."""
    if isinstance(node, YamlMap | YamlList):
        return node.start
    if isinstance(node, CommentedMap | CommentedSeq) and getattr(node.lc, "line", None) is not None:
        return node.lc.line + 1, node.lc.col + 1
    return 1, 1
