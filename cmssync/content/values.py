"""``${value:NAME}``: a named value of the settings (``values``, which an environment may override: a banner, an
analytics snippet) in any text of a page or stack file.

The value is put in place when the file is read, before the file is validated, so the rest of cmssync sees the
text as if it had been written with the value (``$${value:…}`` stays a literal ``${value:…}``; a value holding
``${`` is taken literally). ``pull`` keeps the reference in a file when the site holds what it stands for (its
merge compares the file as read this way), so the same content applies to every environment with its own values.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from typing import Any

VALUE_REFERENCE = re.compile(r"(?<!\$)\$\{value:(?P<name>[^{}]*)\}")
MARKER = "${value:"


def substitute(text: str, values: Mapping[str, str]) -> str:
    """``text`` with each ``${value:NAME}`` replaced by its value; ``ValueError`` naming an unknown one."""

    def value(match: re.Match[str]) -> str:
        name = match.group("name")
        if name not in values:
            known = ", ".join(sorted(values)) or "none are set"
            raise ValueError(f"${{value:{name}}}: no value {name!r} in the settings' values (known: {known})")
        return values[name].replace("${", "$${")

    return VALUE_REFERENCE.sub(value, text)


def substitute_tree(node: Any, values: Mapping[str, str], problem: Callable[[Any, Any, str], None]) -> Any:
    """Every string of a YAML tree (mappings and lists changed in place, so positions stay) with its values put
    in; ``problem(container, key, message)`` is told of each unknown name."""
    items = node.items() if isinstance(node, dict) else enumerate(node) if isinstance(node, list) else ()
    for key, child in list(items):
        if isinstance(child, str):
            if MARKER in child:
                try:
                    node[key] = substitute(child, values)
                except ValueError as exc:
                    problem(node, key, str(exc))
        else:
            substitute_tree(child, values, problem)
    return node


def with_values(data: Any, values: Mapping[str, str]) -> Any:
    """A copy of plain data (a page file as read) with its values put in, as the loader reads it."""
    if isinstance(data, dict):
        return {key: with_values(child, values) for key, child in data.items()}
    if isinstance(data, list):
        return [with_values(child, values) for child in data]
    return substitute(data, values) if isinstance(data, str) and MARKER in data else data
