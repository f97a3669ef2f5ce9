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

A list of sections (``daemon.notify``) is given whole, as JSON; there is no variable per item.
"""

from __future__ import annotations

import functools
import types
import typing
from collections.abc import Iterator
from typing import Any

from pydantic import BaseModel, SecretStr, ValidationError, create_model
from pydantic.fields import FieldInfo
from pydantic_settings import BaseSettings, SettingsConfigDict, SettingsError

from cmssync.errors import ConfigError

PREFIX = "CMSSYNC_"
DELIMITER = "__"


def variable_name(path: tuple[str, ...]) -> str:
    """``("prune", "max_deletes")`` → ``CMSSYNC_PRUNE__MAX_DELETES``."""
    return PREFIX + DELIMITER.join(part.upper() for part in path)


def section_model(field: FieldInfo) -> type[BaseModel] | None:
    """The model of a section field (``site: SiteSettings``), or None for a value (``state: str``)."""
    annotation = field.annotation
    candidates = typing.get_args(annotation) if isinstance(annotation, types.UnionType) else (annotation,)
    for candidate in candidates:
        if isinstance(candidate, type) and issubclass(candidate, BaseModel):
            return candidate
    return None


class _Environment(BaseSettings):
    model_config = SettingsConfigDict(
        env_prefix=PREFIX, env_nested_delimiter=DELIMITER, case_sensitive=False, extra="ignore"
    )


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


def nested_environment_tree(model: type[BaseModel]) -> dict[str, Any]:
    """The ``CMSSYNC_<SECTION>__<KEY>`` variables that are set, as a tree of plain values (secrets unwrapped)."""
    try:
        values = nested_environment(model)()
    except ValidationError as exc:
        problems = []
        for err in exc.errors():
            name = variable_name(tuple(str(part) for part in err["loc"] if not isinstance(part, int)))
            what = "unknown setting" if err["type"] == "extra_forbidden" else err["msg"]
            problems.append(f"{name}: {what}")
        raise ConfigError(f"invalid environment variable: {'; '.join(problems)}") from None
    except SettingsError as exc:
        cause = exc.__cause__ or exc
        raise ConfigError(
            f"invalid environment variable: {exc} ({cause}); lists and mappings are written as JSON, "
            'e.g. CMSSYNC_PROTECT__PAGES=\'["/", "/legal"]\''
        ) from None
    tree: dict[str, Any] = _plain(values.model_dump(exclude_unset=True))
    return tree


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
