"""Loading the settings: ``cmssync.yaml`` + container secrets + environment, in rising precedence (see
:mod:`cmssync.config`)."""

from __future__ import annotations

import difflib
import functools
import os
import re
import typing
from collections.abc import Collection, Iterable, Mapping
from pathlib import Path, PurePosixPath
from typing import Any

from pydantic import (
    BaseModel,
    SecretStr,
    ValidationError,
)
from pydantic_core import ErrorDetails
from pydantic_settings import BaseSettings, SettingsConfigDict
from ruamel.yaml.comments import CommentedMap, CommentedSeq

from cmssync.config.model import Settings
from cmssync.config.state import url_scheme
from cmssync.config.values import CONFIG_FILE, DEFAULT_SECRETS_DIR, ENV_REFERENCE, Concurrency
from cmssync.errors import ConfigError, ContentError, Problem
from cmssync.secrets import register_credentials, register_secret, register_url_credentials
from cmssync.settings_env import PREFIX, nested_environment_tree, setting_paths, variable_name
from cmssync.yamlread import position_of, read_yaml_file

FLAT_ENVIRONMENT: dict[str, tuple[str, ...]] = {
    "url": ("site", "url"),
    "api_prefix": ("site", "api_prefix"),
    "grant": ("auth", "grant"),
    "client_id": ("auth", "client_id"),
    "client_secret": ("auth", "client_secret"),
    "username": ("auth", "username"),
    "password": ("auth", "password"),
    "token": ("auth", "token"),
    "refresh_token": ("auth", "refresh_token"),
    "state": ("state",),
    "publish": ("publish",),
    "concurrency": ("concurrency",),
    "token_store": ("auth", "token_store"),
    "token_cache": ("auth", "token_cache"),
    "health": ("daemon", "health"),
}
"""The short variable names of design.md §3 (``CMSSYNC_URL`` …) → the setting each one sets. Every setting also
has its nested name (``CMSSYNC_SITE__URL``, :mod:`cmssync.settings_env`), which wins when both are set."""

CONFIG_VARIABLE = "CMSSYNC_CONFIG"
"""Names a settings file to read instead of ``DIR/cmssync.yaml`` (``cmssync --config FILE`` sets it)."""
STATE_KEY_VARIABLE = "CMSSYNC_STATE_KEY"
"""The state's password key as hex (:mod:`cmssync.state.keyring`)."""
TEST_VARIABLES = frozenset(
    {
        "CMSSYNC_REALSITE_ENV",
        "CMSSYNC_REALSITE_RESET",
        "CMSSYNC_REALSITE_REPORT",
        "CMSSYNC_RELIABILITY_REPORT",
        "CMSSYNC_TEST_CHROMIUM",
    }
)
"""Variables of cmssync's own test suite (docs/realsite.md), read by the tests alone: not settings, not refused."""
ENV_VARIABLE = "CMSSYNC_ENV"
"""Names the environment of ``environments`` to apply (``cmssync --env NAME`` sets it)."""
SITE_VARIABLE = "CMSSYNC_SITE__HANDLE"
"""The setting ``site.handle`` as a variable (``cmssync --site HANDLE`` sets it)."""


class EnvironmentOverrides(BaseSettings):
    """``CMSSYNC_*`` variables and ``/run/secrets`` files; the flat names of design.md §3."""

    model_config = SettingsConfigDict(
        env_prefix="CMSSYNC_", case_sensitive=False, extra="ignore", env_ignore_empty=True
    )

    url: str | None = None
    api_prefix: str | None = None
    grant: str | None = None
    client_id: str | None = None
    client_secret: SecretStr | None = None
    username: str | None = None
    password: SecretStr | None = None
    token: SecretStr | None = None
    refresh_token: SecretStr | None = None
    state: str | None = None
    publish: str | None = None
    concurrency: Concurrency | None = None
    token_store: str | None = None
    token_cache: str | None = None
    health: str | None = None

    def as_tree(self) -> dict[str, Any]:
        """The overrides placed where they belong in the ``Settings`` tree."""
        tree: dict[str, Any] = {}
        for name, place in FLAT_ENVIRONMENT.items():
            value = getattr(self, name)
            if value is None:
                continue
            if isinstance(value, SecretStr):
                value = value.get_secret_value()
            node = tree
            for key in place[:-1]:
                node = node.setdefault(key, {})
            node[place[-1]] = value
        return tree


_SECRET_FIELDS = {
    ("auth", "client_secret"),
    ("auth", "password"),
    ("auth", "token"),
    ("auth", "refresh_token"),
    ("state", "password"),
}


