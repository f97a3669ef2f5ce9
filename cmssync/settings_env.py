"""Every setting from the environment: ``CMSSYNC_`` + its path in ``cmssync.yaml``, sections joined by ``__``.

``prune.max_deletes`` is ``CMSSYNC_PRUNE__MAX_DELETES``, ``daemon.health`` is ``CMSSYNC_DAEMON__HEALTH``,
``site.url`` is ``CMSSYNC_SITE__URL`` (pydantic-settings' nested delimiter). Lists and mappings are written as JSON
(``CMSSYNC_PROTECT__PAGES='["/", "/legal"]'``, ``CMSSYNC_DAEMON__NOTIFY='[{"url": "…"}]'``). The short names of
design.md §3 (``CMSSYNC_URL``, ``CMSSYNC_PASSWORD``, …, :data:`cmssync.config.FLAT_ENVIRONMENT`) keep working; when
both forms of one setting are set, the nested one wins.

The variables are read through a settings class made from the settings model itself (:func:`nested_environment`),
so a setting added to the model has its variable without a line here, and a misspelt one
(``CMSSYNC_PRUNE__MAX_DELTES``) is refused by name, as an unknown key in ``cmssync.yaml`` is. Only the variables
that are set come back (``exclude_unset``): defaults never override the file.

A list of sections (``daemon.notify``) is given whole, as JSON; there is no variable per item. An empty variable is
unset (a CI system's ``${{ vars.X }}`` of a variable nobody defined is empty, and must not blank the file's value).
"""

from __future__ import annotations

import functools
import os
import types
import typing
from collections.abc import Callable, Iterator, Mapping
from contextvars import ContextVar
from typing import Any

from pydantic import BaseModel, SecretStr, ValidationError, create_model
from pydantic.fields import FieldInfo
from pydantic_settings import (
    BaseSettings,
    EnvSettingsSource,
    PydanticBaseSettingsSource,
    SettingsConfigDict,
    SettingsError,
)
from pydantic_settings.sources.utils import parse_env_vars

from cmssync.errors import ConfigError

PREFIX = "CMSSYNC_"
DELIMITER = "__"


def variable_name(path: tuple[str, ...]) -> str:
    """``("prune", "max_deletes")`` → ``CMSSYNC_PRUNE__MAX_DELETES``."""
    return PREFIX + DELIMITER.join(part.upper() for part in path)


def section_model(field: FieldInfo) -> type[BaseModel] | None:
    """The model of a section field (``site: SiteSettings``), or None for a value (``state: str``)."""
    annotation = field.annotation
    union = isinstance(annotation, types.UnionType) or typing.get_origin(annotation) is typing.Union
    candidates = typing.get_args(annotation) if union else (annotation,)
    for candidate in candidates:
        if isinstance(candidate, type) and issubclass(candidate, BaseModel):
            return candidate
    return None


_VARIABLES: ContextVar[Mapping[str, str] | None] = ContextVar("cmssync_settings_variables", default=None)
"""The variables :func:`nested_environment_tree` reads (their ``${env:NAME}`` references resolved)."""


class _Variables(EnvSettingsSource):
    """The environment source, reading the given variables instead of ``os.environ``."""

    def __init__(self, settings_cls: type[BaseSettings], variables: Mapping[str, str]) -> None:
        self.variables = variables
        super().__init__(settings_cls)

    def _load_env_vars(self) -> Mapping[str, str | None]:
        return parse_env_vars(self.variables, self.case_sensitive, self.env_ignore_empty, self.env_parse_none_str)


class _Environment(BaseSettings):
    model_config = SettingsConfigDict(
        env_prefix=PREFIX, env_nested_delimiter=DELIMITER, case_sensitive=False, extra="ignore", env_ignore_empty=True
    )

    @classmethod
    def settings_customise_sources(
        cls,
        settings_cls: type[BaseSettings],
        init_settings: PydanticBaseSettingsSource,
        env_settings: PydanticBaseSettingsSource,
        dotenv_settings: PydanticBaseSettingsSource,
        file_secret_settings: PydanticBaseSettingsSource,
    ) -> tuple[PydanticBaseSettingsSource, ...]:
        variables = _VARIABLES.get()
        return (init_settings, env_settings if variables is None else _Variables(settings_cls, variables))


