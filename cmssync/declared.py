"""Tables found by listing a package (block types, the content's list kinds): every module of the package that
declares a value of one type under one name, imported in name order. Adding to such a table is adding a module."""

from __future__ import annotations

import importlib
import pkgutil
from collections.abc import Iterable
from typing import TypeVar

T = TypeVar("T")


def declared(package: str, path: Iterable[str], name: str, kind: type[T]) -> list[T]:
    """The ``name`` of each module of ``package`` (found on ``path``, its ``__path__``) that is a ``kind``."""
    found: list[T] = []
    for module in pkgutil.iter_modules(list(path)):
        value = getattr(importlib.import_module(f"{package}.{module.name}"), name, None)
        if isinstance(value, kind):
            found.append(value)
    return found
