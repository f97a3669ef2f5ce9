"""Reading one YAML file of the content: the content's limits on :mod:`cmssync.yamlread`, and a parse cache.

The rules (size, UTF-8, syntax, duplicate keys, no anchors, aliases or tags, depth, positions) are those of the one
reader that ``cmssync.yaml`` is read with as well (:mod:`cmssync.yamlread`); this module adds the content's size
limit (:data:`MAX_YAML_BYTES`) and :class:`ParseCache` for long-lived callers. Every file is parsed with a parser
state of its own, so one bad file cannot change how the next one is read.
"""

from __future__ import annotations

from pathlib import Path

from cmssync.errors import Problem
from cmssync.yamlread import (
    MAX_DEPTH,
    YamlDocument,
    key_position,
    parse_yaml,
    position_of,
    read_yaml_text,
    start_of,
    value_position,
)

__all__ = [
    "MAX_DEPTH",
    "MAX_YAML_BYTES",
    "ParseCache",
    "YamlDocument",
    "find_in_text",
    "key_position",
    "parse_yaml",
    "position_of",
    "read_yaml",
    "start_of",
    "value_position",
]

MAX_YAML_BYTES = 5 * 1024 * 1024
LIMIT_TEXT = "a content YAML file may have at most 5 MiB"


class ParseCache:
    """Parsed documents by name, reused while a file's text is unchanged.

    For long-lived callers (the daemon re-loads the whole content on every run, and parsing with ruamel's pure-Python
    round-trip parser is nearly all of that time). The cached trees are shared between loads, which is safe because
    the loader only reads them.
    """

    def __init__(self) -> None:
        self._documents: dict[str, YamlDocument] = {}

    def parse(self, text: str, name: str) -> YamlDocument | Problem:
        cached = self._documents.get(name)
        if cached is not None and cached.text == text.removeprefix("\ufeff"):
            return cached
        result = parse_yaml(text, name)
        if isinstance(result, YamlDocument):
            self._documents[name] = result
        else:
            self._documents.pop(name, None)
        return result


def read_yaml(path: Path, name: str, *, cache: ParseCache | None = None) -> YamlDocument | Problem:
    """Parse the content file ``path`` (shown as ``name``); a ``Problem`` instead of a document when it cannot be
    used."""
    text = read_yaml_text(path, name, max_bytes=MAX_YAML_BYTES, limit_text=LIMIT_TEXT)
    if isinstance(text, Problem):
        return text
    return cache.parse(text, name) if cache is not None else parse_yaml(text, name)


def find_in_text(lines: list[str], needle: str, start: tuple[int, int], limit: int = 10_000) -> tuple[int, int] | None:
    """1-based position of the first ``needle`` at or after ``start`` (1-based), within ``limit`` lines."""
    line, column = start
    for index in range(line - 1, min(len(lines), line - 1 + limit)):
        found = lines[index].find(needle, column - 1 if index == line - 1 else 0)
        if found >= 0:
            return index + 1, found + 1
    return None
