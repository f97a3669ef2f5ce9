"""The value types every settings section shares: durations, concurrency, folder paths, the token-cache choice,
and :class:`Section`, the base of every section (extra keys refused, frozen, field docstrings as descriptions)."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Annotated, Literal

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


class Section(BaseModel):
    # Each field's docstring is its description in the JSON schema and in docs/settings.md (generated).
    model_config = ConfigDict(extra="forbid", frozen=True, use_attribute_docstrings=True)


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
