"""The mapping form of the ``state`` setting: a local file, a Terraform-style HTTP state backend, or PostgreSQL."""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any, Final, Literal
from urllib.parse import urlsplit

from pydantic import Field, SecretStr, model_validator

from cmssync.config.values import Duration, Section, require_http_url

StateBackendKind = Literal["local", "http", "postgresql"]
POSTGRES_SCHEMES: Final = ("postgresql", "postgres")
"""The URL schemes of libpq's connection URIs: ``state: postgresql://…`` keeps the state in PostgreSQL."""
_SCHEME: Final = re.compile(r"^([A-Za-z][A-Za-z0-9+.-]*)://")
DEFAULT_STATE_NAME: Final = "default"


class StateSettings(Section):
    """Where the state lives, in the mapping form of ``state:`` (the string form is the path of a local file).

    ``backend: http`` keeps it on a server speaking Terraform's HTTP state protocol (GitLab's managed Terraform
    state, or any server of that protocol), with locking; ``backend: postgresql`` in a PostgreSQL database, several
    sites and environments side by side under their ``name``; see docs/state.md."""

    backend: StateBackendKind = "local"
    """``local``: a file (``path``); ``http``: a Terraform-style HTTP state backend (``address``); ``postgresql``:
    a PostgreSQL database (``address: postgresql://…``); default from ``address`` when it is given, else
    ``local``."""
    path: str = ".cmssync/state.json"
    """``local``: the state file. ``http``: a local working path; its directory holds the caches, and without
    ``CMSSYNC_STATE_KEY`` the password key file (``<path>.key``); nothing else is written there."""
    address: str | None = None
    """``http``: the URL of the state (GET reads it, ``update_method`` writes it); ``postgresql``: the database as a
    libpq connection URI without a password (``postgresql://cmssync@db.internal/cmssync``; the password comes from
    libpq's own environment: ``PGPASSWORD``, ``~/.pgpass``, ``PGSERVICE``). Required for both."""
    name: str = Field(default=DEFAULT_STATE_NAME, min_length=1, max_length=200)
    """``postgresql``: the state's name in the database; each site or environment sharing one database has its
    own (the string form: ``postgresql://…/cmssync#production``)."""
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
        if isinstance(value, Mapping) and "backend" not in value and isinstance(value.get("address"), str):
            scheme = urlsplit(value["address"].strip()).scheme.lower()
            return {**value, "backend": "postgresql" if scheme in POSTGRES_SCHEMES else "http"}
        return value

    @model_validator(mode="after")
    def _address_fits_backend(self) -> StateSettings:
        if self.backend == "postgresql":
            if self.address is None:
                raise ValueError("state.address is required for backend postgresql (postgresql://host/database)")
            check_postgres_url(self.address, "state.address")
            return self
        if self.backend != "http":
            return self
        for name in ("address", "lock_address", "unlock_address"):
            value = getattr(self, name)
            if value is not None:
                require_http_url(value, f"state.{name}")
        if self.address is None:
            raise ValueError("state.address is required for backend http")
        return self


def check_postgres_url(url: str, where: str) -> None:
    """Refuse what is not a libpq connection URI, and one carrying a password: the password comes from libpq's
    environment (``PGPASSWORD``, ``PGPASSFILE``/``~/.pgpass``, ``PGSERVICE``), never from a settings file."""
    parts = urlsplit(url.strip())
    if parts.scheme.lower() not in POSTGRES_SCHEMES:
        raise ValueError(f"{where} must be a postgresql:// URL, not {url_scheme(url) or 'a plain path'}")
    if parts.password is not None:
        raise ValueError(
            f"{where} must not carry a password: give it to libpq through PGPASSWORD, ~/.pgpass (PGPASSFILE) or "
            "PGSERVICE, never in a file"
        )
    if "password=" in parts.query.lower():
        raise ValueError(f"{where} must not carry a password parameter: use PGPASSWORD, ~/.pgpass or PGSERVICE")


def url_scheme(text: str) -> str | None:
    """``scheme://`` when ``text`` starts with a URL scheme (``postgresql://…`` → ``postgresql://``), else None."""
    match = _SCHEME.match(text.strip())
    return f"{match.group(1).lower()}://" if match else None


def state_from_url(text: str) -> StateSettings:
    """The string form of ``state`` when it is a URL: ``postgresql://…[#name]`` is the PostgreSQL backend; any other
    scheme is refused, never taken for a file name (``postgresql:`` would otherwise become a folder)."""
    scheme = url_scheme(text)
    assert scheme is not None
    if scheme.removesuffix("://") in POSTGRES_SCHEMES:
        address, _, name = text.strip().partition("#")
        return StateSettings.model_validate(
            {"backend": "postgresql", "address": address, "name": name or DEFAULT_STATE_NAME}
        )
    if scheme in ("http://", "https://"):
        raise ValueError(
            f"state {scheme}…: an HTTP state needs its lock address too; write the mapping form "
            "{backend: http, address: …, lock_address: …} (docs/state.md)"
        )
    raise ValueError(
        f"state {scheme}… is not a known backend (a file path, postgresql://…, or the mapping form with "
        "backend: local, http or postgresql); a URL is never taken for a file name"
    )