@functools.cache
def nested_environment(model: type[BaseModel]) -> type[BaseSettings]:
    """A settings class reading ``CMSSYNC_<SECTION>__<KEY>`` for every field of ``model`` (all optional).

    Sections keep their model (so their lists parse from JSON and misspelt keys are refused); a top-level value
    that is a list or mapping keeps its type for the same reason; other values are read as text and checked when
    the whole settings tree is validated (their validators live on the model, not here).
    """
    fields: dict[str, Any] = {}
    for name, field in model.model_fields.items():
        origin = typing.get_origin(field.annotation)
        if section_model(field) is not None or origin in (list, dict):
            fields[name] = (typing.Optional[field.annotation], None)  # noqa: UP045 (a runtime type)
        else:
            fields[name] = (Any, None)
    created: type[BaseSettings] = create_model(f"{model.__name__}Environment", __base__=_Environment, **fields)
    return created


def nested_environment_tree(model: type[BaseModel], resolve: Callable[[str, str], str] | None = None) -> dict[str, Any]:
    """The ``CMSSYNC_<SECTION>__<KEY>`` variables that are set, as a tree of plain values (secrets unwrapped).
    ``resolve(name, value)``: a variable's value with its ``${env:NAME}`` references resolved (a receiver's URL in
    ``CMSSYNC_DAEMON__NOTIFY='[{"url": "${env:SLACK_HOOK}"}]'``), as in ``cmssync.yaml``."""
    variables = None
    if resolve is not None:
        variables = {
            name: resolve(name, value) if name.upper().startswith(PREFIX) else value
            for name, value in os.environ.items()
        }
    token = _VARIABLES.set(variables)
    try:
        values = nested_environment(model)()
    except ValidationError as exc:
        problems = []
        for err in exc.errors():
            problems.append(
                f"{_named(err['loc'])}: {'unknown setting' if err['type'] == 'extra_forbidden' else err['msg']}"
            )
        raise ConfigError(f"invalid environment variable: {'; '.join(problems)}") from None
    except SettingsError as exc:
        cause = exc.__cause__ or exc
        raise ConfigError(
            f"invalid environment variable: {exc} ({cause}); lists and mappings are written as JSON, "
            'e.g. CMSSYNC_PROTECT__PAGES=\'["/", "/legal"]\''
        ) from None
    finally:
        _VARIABLES.reset(token)
    tree: dict[str, Any] = _plain(values.model_dump(exclude_unset=True))
    return tree


def _named(loc: tuple[int | str, ...]) -> str:
    """The variable an error is about, and where in its value: a list of sections is one variable
    (``CMSSYNC_DAEMON__NOTIFY (item 1, url)``), never a name that does not exist (``…__NOTIFY__URL``)."""
    parts = [str(part) for part in loc]
    index = next((i for i, part in enumerate(loc) if isinstance(part, int)), len(loc))
    name = variable_name(tuple(parts[:index]))
    if index == len(loc):
        return name
    inside = [f"item {int(loc[index]) + 1}", *(".".join(parts[index + 1 :]) and [".".join(parts[index + 1 :])])]
    return f"{name} ({', '.join(inside)})"


def _plain(value: Any) -> Any:
    if isinstance(value, SecretStr):
        return value.get_secret_value()
    if isinstance(value, dict):
        return {key: _plain(item) for key, item in value.items()}
    if isinstance(value, list):
        return [_plain(item) for item in value]
    return value


def setting_paths(model: type[BaseModel], prefix: tuple[str, ...] = ()) -> Iterator[tuple[tuple[str, ...], FieldInfo]]:
    """Every setting of ``model`` with its path, sections first and then their keys (depth first)."""
    for name, field in model.model_fields.items():
        path = (*prefix, name)
        yield path, field
        section = section_model(field)
        if section is not None:
            yield from setting_paths(section, path)
