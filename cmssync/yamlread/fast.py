"""The fast path: libyaml's C parser (``ruamel.yaml.clib``) builds a located tree, or says it is not sure.

ruamel's round-trip parser is pure Python, about 3 ms for a page file; libyaml parses the same file in C and hands
back events that carry their start marks, so a small composer here builds the :mod:`located tree
<cmssync.yamlread.located>` in about 0.1 ms. It is a fast path only, never a second set of rules:

* it accepts only what it can vouch for, and raises :class:`Unsure` for everything else — any syntax error, a tab
  anywhere in the text (YAML's tab rules are where parsers differ most), a directive (``%YAML``, ``%TAG``), a
  document end marker (``...``), more than one document, an anchor, alias or tag, a duplicate or non-scalar key, a
  merge key (``<<``), nesting deeper than ``MAX_DEPTH``, a plain scalar it cannot type, an empty value that ruamel
  places by rules of its own (in a flow collection, before a comment or an explicit ``? key``, at the end of a
  text without a final line break, a lone ``-``) — and the caller then reads the file with the round-trip reader
  (:mod:`cmssync.yamlread.roundtrip`), whose verdict and message are the reader's, word for word;
* plain scalars are typed by ruamel's own YAML 1.2 resolver and constructed by ruamel's round-trip constructor
  (``0o17``, ``1_000``, dates, ``.inf`` …), so a value reads the same either way; strings become plain ``str``;
* positions are libyaml's marks, which are ruamel's (its parser is a port of libyaml's): the key's start, the
  value's start, the item's start, the collection's start; an empty value (``key:``) is placed where the next
  token starts, as ruamel places it.

``tests/content/test_yaml_fast.py`` holds the two readers to the same data and positions on the whole test corpus
and on generated documents. Without the C extension (:data:`AVAILABLE` is false) every file takes the round-trip
path: slower, identical.
"""

from __future__ import annotations

import re
from typing import Any, Final

from ruamel.yaml import YAML
from ruamel.yaml.events import (
    MappingEndEvent,
    MappingStartEvent,
    ScalarEvent,
    SequenceEndEvent,
    SequenceStartEvent,
    StreamEndEvent,
)
from ruamel.yaml.nodes import ScalarNode

from cmssync.yamlread.located import YamlList, YamlMap
from cmssync.yamlread.roundtrip import MAX_DEPTH, MAX_KEYS, MAX_NODES, too_many_keys, too_many_nodes

try:
    from ruamel.yaml.cyaml import CParser  # type: ignore[attr-defined]
except ImportError:  # ruamel.yaml.clib is not installed: every file is read round-trip
    CParser = None

AVAILABLE: Final = CParser is not None


class Unsure(Exception):
    """The fast path cannot vouch for this text; the round-trip reader decides."""


class TooLarge(Exception):
    """More keys in a mapping, or values in the file, than the reader takes: refused here, in the round-trip
    reader's words (``line`` and ``column`` 1-based), without parsing the rest."""

    def __init__(self, line: int, column: int, message: str) -> None:
        super().__init__(message)
        self.line, self.column, self.message = line, column, message


_STR = "tag:yaml.org,2002:str"
_NULL = "tag:yaml.org,2002:null"
_CONSTRUCTED = frozenset(
    {"tag:yaml.org,2002:bool", "tag:yaml.org,2002:int", "tag:yaml.org,2002:float", "tag:yaml.org,2002:timestamp"}
)
"""Tags whose values ruamel's round-trip constructor builds for us; any other resolved tag is :class:`Unsure`."""

_yaml = YAML(typ="rt")
_RESOLVER = _yaml.resolver
_CONSTRUCTOR = _yaml.constructor
_TYPED_FIRST: Final = frozenset(key for key in _RESOLVER.versioned_resolver if key)
"""First characters for which YAML 1.2 may type a plain scalar; any other plain scalar is a string."""
_EVERY_FIRST: Final = bool(_RESOLVER.versioned_resolver.get(None))
_LINE_BREAK: Final = re.compile("\r\n|[\r\n\x85\u2028\u2029]")
"""YAML's line breaks, as libyaml and ruamel count lines."""
_NONE: Final = object()
_tags: dict[str, str] = {}
"""Resolved tag by plain value (short values only): most plain values recur from file to file."""


def compose(text: str) -> Any:
    """The located tree of ``text`` (a BOM already removed), ``None`` for an empty document; :class:`Unsure` when
    the round-trip reader must decide."""
    return compose_counted(text)[0]