def load_settings(
    directory: Path | None,
    *,
    secrets_dir: Path | None = DEFAULT_SECRETS_DIR,
    overrides: Mapping[str, Any] | None = None,
) -> Settings:
    """Read ``DIR/cmssync.yaml`` (if present), then secrets, then the environment, then ``overrides``.

    ``CMSSYNC_CONFIG`` (``--config FILE``) names the settings file instead of ``DIR/cmssync.yaml``; path settings
    in it are still relative to the content directory. ``overrides`` are command-line choices (for example
    ``--sandbox`` pointing at a local emulator); they win. Raises ``ContentError`` for located problems in the file
    and ``ConfigError`` for bad environment values or a ``--config`` file that does not exist.
    """
    data: dict[str, Any] = {}
    path = config_file(directory)
    referenced: set[str] = set()
    if path is not None and path.is_file():
        data = _read_config_file(path, os.environ)
        text = path.read_text(encoding="utf-8", errors="replace")
        referenced = {match.group(1) for match in ENV_REFERENCE.finditer(text) if match.group(1)}
    check_variables(os.environ, referenced)
    data = select_environment(data, os.environ.get(ENV_VARIABLE, "").strip() or None)
    env_tree = _merge(_environment_tree(secrets_dir), nested_environment_tree(Settings, _resolved_variable))
    merged = _merge(_merge(data, env_tree), dict(overrides or {}))
    try:
        settings = Settings.model_validate(merged)
    except ValidationError as exc:
        reasons = "; ".join(f"{_where(err['loc'])}: {setting_message(err)}" for err in exc.errors())
        raise ConfigError(f"invalid settings from the environment or secrets: {reasons}") from None
    # Masked by value wherever text leaves the process from now on (cmssync.secrets).
    secrets = (
        settings.auth.client_secret,
        settings.auth.password,
        settings.auth.token,
        settings.auth.refresh_token,
        settings.state_settings.password,
    )
    register_secret(*(secret.get_secret_value() for secret in secrets if secret is not None))
    state = settings.state_settings
    if state.password is not None:
        register_credentials(state.username, state.password.get_secret_value())
    for url in (settings.site.url, state.address, state.lock_address, state.unlock_address):
        register_url_credentials(url)
    return settings


@functools.cache
def known_variables() -> frozenset[str]:
    """Every ``CMSSYNC_*`` variable cmssync reads: the short names, every setting's nested name, the settings file,
    the state key (and the test suite's own, :data:`TEST_VARIABLES`)."""
    short = {f"{PREFIX}{name.upper()}" for name in FLAT_ENVIRONMENT}
    nested = {variable_name(path) for path, _ in setting_paths(Settings)}
    return frozenset(short | nested | {CONFIG_VARIABLE, ENV_VARIABLE, STATE_KEY_VARIABLE} | TEST_VARIABLES)


def check_variables(environ: Mapping[str, str], referenced: Collection[str] = ()) -> None:
    """Refuse a ``CMSSYNC_*`` variable cmssync does not read (a misspelt one would otherwise pass unnoticed),
    naming the nearest it does; one the settings file references (``${env:CMSSYNC_WEBHOOK_URL}``) is the user's."""
    known = known_variables()
    unknown = sorted(
        name
        for name in environ
        if name.upper().startswith(PREFIX) and name.upper() not in known and name not in referenced
    )
    if not unknown:
        return
    candidates = sorted(known - TEST_VARIABLES)
    named = []
    for name in unknown:
        close = difflib.get_close_matches(name.upper(), candidates, n=1, cutoff=0.6)
        named.append(f"{name} (did you mean {close[0]}?)" if close else name)
    raise ConfigError(
        f"unknown environment variable {'; '.join(named)}: cmssync reads no such variable (every setting's variable "
        "is in docs/settings.md; unset it, or reference it from cmssync.yaml as ${env:NAME})"
    )


def _where(loc: tuple[int | str, ...]) -> str:
    """A setting's place, with the variable that gave it when one did (``timeout (CMSSYNC_TIMEOUT)``); a value is
    never quoted (it may be a secret)."""
    path = tuple(str(part) for part in loc if not isinstance(part, int))
    place = ".".join(str(part) for part in loc)
    for length in range(len(path), 0, -1):
        names = [variable_name(path[:length])]
        names += [f"{PREFIX}{short.upper()}" for short, where in FLAT_ENVIRONMENT.items() if where == path[:length]]
        for name in names:
            if name in os.environ:
                return f"{place} ({name})"
    return place


def config_file(directory: Path | None) -> Path | None:
    """The settings file to read: the one ``CMSSYNC_CONFIG`` names (it must exist), else ``DIR/cmssync.yaml``."""
    named = os.environ.get(CONFIG_VARIABLE, "").strip()
    if named:
        path = Path(named)
        if not path.is_file():
            raise ConfigError(f"the settings file {named} (--config or {CONFIG_VARIABLE}) does not exist")
        return path
    return None if directory is None else directory / CONFIG_FILE


