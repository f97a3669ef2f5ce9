"""The settings model: every section of ``cmssync.yaml`` with a docstring per field (the JSON schema and
``docs/settings.md`` are generated from it). The shared value types are in :mod:`cmssync.config.values`, the
``daemon`` and ``state`` sections in :mod:`cmssync.config.daemon` and :mod:`cmssync.config.state`."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Annotated, Any, Literal

from pydantic import Field, SecretStr, ValidatorFunctionWrapHandler, field_validator, model_validator

from cmssync.config.daemon import DaemonSettings
from cmssync.config.proposals import ProposalSettings
from cmssync.config.state import StateSettings, state_from_url, url_scheme
from cmssync.config.values import (
    AUTO_MAX_CONCURRENCY,
    DEFAULT_API_PREFIX,
    Concurrency,
    Duration,
    Section,
    TokenCacheChoice,
    folder_path,
    require_http_url,
)


class SiteSettings(Section):
    """The Concrete CMS site to keep in line with the content."""

    url: str | None = None
    """Base URL of the Concrete site, e.g. ``https://www.example.com``."""
    api_prefix: str = DEFAULT_API_PREFIX
    """Path prefix of the REST API; real sites use ``/ccm/api/1.0``."""
    handle: str | None = None
    """Which site of a multi-site installation this content is (a handle ``GET /sites`` lists, such as ``second``;
    ``--site HANDLE``); unset: the installation's default site. One content directory per site
    (docs/content-format.md › Several sites)."""

    @field_validator("url")
    @classmethod
    def _url_is_absolute(cls, value: str | None) -> str | None:
        if value is None:
            return None
        return require_http_url(value, "site.url", " such as https://www.example.com").rstrip("/")

    @field_validator("handle")
    @classmethod
    def _handle_shape(cls, value: str | None) -> str | None:
        if value is not None and not value.replace("_", "").isalnum():
            raise ValueError(f"site.handle {value!r}: a site handle holds only letters, digits and underscores")
        return value

    @field_validator("api_prefix")
    @classmethod
    def _prefix_shape(cls, value: str) -> str:
        if not value.startswith("/"):
            raise ValueError("site.api_prefix must start with '/'")
        return value.rstrip("/")


Grant = Literal["password", "client_credentials", "refresh_token", "token"]


class AuthSettings(Section):
    """How cmssync signs in to the site's REST API (OAuth2). Secrets come from the environment or /run/secrets,
    or ``${env:NAME}`` in the file; a secret written literally in cmssync.yaml is refused."""

    grant: Grant = "password"
    """OAuth2 grant: ``password`` (site must enable it), ``client_credentials`` (read-only: runs as Guest),
    ``refresh_token`` (rotated, persisted in ``token_store``) or a static bearer ``token``."""
    client_id: str | None = None
    """The API integration's client id (Dashboard > System > API)."""
    client_secret: SecretStr | None = None
    """The API integration's client secret."""
    username: str | None = None
    """The site user cmssync acts as (password grant); it needs the permissions of the objects it manages."""
    password: SecretStr | None = None
    """That user's password (password grant)."""
    token: SecretStr | None = None
    """A static bearer access token (``grant: token``); it cannot be renewed when it expires."""
    refresh_token: SecretStr | None = None
    """The first refresh token (``grant: refresh_token``); later ones are rotated into ``token_store``."""
    token_store: str = ".cmssync/tokens.json"
    """Where a rotated refresh token is persisted (mode 0600) before it is used; relative to the content
    directory unless absolute."""
    scopes: list[str] | None = None
    """Scopes to request; default: every scope cmssync uses."""
    token_cache: TokenCacheChoice = True
    """Keep the access token of a ``password`` or ``client_credentials`` grant between commands until shortly
    before it expires, so the next command does not log in again: ``true`` in the per-user cache
    (``$XDG_CACHE_HOME/cmssync/tokens`` or ``~/.cache/cmssync/tokens``, files 0600), ``false`` never, or a
    directory. Never used inside the content directory, the state's directory or the git work tree holding either
    (they may be committed), nor in a per-user root that is a symbolic link, another user's or writable by others.
    A token is kept per credentials (a salted hash of client secret and password is part of its key), so a changed
    or wrong password or secret goes to the site, never answered from the cache."""


