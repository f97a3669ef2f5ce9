"""A fast writer for new YAML files: the exact text ruamel's round-trip dumper gives for fresh data, ~20x faster.

``cmssync pull`` writes thousands of new page files, where there is no round-trip tree (comments, quoting) to keep;
ruamel's pure-Python representer, serializer and emitter cost ~2 ms a page. libyaml's C emitter (ruamel.yaml.clib)
cannot write these files: it writes block sequences without the ``offset`` indent (``- item`` under its key, not
``  - item``) and never chooses a literal block (``|``), so its bytes differ. :func:`dump_fresh` writes the shapes
content files take — block mappings and sequences, ``{}``/``[]``, the one-line ``keep:`` placeholder, strings,
ints, booleans, nulls — with the layout of :func:`cmssync.content.writer._yaml` (``indent(mapping=2, sequence=4,
offset=2)``, width 4096); each string's style is decided by ruamel's own analysis and resolver, as ruamel decides it.
Anything else (a float, a list in a list, a long key, a line that could reach the width, a string that would fold) is
``None``: the caller dumps it with ruamel. ``tests/content/test_yaml_emit.py`` compares both on generated data and on
every page of the every-block-type site.
"""

from __future__ import annotations

import re
from functools import lru_cache
from typing import Any

from ruamel.yaml import YAML
from ruamel.yaml.nodes import ScalarNode

WIDTH = 4096
"""Lines are never re-wrapped below this width (``YAML.width``)."""
_ROOM = WIDTH - 96
"""A line this fast path writes stays below this column, where ruamel would start to fold a scalar."""
_STR_TAG = "tag:yaml.org,2002:str"
_PLAIN = re.compile(r"(?:<[A-Za-z/]|[a-eg-mp-su-xzA-EG-MP-SU-XZ])[ -\"$-9;-~]*(?<! )")
"""Strings ruamel writes plain in block context: printable ASCII without ``#`` or ``:``, not ending with a space,
starting with a letter no implicit type begins with (``true``, ``null``, ``no``, ``on``…; YAML 1.1's too) or with an
HTML tag (``<`` alone matters only as the merge key ``<<``). ``tests/content/test_yaml_emit.py`` checks it against
ruamel's own analysis."""
_BREAKS = "\n\r\x85\u2028\u2029"
_ESCAPES = {
    "\0": "0", "\x07": "a", "\x08": "b", "\t": "t", "\n": "n", "\x0b": "v", "\x0c": "f", "\r": "r", "\x1b": "e",
    '"': '"', "\\": "\\", "\x85": "N", "\u2028": "L", "\u2029": "P",
}  # fmt: skip


class _Unsupported(Exception):
    """The data has a shape the fast path does not write: ruamel writes it."""


def layout(yaml: YAML) -> YAML:
    """``yaml`` set to the layout content files are written in (and this module writes)."""
    yaml.indent(mapping=2, sequence=4, offset=2)
    yaml.width = WIDTH
    return yaml


_YAML = layout(YAML(typ="rt"))
_ANALYZE = _YAML.emitter.analyze_scalar
_RESOLVE = _YAML.resolver.resolve


def literal_block_safe(text: str) -> bool:
    """A literal block keeps ``text`` exactly only without trailing spaces, tabs, odd line breaks or leading
    blank/indented first lines."""
    if "\n" not in text.rstrip("\n") or text.startswith((" ", "\n")) or text.endswith("\n\n"):
        return False
    if any(ch in text for ch in "\r\t\x85\u2028\u2029") or not text.replace("\n", "").isprintable():
        return False
    return all(line == line.rstrip() for line in text.split("\n"))


def dump_fresh(data: Any) -> str | None:
    """The text ruamel's round-trip dumper writes for ``writer.fresh(data)``, or None when this path cannot say."""
    out: list[str] = []
    try:
        if isinstance(data, dict) and data:
            _mapping(data, 0, "", out)
        elif isinstance(data, list | tuple) and data:
            _sequence(data, 2, out)
        else:
            return None
    except _Unsupported:
        return None
    return "".join(out)


def _mapping(data: dict[Any, Any], indent: int, lead: str, out: list[str]) -> None:
    """A block mapping whose keys start at ``indent``; the first line starts with ``lead`` (a sequence's dash)."""
    placeholder = len(data) == 1 and isinstance(data.get("keep"), dict)
    for index, (key, value) in enumerate(data.items()):
        head = f"{lead if index == 0 else ' ' * indent}{_key(key, flow=False)}:"
        if placeholder and value:
            out.append(_checked(f"{head} {_flow_mapping(value)}\n"))
        else:
            _value(value, indent, head, out)


def _value(value: Any, indent: int, head: str, out: list[str]) -> None:
    if isinstance(value, dict):
        if not value:
            out.append(f"{head} {{}}\n")
            return
        out.append(head + "\n")
        _mapping(value, indent + 2, " " * (indent + 2), out)
    elif isinstance(value, list | tuple):
        if not value:
            out.append(f"{head} []\n")
            return
        out.append(head + "\n")
        _sequence(value, indent + 2, out)
    elif value is None:
        out.append(head + "\n")
    else:
        out.append(_scalar(value, head + " ", indent + 2))


