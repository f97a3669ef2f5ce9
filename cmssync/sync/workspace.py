"""A content directory opened for work: content, settings, state store and the client that talks to its site.

Commands (plan, apply, pull, status, the daemon) start here. Paths in the settings (``state``, the token store) are
relative to the content directory unless absolute. The state directory also holds the file-hash cache, so a
read-only content directory (a container mount) is never written to. The state itself lives where ``state`` says:
a local file, or a remote backend (:func:`cmssync.state.backends.open_state_backend`, docs/state.md).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from cmssync.api.client import ConcreteClient
from cmssync.api.retry import RetryPolicy
from cmssync.config import Settings, load_settings
from cmssync.content.loader import load_content
from cmssync.content.passwords import resolve_password
from cmssync.content.site import SiteContent
from cmssync.content.yamlsource import ParseCache
from cmssync.errors import ConfigError, ContentError, StateError
from cmssync.memory import give_back_freed_memory
from cmssync.plan.conflicts import ConflictPolicies
from cmssync.plan.drift import DriftPolicies
from cmssync.plan.planner import PlanOptions
from cmssync.plan.request import PlanRequest
from cmssync.state.backends import StateBackend, open_state_backend
from cmssync.state.records import State
from cmssync.sync.kinds import Registry, discover
from cmssync.usercache import cache_key, derived_cache_dir, is_inside, usable_root

Connect = Callable[[Settings], ConcreteClient]
"""A run's way to the site: the settings → a client."""


@dataclass(frozen=True)
class Workspace:
    directory: Path
    content: SiteContent
    settings: Settings
    store: StateBackend
    any_site: bool = False
    """Accept a state recorded for another URL (the sandbox listens on a new port every run)."""
    retry: RetryPolicy | None = None
    """How hard the clients try (None: the client's default; ``status`` is more patient)."""
    has_content: bool = True
    """False: the directory does not exist (``content`` is empty): only a saved plan can be applied."""
    kinds: Registry = field(default_factory=discover)
    """The kinds this run manages (found once, when the workspace is opened)."""
    connect: Connect | None = None
    """How this run's clients reach the site (the daemon's: through its request gate); None: directly."""

    def client(self) -> ConcreteClient:
        if self.connect is not None:
            return self.connect(self.settings)
        return ConcreteClient.from_settings(self.settings, base_dir=self.directory, retry=self.retry)

    def load_state(self) -> State:
        state = self.store.load()
        site = self.settings.site
        assert site.url is not None
        state.bind_site(site.url, site.api_prefix, allow_other_site=self.any_site, handle=site.handle)
        shared = self.kinds.table.shared_bindings(state)
        if shared:
            raise StateError("; ".join(shared))
        return state

    def plan_options(self, state: State, request: PlanRequest) -> PlanOptions:
        """The planner's options: the settings, overridden by what this run asked for."""
        settings = self.settings
        assert settings.site.url is not None
        changed, unset = self.password_status(state)
        return PlanOptions(
            base_url=settings.site.url,
            publish=settings.publish,
            prune=settings.prune.enabled if request.prune is None else request.prune,
            protect_pages=frozenset(settings.protect.pages),
            protect_users=frozenset(settings.protect.users),
            max_deletes=settings.prune.max_deletes,
            max_fraction=settings.prune.max_fraction,
            allow_mass_delete=request.allow_mass_delete,
            targets=request.targets,
            excludes=request.excludes,
            replace_moved=request.replace_moved,
            api_username=settings.auth.username,
            passwords_changed=changed,
            passwords_unset=unset,
            existing_pages=frozenset(settings.existing_pages),
            conflicts=ConflictPolicies(
                default=settings.conflicts.policy, rules=tuple(settings.conflicts.rules), force=request.force
            ),
            drift=DriftPolicies(default=settings.drift_settings.policy, rules=tuple(settings.drift_settings.rules)),
            on_foreign_draft=settings.on_foreign_draft or request.foreign_draft_default,
            areas_owned=settings.areas == "owned",
            ignore_rules=tuple(settings.ignore),
            silenced_warnings=settings.silenced_warnings,
            kinds=self.kinds.table,
        )

    def password_status(self, state: State) -> tuple[frozenset[str], frozenset[str]]:
        """(users whose password changed or is unknown, users whose password variable is unset).

        Compared through the state's keyed digests without creating the key: planning writes nothing.
        """
        changed, unset = set(), set()
        for username, spec in self.content.users.items():
            if spec.password is None:
                continue
            try:
                password = resolve_password(spec)
            except ContentError:
                unset.add(username)
                continue
            if password is not None and state.password_changed(username, password):
                changed.add(username)
        return frozenset(changed), frozenset(unset)