class PruneSettings(Section):
    """Deleting managed objects that disappeared from the content, and the guards against mass deletes."""

    enabled: bool = False
    """Delete managed pages, files, users and groups whose content was removed (``--prune`` for one run)."""
    max_deletes: int = Field(default=10, ge=0)
    """At most this many deletes of one kind per run; beyond it deletes are blocked (``--allow-mass-delete``)."""
    max_fraction: float = Field(default=0.25, ge=0, le=1)
    """At most this share (0-1) of the managed objects of one kind deleted per run; beyond it deletes are
    blocked."""


WarningKind = Literal[
    "unmanaged_groups",
    "protected",
    "foreign_draft_merge",
    "renamed_files",
    "duplicate_files",
    "unreliable_lists",
    "retired_files",
]
"""The plan warnings that can be silenced (their patterns: ``cmssync.plan.warnings``)."""


class PasswordSettings(Section):
    """What the site accepts as a user password, so ``validate`` refuses what apply would be refused (Concrete's
    ``concrete.user.password.minimum``/``maximum``; its defaults)."""

    min_length: int = Field(default=5, ge=1)
    """The site's minimum password length."""
    max_length: int = Field(default=128, ge=1)
    """The site's maximum password length."""


class ProtectSettings(Section):
    """Objects cmssync never deletes, whatever the content says."""

    pages: list[str] = Field(default_factory=lambda: ["/"])
    """Page paths never deleted."""
    users: list[str] = Field(default_factory=lambda: ["admin"])
    """Usernames never deleted."""


ConflictPolicy = Literal["content_wins", "site_wins", "fail"]
"""How a three-way conflict is settled: write the content's value, keep the site's, or refuse the object."""
DriftPolicy = Literal["propose", "revert", "adopt"]
"""What becomes of an editor's approved change to something the content did not change since the last sync: list it
as a site change to bring back into the content and leave it on the site, write over it (the content wins), or
write it into the content directory."""
ForeignDraftPolicy = Literal["fail", "skip", "merge"]
"""A page with someone else's pending draft: refuse it (exit 1), leave it alone, or write into that draft."""


class BlockSelector(Section):
    """Blocks of one area, by block type or by position (0 = first block of the live area)."""

    area: Annotated[str, Field(min_length=1)]
    type: Annotated[str, Field(min_length=1)] | None = None
    """Block type handle (``content``, ``html``, ``image`` …)."""
    position: Annotated[int, Field(ge=0)] | None = None

    @model_validator(mode="after")
    def _one_selector(self) -> BlockSelector:
        if (self.type is None) == (self.position is None):
            raise ValueError("give exactly one of type or position")
        return self


class IgnoreRule(Section):
    """Differences nobody wants reverted (an editor owns them): neither shown as drift nor written back.

    Like Terraform's ``ignore_changes``: the content's values are still used when cmssync creates the page."""

    fields: list[Literal["name", "description", "type", "template", "publish_end_date"]] = Field(default_factory=list)
    """Page fields left to the editors."""
    attributes: list[Annotated[str, Field(min_length=1)]] = Field(default_factory=list)
    """Attribute handles left to the editors."""
    areas: list[Annotated[str, Field(min_length=1)]] = Field(default_factory=list)
    """Whole areas left to the editors."""
    blocks: list[BlockSelector] = Field(default_factory=list)
    """Blocks left to the editors, by area and type or position."""