def _sequence(items: Any, indent: int, out: list[str]) -> None:
    """A block sequence whose dashes are at ``indent`` (its items' text at ``indent + 2``)."""
    dash = " " * indent + "- "
    for item in items:
        if isinstance(item, dict):
            if item:
                _mapping(item, indent + 2, dash, out)
            else:
                out.append(dash + "{}\n")
        elif isinstance(item, list | tuple):
            raise _Unsupported  # ruamel writes a sequence in a sequence on the dash's line
        elif item is None:
            out.append(dash + "\n")
        else:
            out.append(_scalar(item, dash, indent + 2))


def _scalar(value: Any, head: str, indent: int) -> str:
    """``head`` and the scalar, ending with a line break (a literal block's lines at ``indent``)."""
    if type(value) is str and literal_block_safe(value):
        text = value[:-1] if value.endswith("\n") else value
        lines = "".join(f"{' ' * indent}{line}\n" if line else "\n" for line in text.split("\n"))
        return _checked(f"{head}|{'' if value.endswith(chr(10)) else '-'}\n{lines}")
    return _checked(f"{head}{_plain_scalar(value, flow=False)}\n")


def _plain_scalar(value: Any, *, flow: bool) -> str:
    if type(value) is bool:
        return "true" if value else "false"
    if type(value) is int:
        return str(value)
    if type(value) is str:
        return _string(value, key=False, flow=flow)
    raise _Unsupported  # floats (ruamel formats them its own way), str subclasses, dates…


# A text beginning like an explicit key or a value (``? q``, ``: v``) in a flow mapping: ruamel's emitter writes
# it plain there, which no YAML reader takes back.
EXPLICIT_KEY = re.compile(r"[?:][ \t]")


def _flow_mapping(data: dict[Any, Any]) -> str:
    """The one-line ``{type: gallery, id: 104}`` of a ``keep:`` placeholder."""
    parts = []
    for key, value in data.items():
        if isinstance(value, dict | list | tuple) or value is None:
            raise _Unsupported
        if type(value) is str and literal_block_safe(value):
            raise _Unsupported  # a literal block's text in a flow mapping: ruamel double-quotes it
        if type(value) is str and EXPLICIT_KEY.match(value):
            raise _Unsupported  # ruamel would write it plain, unreadable: the writer quotes it (writer.fresh)
        parts.append(f"{_key(key, flow=True)}: {_plain_scalar(value, flow=True)}")
    return "{" + ", ".join(parts) + "}"


def _key(key: Any, *, flow: bool) -> str:
    """A simple key (ruamel writes a long or multi-line one as ``? key``)."""
    if type(key) is not str or len(key) > 100 or any(ch in key for ch in _BREAKS):
        raise _Unsupported
    return _string(key, key=True, flow=flow)


def _checked(text: str) -> str:
    """``text`` when none of its lines reaches the column where ruamel folds scalars."""
    if len(text) >= _ROOM and any(len(line) >= _ROOM for line in text.split("\n")):
        raise _Unsupported
    return text


@lru_cache(maxsize=4096)
def _string(value: str, *, key: bool, flow: bool) -> str:
    """A string as ruamel's emitter writes it in this context: plain where it reads back as the same string,
    else single-quoted, else double-quoted (``Emitter.choose_scalar_style`` for an unstyled ``str`` scalar)."""
    if value == "":
        return "''"
    if not key and not flow and _PLAIN.fullmatch(value):
        return value  # most texts: what ruamel's analysis and resolver would find, without asking them
    analysis = _ANALYZE(value)
    plain = str(_RESOLVE(ScalarNode, value, (True, False))) == _STR_TAG
    if (
        plain
        and not (key and (analysis.empty or analysis.multiline))
        and (analysis.allow_flow_plain if flow else analysis.allow_block_plain)
    ):
        return value
    if analysis.allow_double_quoted and ("'" in value or "\n" in value):
        return _double_quoted(value)
    if analysis.allow_single_quoted and not (key and analysis.multiline):
        if any(ch in value for ch in _BREAKS):
            raise _Unsupported  # ruamel folds line breaks in single quotes
        return "'" + value.replace("'", "''") + "'"
    return _double_quoted(value)


def _double_quoted(text: str) -> str:
    """``Emitter.write_double_quoted`` without folding (the line stays below the width)."""
    return '"' + "".join(ch if _printable(ch) else _escape(ch) for ch in text) + '"'


def _printable(ch: str) -> bool:
    if ch in '"\\\x85\u2028\u2029\ufeff':
        return False
    return (
        "\x20" <= ch <= "\x7e"
        or "\xa0" <= ch <= "\ud7ff"
        or "\ue000" <= ch <= "\ufffd"
        or "\U00010000" <= ch <= "\U0010ffff"
    )


def _escape(ch: str) -> str:
    if ch in _ESCAPES:
        return "\\" + _ESCAPES[ch]
    if ch <= "\xff":
        return f"\\x{ord(ch):02X}"
    if ch <= "\uffff":
        return f"\\u{ord(ch):04X}"
    return f"\\U{ord(ch):08X}"
