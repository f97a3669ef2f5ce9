"""The key of users' password digests in the state (``state.json.key``, mode 0600, beside the state; see
:mod:`cmssync.state.records`): read when it exists, created on first need, or kept in memory only; given by
``CMSSYNC_STATE_KEY`` (:class:`FixedKeyRing`), or kept beside the checkout with a warning for a remote state
(:class:`WarningKeyRing`)."""

from __future__ import annotations

import hashlib
import hmac
import logging
import os
import secrets
import tempfile
from collections.abc import Mapping
from pathlib import Path
from typing import Final

from cmssync.config.loading import STATE_KEY_VARIABLE
from cmssync.errors import ConfigError, StateError
from cmssync.fileio import fsync_directory
from cmssync.secrets import register_secret

log = logging.getLogger(__name__)

KEY_VARIABLE: Final = STATE_KEY_VARIABLE
"""The password key as hex (``openssl rand -hex 32``); wins over the key file beside a local state."""


class KeyRing:
    """The password key: read from ``path`` when it exists, created there on first need, or in memory only."""

    def __init__(self, path: Path | None) -> None:
        self._path = path
        self._key: bytes | None = secrets.token_bytes(32) if path is None else None

    def get(self, *, create: bool) -> bytes | None:
        if self._key is None and self._path is not None:
            self._key = _read_key(self._path)
            if self._key is None and create:
                self._key = _create_key(self._path)
        return self._key


class FixedKeyRing(KeyRing):
    """The password key given by ``CMSSYNC_STATE_KEY``: nothing read from or written to disk."""

    def __init__(self, key: bytes) -> None:
        super().__init__(None)
        self._key = key


class WarningKeyRing(KeyRing):
    """A key file for a remote state: created when first needed, with a warning that a CI runner loses it."""

    def __init__(self, path: Path, location: str) -> None:
        super().__init__(path)
        self._where = path
        self._location = location

    def get(self, *, create: bool) -> bytes | None:
        if create and not self._where.exists():
            log.warning(
                "the state at %s keeps no password key (it must not travel with the state); creating %s here. "
                "On a CI runner that file is lost and users' passwords are set again on every run: set %s instead",
                self._location,
                self._where,
                KEY_VARIABLE,
            )
        return super().get(create=create)


def key_from_environment(environ: Mapping[str, str] | None = None) -> bytes | None:
    """The key ``CMSSYNC_STATE_KEY`` holds, or None when unset. Raises ConfigError (never quoting the value)."""
    text = (os.environ if environ is None else environ).get(KEY_VARIABLE, "").strip()
    if not text:
        return None
    register_secret(text)
    try:
        key = bytes.fromhex(text)
    except ValueError:
        raise ConfigError(f"{KEY_VARIABLE} is not hex; make one with `openssl rand -hex 32`") from None
    if len(key) < 16:
        raise ConfigError(f"{KEY_VARIABLE} is too short (at least 32 hex digits); make one with `openssl rand -hex 32`")
    return key


def _read_key(path: Path) -> bytes | None:
    try:
        text = path.read_text(encoding="ascii").strip()
    except FileNotFoundError:
        return None
    except (OSError, UnicodeDecodeError) as exc:
        raise StateError(f"{path}: cannot read the password key: {exc}") from exc
    try:
        key = bytes.fromhex(text)
    except ValueError as exc:
        raise StateError(f"{path}: the password key is not hex; delete it to start a new one") from exc
    if len(key) < 16:
        raise StateError(f"{path}: the password key is too short; delete it to start a new one")
    if path.stat().st_mode & 0o077:
        log.warning("password key %s is readable by other users; run `chmod 600 %s`", path, path)
    return key


def _create_key(path: Path) -> bytes:
    path.parent.mkdir(parents=True, exist_ok=True)
    key = secrets.token_bytes(32)
    fd, temp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")  # mode 0600
    try:
        with os.fdopen(fd, "w", encoding="ascii") as handle:
            handle.write(key.hex() + "\n")
            handle.flush()
            os.fsync(handle.fileno())
        try:
            os.link(temp, path)  # never replaces a key another process created meanwhile
        except FileExistsError:
            return _read_key(path) or key  # theirs (ours only if theirs vanished again: passwords get reset once)
    finally:
        os.unlink(temp)
    fsync_directory(path.parent)
    return key


def keyed_digest(key: bytes, username: str, password: str) -> str:
    message = f"{username}\0{password}".encode()
    return "hmac-sha256:" + hmac.new(key, message, hashlib.sha256).hexdigest()