class GlobalIgnoreRule(IgnoreRule):
    """An ignore rule of ``cmssync.yaml``, for the pages whose path matches ``pages`` (fnmatch patterns)."""

    pages: list[Annotated[str, Field(min_length=1)]] = Field(default_factory=lambda: ["*"])
    """Page path patterns (``/blog/*``); default: every page."""


class ConflictRule(Section):
    """A conflict policy for the objects matching ``match`` (``KIND:KEY`` fnmatch pattern), optionally only for some
    fields (``name``, ``attributes.meta_title``, ``area:Main``)."""

    match: Annotated[str, Field(min_length=3)]
    fields: list[Annotated[str, Field(min_length=1)]] = Field(default_factory=list)
    policy: ConflictPolicy


class ConflictSettings(Section):
    """Three-way conflicts: an object changed both in the content and on the site since cmssync last applied it."""

    policy: ConflictPolicy = "fail"
    """Default for every object: ``fail`` refuses the object (``apply --force`` writes the content's values)."""
    rules: list[ConflictRule] = Field(default_factory=list)
    """Per-object (and per-field) policies; the first matching rule wins, a page file's ``on_conflict`` first."""


class DriftRule(Section):
    """A drift policy for the objects matching ``match`` (``KIND:KEY`` fnmatch pattern, as in ``conflicts.rules``),
    optionally only for some fields (``name``, ``attributes.meta_*``, ``area:Main``)."""

    match: Annotated[str, Field(min_length=3)]
    fields: list[Annotated[str, Field(min_length=1)]] = Field(default_factory=list)
    policy: DriftPolicy


class DriftSettings(Section):
    """Editors' approved changes to what the content did not change since the last sync (docs/editor-safety.md)."""

    policy: DriftPolicy = "propose"
    """``propose``: never written over; the plan lists them as site changes to bring back into the content.
    ``revert``: the content wins (the site's value is written over). ``adopt``: ``apply`` writes them into the
    content directory (as ``pull`` would)."""
    rules: list[DriftRule] = Field(default_factory=list)
    """Per-object (and per-field) policies; the first matching rule wins, a page file's ``on_drift`` first."""


class VersionSettings(Section):
    """Housekeeping of page versions."""

    keep: int | None = Field(default=10, ge=1)
    """Older non-live versions of managed pages beyond this many are deleted; ``null`` keeps all."""