def _environment_tree(secrets_dir: Path | None) -> dict[str, Any]:
    kwargs: dict[str, Any] = {}
    if secrets_dir is not None and secrets_dir.is_dir():
        kwargs["_secrets_dir"] = secrets_dir
    try:
        return EnvironmentOverrides(**kwargs).as_tree()
    except ValidationError as exc:
        reasons = "; ".join(f"CMSSYNC_{str(err['loc'][0]).upper()}: {setting_message(err)}" for err in exc.errors())
        raise ConfigError(f"invalid environment variable: {reasons}") from None


def select_environment(data: Mapping[str, Any], name: str | None) -> dict[str, Any]:
    """The settings of environment ``name``: the file's settings with ``environments[name]`` laid over them (a
    mapping merged key by key, anything else replaced), and a state of its own unless the environment names one:
    the base state file's name in a folder named after the environment. ``None``: the file's settings as they are.
    """
    if name is None:
        return dict(data)
    environments = data.get("environments") or {}
    if name not in environments:
        known = ", ".join(sorted(environments)) or "none are defined"
        raise ConfigError(f"no environment {name!r} in the settings (--env or {ENV_VARIABLE}); environments: {known}")
    overlay = environments[name]
    merged = _merge(data, overlay)
    merged["environment"] = name
    if "state" not in overlay:
        base = data.get("state", ".cmssync/state.json")
        if not isinstance(base, str) or url_scheme(base) is not None:
            raise ConfigError(
                f"environment {name!r}: set its own state in environments.{name}.state (each environment keeps a "
                "state of its own; only a state file's place can be derived from the base one)"
            )
        place = PurePosixPath(base)
        merged["state"] = str(place.parent / name / place.name)
    return merged


def _merge(base: Mapping[str, Any], top: Mapping[str, Any]) -> dict[str, Any]:
    merged = dict(base)
    for key, value in top.items():
        if isinstance(value, Mapping) and isinstance(merged.get(key), Mapping):
            merged[key] = _merge(merged[key], value)
        else:
            merged[key] = value
    return merged


MAX_CONFIG_BYTES = 1024 * 1024


def _read_config_file(path: Path, environ: Mapping[str, str]) -> dict[str, Any]:
    # Problems are located by the file's name in the content directory, or by the path --config gave.
    name = str(path) if environ.get(CONFIG_VARIABLE, "").strip() else path.name
    limit = "cmssync.yaml may have at most 1 MiB"
    parsed = read_yaml_file(path, name, max_bytes=MAX_CONFIG_BYTES, limit_text=limit, subject=CONFIG_FILE)
    if isinstance(parsed, Problem):
        raise ContentError([parsed])
    document = parsed.data
    if document is None:
        return {}
    if not isinstance(document, CommentedMap):
        raise ContentError([Problem(name, 1, 1, "cmssync.yaml must be a mapping of settings")])
    problems: list[Problem] = []
    resolved = _resolve_env(document, (), (1, 1), environ, name, problems)
    _validate_settings(resolved, document, (), name, problems)
    for env_name, overlay in (resolved.get("environments") or {}).items() if isinstance(resolved, dict) else ():
        if isinstance(overlay, Mapping) and "environments" in overlay:
            line, col = position_of(document, ("environments", env_name, "environments"), at_key=True)
            problems.append(
                Problem(name, line, col, f"environments.{env_name}: an environment cannot hold environments")
            )
        elif isinstance(overlay, Mapping):
            merged = _merge({k: v for k, v in resolved.items() if k != "environments"}, overlay)
            _validate_settings(merged, document, ("environments", env_name), name, problems, only=set(overlay))
    if problems:
        raise ContentError(problems)
    assert isinstance(resolved, dict)
    return resolved


def _validate_settings(
    resolved: Any,
    document: CommentedMap,
    at: tuple[str, ...],
    name: str,
    problems: list[Problem],
    *,
    only: set[str] | None = None,
) -> None:
    """Validate a settings tree, each problem located in the file (``at``: where the tree is: an environment's
    overlay; ``only``: report problems of these top-level keys, the ones the overlay sets)."""
    try:
        Settings.model_validate(resolved)
    except ValidationError as exc:
        for err in exc.errors():
            loc = tuple(err["loc"])
            if only is not None and (not loc or loc[0] not in only):
                continue
            line, col = position_of(document, (*at, *loc), at_key=err["type"] == "extra_forbidden")
            where = ".".join(str(p) for p in (*at, *loc) if p != "[key]")
            problems.append(Problem(name, line, col, f"{where}: {setting_message(err)}"))


