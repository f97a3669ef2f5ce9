"""The value types every settings section shares: durations, concurrency, folder paths, the token-cache choice,
and :class:`Section`, the base of every section (extra keys refused, frozen, field docstrings as descriptions)."""

from __future__ import annotations

import ast
import functools
import inspect
import itertools
import re
import textwrap
from pathlib import Path
from typing import Annotated, Any, Literal
from urllib.parse import urlsplit

from pydantic import BaseModel, BeforeValidator, ConfigDict, Field, PlainValidator, TypeAdapter, WithJsonSchema

CONFIG_FILE = "cmssync.yaml"
DEFAULT_SECRETS_DIR = Path("/run/secrets")
DEFAULT_API_PREFIX = "/ccm/api/1.0"
AUTO_MAX_CONCURRENCY = 32
"""Ceiling of the adaptive concurrency (``concurrency: auto``, ``cmssync.api.limiter``)."""
_FIXED_CONCURRENCY: TypeAdapter[int] = TypeAdapter(Annotated[int, Field(ge=1, le=64)])


def _concurrency(value: object) -> int | Literal["auto"]:
    """``auto`` or a whole number from 1 to 64; one error per bad value (a plain union would report two)."""
    if isinstance(value, str) and value.strip().lower() == "auto":
        return "auto"
    return _FIXED_CONCURRENCY.validate_python(value)


Concurrency = Annotated[
    int | Literal["auto"],
    PlainValidator(_concurrency),
    WithJsonSchema({"anyOf": [{"type": "integer", "minimum": 1, "maximum": 64}, {"const": "auto"}]}),
]


def require_http_url(value: str, setting: str, example: str = "") -> str:
    """``value`` when it is an absolute http(s) URL whose host and port can be used, else a ``ValueError`` naming
    ``setting`` (a port such as 99999 passes a pattern and fails only when a request is made)."""
    parts = urlsplit(value)
    try:
        usable = parts.scheme in ("http", "https") and bool(parts.hostname) and parts.port != 0
    except ValueError:  # a port that is no number, or out of range
        usable = False
    if re.search(r"\s", value):
        usable = False
    if not usable:
        raise ValueError(f"{setting} must be an absolute http(s) URL{example} (host, and a port from 1 to 65535)")
    return value


_DURATION = re.compile(r"^\s*(\d+(?:\.\d+)?)\s*(ms|s|m|h|d)?\s*$")
_DURATION_UNITS = {"ms": 0.001, "s": 1.0, "m": 60.0, "h": 3600.0, "d": 86400.0, None: 1.0}
ENV_REFERENCE = re.compile(r"\$\$\{|\$\{env:([A-Za-z_][A-Za-z0-9_]*)\}")


def parse_duration(value: object) -> float:
    """``"1s"``, ``"500ms"``, ``"10m"``, ``"1h"`` or a number of seconds → seconds as a float."""
    if isinstance(value, bool):
        raise ValueError("a duration is a number of seconds or a string such as 1s, 500ms, 10m, 1h")
    if isinstance(value, int | float):
        seconds = float(value)
    else:
        match = _DURATION.match(str(value))
        if not match:
            raise ValueError(f"invalid duration {value!r}: use a number with ms, s, m, h or d (e.g. 10m)")
        seconds = float(match.group(1)) * _DURATION_UNITS[match.group(2)]
    if seconds < 0:
        raise ValueError("a duration cannot be negative")
    return seconds


Duration = Annotated[float, BeforeValidator(parse_duration)]


_ON = frozenset({"true", "on", "yes", "1"})
_OFF = frozenset({"false", "off", "no", "0", "none", ""})


def _token_cache(value: object) -> bool | str:
    """``true``/``false`` (also ``on``/``off``, ``yes``/``no``, ``1``/``0`` as text, for environment variables) or
    a directory path."""
    if isinstance(value, bool):
        return value
    if isinstance(value, str):
        text = value.strip()
        if text.lower() in _ON:
            return True
        if text.lower() in _OFF:
            return False
        return text
    raise ValueError("auth.token_cache is true (the per-user cache), false (none) or a directory path")


TokenCacheChoice = Annotated[
    bool | str,
    PlainValidator(_token_cache),
    WithJsonSchema({"anyOf": [{"type": "boolean"}, {"type": "string", "minLength": 1}]}),
]
"""``auth.token_cache``: True for the per-user cache directory, False for none, or a directory."""


@functools.cache
def field_docstrings(model: type) -> dict[str, str]:
    """The string literal under each annotated attribute of ``model``'s own class body, cleaned like a docstring."""
    try:
        tree = ast.parse(textwrap.dedent(inspect.getsource(model)))
    except (OSError, TypeError, SyntaxError):
        return {}
    body = tree.body[0].body if tree.body and isinstance(tree.body[0], ast.ClassDef) else []
    docs: dict[str, str] = {}
    for statement, following in itertools.pairwise(body):
        if (
            isinstance(statement, ast.AnnAssign)
            and isinstance(statement.target, ast.Name)
            and isinstance(following, ast.Expr)
            and isinstance(following.value, ast.Constant)
            and isinstance(following.value.value, str)
        ):
            docs[statement.target.id] = inspect.cleandoc(following.value.value)
    return docs


def _describe_fields(schema: dict[str, Any], model: type[BaseModel]) -> None:
    """Each field's docstring as its description, read from the source only when a JSON schema is generated
    (``cmssync schema``, docs/settings.md): pydantic's ``use_attribute_docstrings`` reads the source of every
    section when it is imported, ~20 ms of every command (issue 17). Inherited fields keep their class's docstring;
    an explicit ``Field(description=…)`` wins."""
    docs: dict[str, str] = {}
    for klass in reversed(model.__mro__):
        if isinstance(klass, type) and issubclass(klass, Section):
            docs.update(field_docstrings(klass))
    properties = schema.get("properties", {})
    for name, text in docs.items():
        place = properties.get(name)
        if isinstance(place, dict) and "description" not in place:
            place["description"] = text


class Section(BaseModel):
    # Each field's docstring is its description in the JSON schema and in docs/settings.md (generated).
    model_config = ConfigDict(extra="forbid", frozen=True, json_schema_extra=_describe_fields)


def folder_path(text: str) -> str:
    """A file-manager folder path in its one written form: ``/`` + names joined by ``/`` (``images/`` → ``/images``).

    The root folder is ``/``. Raises ``ValueError`` for an empty name between slashes or a name with spaces around it.
    """
    stripped = text.strip()
    if stripped in ("", "/"):
        return "/"
    names = stripped.strip("/").split("/")
    for name in names:
        if not name or name != name.strip():
            raise ValueError(f"invalid folder path {text!r}: write folder names between single slashes, e.g. /Images")
    return "/" + "/".join(names)
