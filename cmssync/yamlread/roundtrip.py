"""The round-trip reader: ruamel's pure-Python parser with the reader's refusals; the authority on every message.

Round-trip mode (ruamel ``typ="rt"``) gives ``CommentedMap``/``CommentedSeq`` whose ``lc`` holds 0-based
positions. Anchors, aliases and tags are refused by :func:`_refusing_composer` before anything is built or expanded;
syntax errors, tabs, duplicate keys and over-deep nesting become one located :class:`~cmssync.errors.Problem` each
(:func:`_marked_problem`).

**One parser state per file.** Every call builds its own ruamel ``YAML`` instance. ruamel's composer counts depth
on the instance and does not reset the count when a load fails, so a shared instance, once it met one over-deep
file, refused every later file as "nested too deeply". A fresh instance costs about 0.2 ms, against about 3 ms to
parse a typical page file (which is why content files go through :mod:`cmssync.yamlread.fast` first).
"""

from __future__ import annotations

import re
from typing import Any

from ruamel.yaml import YAML
from ruamel.yaml.composer import Composer
from ruamel.yaml.constructor import RoundTripConstructor
from ruamel.yaml.error import MarkedYAMLError, YAMLError
from ruamel.yaml.events import AliasEvent
from ruamel.yaml.nodes import ScalarNode

from cmssync.errors import Problem

MAX_DEPTH = 64
MAX_KEYS = 1000
"""Keys in one mapping: page attributes, block values and settings have tens; 400,000 keys took 750 MB to load."""
MAX_NODES = 100_000
"""Values (keys, scalars, lists, mappings) in one file: every one costs a few hundred bytes once loaded and checked,
so a 5 MiB file of tiny values could take hundreds of MB; a page has a few hundred, ``users.yaml`` six a user."""


def too_many_keys() -> str:
    return f"too many keys in one mapping (at most {MAX_KEYS}); split the content"


def too_many_nodes() -> str:
    return f"too many values in one file (at most {MAX_NODES:,}); split the content into more files"


CONTENT_FILES = "content files"
"""The default subject of messages ("… are not allowed in content files")."""


class _Refused(MarkedYAMLError):
    """An anchor, alias or tag: the message is complete as it is."""


def _refusing_composer(subject: str) -> type[Composer]:
    class RefusingComposer(Composer):
        """Stops at the first anchor, alias or tag, before anything is built or expanded."""

        nodes = 0

        def compose_node(self, parent: Any, index: Any) -> Any:
            event = self.parser.peek_event()
            self.nodes += 1
            if self.nodes > MAX_NODES:
                raise _Refused(problem=too_many_nodes(), problem_mark=event.start_mark)
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

        def compose_mapping_node(self, anchor: Any) -> Any:
            node = super().compose_mapping_node(anchor)
            if len(node.value) > MAX_KEYS:
                raise _Refused(problem=too_many_keys(), problem_mark=node.value[MAX_KEYS][0].start_mark)
            return node

    return RefusingComposer


_SURROGATE = re.compile("[\ud800-\udfff]")


class _CheckedConstructor(RoundTripConstructor):
    """Every scalar becomes a value or a located refusal, never an exception from Python itself.

    A plain scalar that YAML types but Python cannot build — an integer of more than 4,300 digits (Python's limit on
    converting text to int), a date that does not exist (``2024-13-45``) — raises ``ValueError`` in ruamel's
    constructor; a ``"\\ud800"`` escape builds a string with a lone surrogate, which no file, request or digest can
    encode later. Both are refused here, where the node's position is known.
    """

    def construct_non_recursive_object(self, node: Any, tag: str | None = None) -> Any:
        if isinstance(node, ScalarNode) and _SURROGATE.search(node.value):
            raise _Refused(
                problem="invalid YAML: an escape (\\uD800–\\uDFFF) for half of a UTF-16 pair is not a character",
                problem_mark=node.start_mark,
            )
        try:
            return super().construct_non_recursive_object(node, tag)
        except (ValueError, OverflowError) as exc:
            if not isinstance(node, ScalarNode):
                raise
            raise _Refused(problem=f"invalid value: {_value_reason(exc)}", problem_mark=node.start_mark) from exc


def _value_reason(exc: Exception) -> str:
    text = str(exc)
    if "integer string conversion" in text:
        return "an integer of more than 4300 digits (quote it to keep it as text)"
    return f"{text} (quote it to keep it as text)"


def _short_tag(tag: Any) -> str:
    text = str(getattr(tag, "value", tag))
    return "!!" + text.removeprefix("tag:yaml.org,2002:") if text.startswith("tag:yaml.org,2002:") else text


def new_yaml(subject: str = CONTENT_FILES) -> YAML:
    """A fresh round-trip YAML instance with the reader's limits: for one file only (see the module docstring)."""
    yaml = YAML(typ="rt")
    yaml.Composer = _refusing_composer(subject)
    yaml.Constructor = _CheckedConstructor
    yaml.max_depth = MAX_DEPTH
    return yaml


def load_roundtrip(text: str, name: str, *, subject: str = CONTENT_FILES) -> Any:
    """The round-trip tree of ``text`` (BOM already removed), or a located ``Problem`` when it is refused."""
    try:
        return new_yaml(subject).load(text)
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