def open_workspace(
    directory: Path,
    *,
    overrides: Mapping[str, Any] | None = None,
    any_site: bool = False,
    parse_cache: ParseCache | None = None,
    lock_timeout: float | None = None,
    missing_ok: bool = False,
    kinds: Registry | None = None,
    connect: Connect | None = None,
) -> Workspace:
    """Load and validate the content (raises ``ContentError`` with every problem) and the settings.

    ``lock_timeout`` (``--lock-timeout``) overrides the ``lock_timeout`` setting: how long an apply waits for the
    state lock another run holds. ``missing_ok`` (applying a saved plan, which carries what it writes): a directory
    that does not exist gives a workspace without content, its settings from the environment and ``overrides``."""
    if not directory.is_dir():
        if not missing_ok:
            raise ConfigError(f"content directory {directory} does not exist")
        return _without_content(directory, overrides, any_site, lock_timeout)
    content = _load_content(directory, overrides, parse_cache)
    give_back_freed_memory()  # the load's working set, the parse cache's entries included (cmssync.memory)
    settings = content.settings
    if not settings.site.url:
        raise ConfigError(f"no site to talk to: set site.url in {directory / 'cmssync.yaml'} or CMSSYNC_URL")
    store = open_state_backend(settings, directory, lock_timeout=lock_timeout)
    return Workspace(
        directory=directory,
        content=content,
        settings=content.settings,
        store=store,
        any_site=any_site,
        kinds=kinds or discover(),
        connect=connect,
    )


def _without_content(
    directory: Path, overrides: Mapping[str, Any] | None, any_site: bool, lock_timeout: float | None
) -> Workspace:
    settings = load_settings(directory, overrides=overrides)
    if not settings.site.url:
        raise ConfigError(f"no site to talk to: {directory} does not exist; set CMSSYNC_URL")
    state = settings.state_path(directory)
    if settings.state_settings.backend == "local" and is_inside(state, directory):
        # A new, empty state there would apply the saved plan as if nothing were managed, and leave the records in a
        # directory that a checkout of the content then replaces.
        raise ConfigError(
            f"the content directory {directory} does not exist and the state would be made inside it ({state}): "
            "to apply a saved plan without its content, point CMSSYNC_STATE (or state:) at the state's place, or "
            "use a state server"
        )
    content = SiteContent(root=directory, settings=settings, pages={}, files={})
    store = open_state_backend(settings, directory, lock_timeout=lock_timeout)
    return Workspace(directory, content, settings, store, any_site=any_site, has_content=False)


def _load_content(directory: Path, overrides: Mapping[str, Any] | None, parse_cache: ParseCache | None) -> SiteContent:
    def caches(settings: Settings | None) -> tuple[Path | None, ParseCache | None]:
        """The per-user caches, never in the content's work tree or the state's folder (``usercache.py``); none
        while the settings are invalid (the state's place is then unknown)."""
        root = usable_root([directory, settings.state_path(directory).parent]) if settings is not None else None
        derived = derived_cache_dir(root, directory) if root is not None else None
        if root is None or derived is None:
            return None, None
        key = cache_key(root)
        return derived / "file-hashes.json", ParseCache(directory=derived, key=key) if key is not None else None

    return load_content(directory, overrides=overrides, parse_cache=parse_cache, caches=caches)


def open_state(
    directory: Path, *, overrides: Mapping[str, Any] | None = None, lock_timeout: float | None = None
) -> StateBackend:
    """The state backend of a content directory, from its settings alone (the content is not loaded):
    ``force-unlock`` and ``status`` need no valid content."""
    return open_state_backend(load_settings(directory, overrides=overrides), directory, lock_timeout=lock_timeout)