class Settings(Section):
    """Everything cmssync needs to know besides the content itself."""

    site: SiteSettings = Field(default_factory=SiteSettings)
    """The site to manage."""
    auth: AuthSettings = Field(default_factory=AuthSettings)
    """How to sign in."""
    state: str | StateSettings = ".cmssync/state.json"
    """The state file (what cmssync manages and how it last saw it), and beside it its lock, journal and the
    file-hash cache; relative to the content directory unless absolute (``CMSSYNC_STATE=PATH``). Or a PostgreSQL
    database, ``postgresql://user@host/db#name`` (password from libpq's environment), or a mapping choosing a
    backend (``backend: http``, ``address: …``). A URL of another scheme is refused, never taken for a file name.
    Keep it where a CI runner cannot lose it (docs/state.md)."""
    lock_timeout: Duration = 0.0
    """Wait up to this long for the state lock another run holds (``--lock-timeout``); 0: fail at once."""
    run_timeout: Duration = 0.0
    """The deadline of one apply, from taking the lock (``CMSSYNC_RUN_TIMEOUT``, e.g. ``15m``); 0: none. Reading the
    site and planning must end within it (else nothing is written); then no action starts, no retry wait goes past
    it, an action in flight whose request it cut ends as "may or may not have happened" (the next run reads the site
    and finds out), and the next run goes on, this one exiting 1 (a site throttling with long ``Retry-After`` cannot
    hold a CI job)."""
    publish: Literal["approve", "draft"] = "approve"
    """``approve``: changes go live; ``draft``: leave one unapproved version per page for review on the site."""
    prune: PruneSettings = Field(default_factory=PruneSettings)
    """Deletes of removed content and their guards."""
    protect: ProtectSettings = Field(default_factory=ProtectSettings)
    """Objects never deleted."""
    warnings: dict[WarningKind, Literal["on", "off"] | bool] = Field(default_factory=dict)
    """Plan warnings by kind, ``off`` to leave them out of every plan (e.g. ``{unmanaged_groups: off}`` for groups
    dropped from the content, which stay on the site): ``unmanaged_groups``, ``protected``, ``foreign_draft_merge``,
    ``renamed_files``, ``duplicate_files``, ``unreliable_lists``, ``retired_files``."""
    passwords: PasswordSettings = Field(default_factory=PasswordSettings)
    """The site's password rules, checked by ``validate`` and before apply writes anything."""
    versions: VersionSettings = Field(default_factory=VersionSettings)
    """Page version housekeeping."""
    conflicts: ConflictSettings = Field(default_factory=ConflictSettings)
    """Three-way conflicts between the content and editors' changes on the site (docs/editor-safety.md)."""
    drift: DriftPolicy | DriftSettings = "propose"
    """An editor's approved change to a field or area the content did not change since the last sync: ``propose``
    (the default) leaves it on the site and lists it in the plan as a site change to bring back into the content;
    ``revert`` writes the content's value over it; ``adopt`` writes it into the content directory (docs/editor-
    safety.md). Or a mapping with per-object ``rules`` (``{policy: propose, rules: [{match: "page:/blog/*", policy:
    revert}]}``). ``CMSSYNC_DRIFT=revert`` sets the policy for one run."""
    areas: Literal["shared", "owned"] = "shared"
    """Blocks an editor adds to a managed area: ``shared`` keeps them in place and lists them as additions on the
    site; ``owned`` deletes them like any drift (docs/editor-safety.md). A page file's ``areas_owned`` overrides."""
    on_foreign_draft: ForeignDraftPolicy | None = None
    """A page carrying an unapproved draft cmssync did not make: ``fail``, ``skip`` or ``merge`` (write into it and
    approve it); default ``fail`` for ``apply`` and ``skip`` for the daemon: nobody's work is approved unasked."""
    ignore: list[GlobalIgnoreRule] = Field(default_factory=list)
    """Differences left to the editors: neither drift nor reverted (docs/editor-safety.md)."""
    folders: dict[str, Annotated[int, Field(ge=1)]] = Field(default_factory=dict)
    """File-manager folder path (``/Images``, ``/Images/Team``) → this site's folder id (tree node id).

    Sidecars name folders by path, which means the same on every site; the ids differ from site to site and the API
    has no way to look a folder up by name (concrete-api.md §1), so this map is where a site's ids are given. A key
    without the leading ``/`` is a top-level folder (``images`` is ``/images``). See :func:`folder_path`.
    """
    existing_pages: list[str] = Field(default_factory=list)
    """Paths of pages that exist on the site but are not managed; content pages may be placed beneath them."""
    concurrency: Concurrency = "auto"
    """Requests in flight: ``auto`` (the default) finds the site's knee from measured latencies
    (``cmssync.api.limiter``); a number fixes it."""
    timeout: Duration = 30.0
    """Seconds one HTTP request may take (connect, send, each read) before it counts as failed and is retried."""
    daemon: DaemonSettings = Field(default_factory=DaemonSettings)
    """The daemon."""
    values: dict[Annotated[str, Field(pattern=r"^[A-Za-z_][A-Za-z0-9_]*$")], str] = Field(default_factory=dict)
    """Named values the content uses as ``${value:NAME}`` in any text (a banner, an analytics snippet); each
    environment may give its own (``environments``)."""
    environments: dict[Annotated[str, Field(pattern=r"^[a-z][a-z0-9_-]*$")], dict[str, Any]] = Field(
        default_factory=dict
    )
    """One repository, several sites (docs/environments.md): environment name → the settings that differ there
    (``site``, ``auth``, ``publish``, ``prune``, ``values``, … any setting but ``environments``), chosen with
    ``--env NAME`` (``CMSSYNC_ENV``). Each environment keeps a state of its own: ``state`` if it sets one, else the
    base state file's name in a folder named after the environment (``.cmssync/production/state.json``)."""
    environment: str | None = None
    """The environment these settings are for (set from ``--env``/``CMSSYNC_ENV``; not written in the file)."""
    proposals: ProposalSettings | None = None
    """Where ``cmssync daemon`` commits editors' approved changes under ``drift: propose``: ``{branch, remote}``
    (docs/two-way.md); unset: none are committed."""

    @property
    def silenced_warnings(self) -> frozenset[str]:
        """The kinds of plan warnings set ``off`` in ``warnings``."""
        return frozenset(kind for kind, value in self.warnings.items() if value in ("off", False))

    @field_validator("state", mode="wrap")
    @classmethod
    def _state_form(cls, value: Any, handler: ValidatorFunctionWrapHandler) -> Any:
        """One error per problem: a mapping is validated as :class:`StateSettings` only (a plain union would also
        report that it is not a string)."""
        if isinstance(value, Mapping):
            return StateSettings.model_validate(value)
        if not isinstance(value, str | StateSettings):
            raise ValueError("state is a file path, postgresql://…, or a mapping such as {backend: http, address: …}")
        if isinstance(value, str) and url_scheme(value) is not None:
            return state_from_url(value)
        return handler(value)

    @field_validator("folders", mode="before")
    @classmethod
    def _folder_paths(cls, value: Any) -> Any:
        if not isinstance(value, Mapping):
            return value
        paths: dict[str, Any] = {}
        for key, folder_id in value.items():
            path = folder_path(str(key))
            if path in paths:
                raise ValueError(f"{key!r} and another key are both the folder {path}")
            paths[path] = folder_id
        ids = [folder_id for folder_id in paths.values() if isinstance(folder_id, int)]
        if len(set(ids)) != len(ids):
            twice = sorted({i for i in ids if ids.count(i) > 1})
            raise ValueError(f"folder id {twice[0]} is given for two paths")
        return paths

    def resolve(self, base_dir: Path, setting: str) -> Path:
        """A path setting (``state``, ``auth.token_store``, …): relative to the content directory unless absolute.

        The one rule for every path in the settings, so that the state, its lock, the token store and the hash
        cache land in the same place whichever command opened them.
        """
        path = Path(setting)
        return path if path.is_absolute() else base_dir / path

    @property
    def drift_settings(self) -> DriftSettings:
        """``drift`` in its mapping form (a single word is the policy of every object)."""
        return DriftSettings(policy=self.drift) if isinstance(self.drift, str) else self.drift

    @field_validator("drift", mode="wrap")
    @classmethod
    def _drift_form(cls, value: Any, handler: ValidatorFunctionWrapHandler) -> Any:
        """One error per problem: a mapping is validated as :class:`DriftSettings` only."""
        if isinstance(value, Mapping):
            return DriftSettings.model_validate(value)
        return handler(value)

    @property
    def concurrency_limit(self) -> int | None:
        """The fixed concurrency, or None for ``auto``."""
        return None if self.concurrency == "auto" else self.concurrency

    @property
    def max_connections(self) -> int:
        """Connections a client of these settings may keep open (the adaptive limit's ceiling under ``auto``)."""
        return AUTO_MAX_CONCURRENCY if self.concurrency == "auto" else self.concurrency

    def state_path(self, base_dir: Path) -> Path:
        """The local state file, or for a remote backend its local working path (caches, the key file)."""
        return self.resolve(base_dir, self.state if isinstance(self.state, str) else self.state.path)

    @property
    def state_settings(self) -> StateSettings:
        """``state`` in its mapping form (the string form is a local file at that path)."""
        return StateSettings(path=self.state) if isinstance(self.state, str) else self.state