def setting_message(err: ErrorDetails) -> str:
    """A settings error in the words of cmssync.yaml: ``unknown setting 'prnue' (did you mean 'prune'?)`` rather
    than pydantic's "Extra inputs are not permitted", and a wrong choice with the choices and the closest one."""
    given = str(err["loc"][-2] if err["loc"][-1:] == ("[key]",) else err["loc"][-1]) if err["loc"] else ""
    if err["type"] == "extra_forbidden":
        return f"unknown setting {given!r}{_closest(given, _setting_names())}"
    if err["type"] == "literal_error":
        choices = re.findall(r"'([^']*)'", str((err.get("ctx") or {}).get("expected", "")))
        value = given if err["loc"][-1:] == ("[key]",) else str(err.get("input"))
        return f"{value!r} is not one of {', '.join(choices)}{_closest(value, choices)}"
    return str(err["msg"]).removeprefix("Value error, ")


def _closest(given: str, known: Iterable[str]) -> str:
    close = difflib.get_close_matches(given, list(known), n=1, cutoff=0.6)
    return f" (did you mean {close[0]!r}?)" if close else ""


def _setting_names() -> set[str]:
    """Every setting's name, at any depth (the candidates of a did-you-mean)."""
    names: set[str] = set()
    models: list[type[BaseModel]] = [Settings]
    while models:
        model = models.pop()
        for field_name, info in model.model_fields.items():
            names.add(field_name)
            for kind in typing.get_args(info.annotation) or (info.annotation,):
                if isinstance(kind, type) and issubclass(kind, BaseModel) and kind is not model:
                    models.append(kind)
    return names


_UNSET = object()
"""A value whose ``${env:NAME}`` variable is not set: the setting is left out, as if not written."""


def _resolve_env(
    node: Any,
    place: tuple[str, ...],
    at: tuple[int, int],
    environ: Mapping[str, str],
    name: str,
    problems: list[Problem],
) -> Any:
    """Resolve ``${env:NAME}`` in every string (``at`` is the node's position); refuse literal secrets.

    A setting whose variable is unset is left out rather than refused, so that ``validate`` and ``plan`` in CI do
    not need secrets they never use; whatever needs the value says so when it is missing (e.g. the password grant
    asking for ``auth.password``).
    """
    if isinstance(node, CommentedMap):
        out: dict[str, Any] = {}
        for key, value in node.items():
            here = _value_position(node, key)
            resolved = _resolve_env(value, (*place, str(key)), here, environ, name, problems)
            if resolved is not _UNSET:
                out[str(key)] = resolved
            is_literal_secret = isinstance(value, str) and not ENV_REFERENCE.fullmatch(value.strip())
            if (*place, str(key)) in _SECRET_FIELDS and is_literal_secret:
                problems.append(
                    Problem(
                        name,
                        *here,
                        f"{'.'.join((*place, str(key)))}: a secret must not be written in cmssync.yaml; "
                        f"use ${{env:NAME}} or the {_secret_variable((*place, str(key)))} environment variable",
                    )
                )
        return out
    if isinstance(node, CommentedSeq):
        items = [
            _resolve_env(item, place, (node.lc.item(i)[0] + 1, node.lc.item(i)[1] + 1), environ, name, problems)
            for i, item in enumerate(node)
        ]
        return [item for item in items if item is not _UNSET]
    if isinstance(node, str):
        missing = False

        def substitute(match: re.Match[str]) -> str:
            nonlocal missing
            if match.group(0) == "$${":
                return "${"
            if match.group(1) not in environ:
                missing = True
                return ""
            return environ[match.group(1)]

        text = ENV_REFERENCE.sub(substitute, str(node))
        return _UNSET if missing else text
    return node


def _resolved_variable(name: str, value: str) -> str:
    """A ``CMSSYNC_…`` variable's value with its ``${env:NAME}`` references resolved (``$${`` is a literal ``${``),
    as in ``cmssync.yaml``; a reference to a variable that is not set is a ``ConfigError`` naming both."""

    def substitute(match: re.Match[str]) -> str:
        if match.group(0) == "$${":
            return "${"
        if match.group(1) not in os.environ:
            raise ConfigError(f"{name}: ${{env:{match.group(1)}}} names a variable that is not set")
        return os.environ[match.group(1)]

    return ENV_REFERENCE.sub(substitute, value) if "${" in value else value


def _secret_variable(place: tuple[str, ...]) -> str:
    """The variable to give a secret setting with: the short name when there is one (``CMSSYNC_PASSWORD``)."""
    short = [name for name, path in FLAT_ENVIRONMENT.items() if path == place]
    return f"CMSSYNC_{short[0].upper()}" if short else "CMSSYNC_" + "__".join(part.upper() for part in place)


def _value_position(mapping: CommentedMap, key: Any) -> tuple[int, int]:
    line, col = mapping.lc.value(key)
    return line + 1, col + 1
