"""The mapping form of the ``state`` setting: a local file or a Terraform-style HTTP state backend."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Literal

from pydantic import SecretStr, model_validator

from cmssync.config.values import Duration, Section, require_http_url

StateBackendKind = Literal["local", "http"]


class StateSettings(Section):
    """Where the state lives, in the mapping form of ``state:`` (the string form is the path of a local file).

    ``backend: http`` keeps it on a server speaking Terraform's HTTP state protocol (GitLab's managed Terraform
    state, or any server of that protocol), with locking; see docs/state.md."""

    backend: StateBackendKind = "local"
    """``local``: a file (``path``); ``http``: a Terraform-style HTTP state backend (``address``); default
    ``http`` when ``address`` is given, else ``local``."""
    path: str = ".cmssync/state.json"
    """``local``: the state file. ``http``: a local working path; its directory holds the caches, and without
    ``CMSSYNC_STATE_KEY`` the password key file (``<path>.key``); nothing else is written there."""
    address: str | None = None
    """``http``: the URL of the state (GET reads it, ``update_method`` writes it); required for ``http``."""
    lock_address: str | None = None
    """``http``: the URL locked with ``lock_method``; unset: no locking (runs are not kept apart, with a warning)."""
    unlock_address: str | None = None
    """``http``: the URL unlocked with ``unlock_method``; default: ``lock_address``."""
    update_method: str = "POST"
    """``http``: the method that writes the state."""
    lock_method: str = "LOCK"
    """``http``: the method that takes the lock (GitLab: ``POST``)."""
    unlock_method: str = "UNLOCK"
    """``http``: the method that releases the lock (GitLab: ``DELETE``)."""
    username: str | None = None
    """``http``: the user of HTTP basic authentication (GitLab: ``gitlab-ci-token``)."""
    password: SecretStr | None = None
    """``http``: the password of HTTP basic authentication (GitLab: a token, ``${env:CI_JOB_TOKEN}``)."""
    save_interval: Duration = 5.0
    """``http``: upload the state at most this often during a run (and always at its end, on SIGTERM too); a
    killed run can lose the records of this many seconds (docs/state.md says why that is safe)."""

    @model_validator(mode="before")
    @classmethod
    def _backend_from_address(cls, value: Any) -> Any:
        if isinstance(value, Mapping) and "backend" not in value and value.get("address") is not None:
            return {**value, "backend": "http"}
        return value

    @model_validator(mode="after")
    def _http_needs_address(self) -> StateSettings:
        if self.backend != "http":
            return self
        for name in ("address", "lock_address", "unlock_address"):
            value = getattr(self, name)
            if value is not None:
                require_http_url(value, f"state.{name}")
        if self.address is None:
            raise ValueError("state.address is required for backend http")
        return self