def compose_counted(text: str) -> tuple[Any, int]:
    """:func:`compose`, and how many values (keys, scalars, lists, mappings) the tree holds."""
    if CParser is None or "\t" in text:
        raise Unsure
    try:
        parser = CParser(text)
        get = parser.get_event
        get()  # the stream start
        event = get()
        if type(event) is StreamEndEvent:
            return None, 0
        if event.version is not None or event.tags:
            raise Unsure
        nodes = [0]
        root = _node(get, get(), 0, _LINE_BREAK.split(text), nodes)
        if get().explicit or type(get()) is not StreamEndEvent:
            raise Unsure  # a document end marker (``...``: the readers count documents differently), or a second
    except (Unsure, TooLarge):
        raise
    except Exception as exc:  # a syntax error (or anything else): the round-trip reader words it
        raise Unsure from exc
    return root, nodes[0]


def _node(get: Any, event: Any, depth: int, lines: list[str], nodes: list[int]) -> Any:
    if event.anchor is not None or event.tag is not None or depth >= MAX_DEPTH:
        raise Unsure
    nodes[0] += 1
    if nodes[0] > MAX_NODES:
        raise TooLarge(event.start_mark.line + 1, event.start_mark.column + 1, too_many_nodes())
    kind = type(event)
    if kind is ScalarEvent:
        return _scalar(event)
    mark = event.start_mark
    if kind is MappingStartEvent:
        return _mapping(get, event, depth, lines, nodes)
    if kind is SequenceStartEvent:
        sequence = YamlList((mark.line + 1, mark.column + 1))
        positions = sequence.at
        while True:
            item_event = get()
            if type(item_event) is SequenceEndEvent:
                return sequence
            if _is_empty(item_event):
                raise Unsure  # "- " alone: ruamel places it by rules of its own
            sequence.append(_node(get, item_event, depth + 1, lines, nodes))
            item_mark = item_event.start_mark
            positions.append((item_mark.line + 1, item_mark.column + 1))
    raise Unsure  # an alias


def _mapping(get: Any, event: Any, depth: int, lines: list[str], nodes: list[int]) -> YamlMap:
    mark = event.start_mark
    mapping = YamlMap((mark.line + 1, mark.column + 1))
    at = mapping.at
    empty_key: Any = _NONE
    """A key whose value is empty (``key:``): placed where the next token starts, as ruamel places it."""
    key_line = key_column = 0
    while True:
        key_event = get()
        if empty_key is not _NONE:
            next_mark = key_event.start_mark
            if next_mark.line >= len(lines):
                raise Unsure  # the end of a text without a final line break: ruamel places it there
            if type(key_event) is not MappingEndEvent and lines[next_mark.line][: next_mark.column].strip():
                raise Unsure  # the next key follows an indicator (``? key``): ruamel places it after that
            at[empty_key] = (key_line, key_column, next_mark.line + 1, next_mark.column + 1)
            empty_key = _NONE
        if type(key_event) is MappingEndEvent:
            return mapping
        if type(key_event) is not ScalarEvent or _is_empty(key_event):
            raise Unsure  # a mapping, a sequence or nothing as a key
        key = _node(get, key_event, depth + 1, lines, nodes)
        if key in mapping:
            raise Unsure  # a duplicate key: the reader words it
        if len(mapping) >= MAX_KEYS:
            raise TooLarge(key_event.start_mark.line + 1, key_event.start_mark.column + 1, too_many_keys())
        value_event = get()
        key_mark, value_mark = key_event.start_mark, value_event.start_mark
        key_line, key_column = key_mark.line + 1, key_mark.column + 1
        if _is_empty(value_event):
            rest = lines[value_mark.line][value_mark.column :] if value_mark.line < len(lines) else ""
            if event.flow_style or rest.lstrip().startswith("#"):
                raise Unsure  # ruamel places these empty values by rules of its own
            mapping[key] = None
            empty_key = key
            continue
        mapping[key] = _node(get, value_event, depth + 1, lines, nodes)
        at[key] = (key_line, key_column, value_mark.line + 1, value_mark.column + 1)


def _is_empty(event: Any) -> bool:
    """An empty plain scalar: a value (or key, or item) left out, which is ``null``."""
    return (
        type(event) is ScalarEvent
        and not event.style
        and not event.value
        and event.tag is None
        and event.anchor is None
    )


def _scalar(event: Any) -> Any:
    value: str = event.value
    if event.style:  # quoted, literal or folded: always a string
        return value
    if value and value[0] not in _TYPED_FIRST and not _EVERY_FIRST:
        return value
    tag = _tags.get(value)
    if tag is None:
        tag = str(_RESOLVER.resolve(ScalarNode, value, (True, False)))
        if len(value) <= 32 and len(_tags) < 4096:
            _tags[value] = tag
    if tag == _STR:
        return value
    if tag == _NULL:
        return None
    if tag not in _CONSTRUCTED:
        raise Unsure
    return _CONSTRUCTOR.construct_non_recursive_object(ScalarNode(tag, value, event.start_mark, event.end_mark))
