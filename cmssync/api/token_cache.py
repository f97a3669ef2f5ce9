"""Access tokens kept between processes, so that the next ``cmssync plan`` does not log in again.

A password grant costs a real site ~0.4 s (it verifies the password hash on every login), as much as the whole rest
of a small plan. Like the ``gh`` and ``az`` command lines, cmssync therefore keeps the access token a
``password`` or ``client_credentials`` grant returned, until shortly before it expires, in a per-user cache:

* **Where.** ``$XDG_CACHE_HOME/cmssync/tokens/`` or ``~/.cache/cmssync/tokens/`` (``auth.token_cache: true``, the
  default), or the directory ``auth.token_cache`` names; ``false`` turns it off. Never inside the content
  directory, the state's folder or the git work tree holding either (:func:`cmssync.usercache.refusal`): the
  example CI workflow commits the state's directory to a branch, and a content repository is git. The per-user
  root must be private as well (not a symbolic link, this user's, nobody else may write it). A default cache that
  would land elsewhere is not used; a directory named there is a ``ConfigError``.
* **One file per identity and credentials.** The name is a digest of (token URL, client id, username, grant,
  scopes) and of a scrypt hash of the client secret and password (salted with that identity), so two sites, two
  users, two scope sets — or a changed or wrong password or client secret — never share a token: a wrong
  credential makes the token request, which the site refuses, instead of riding on an old token. No secret goes
  into the name in clear, and the scrypt cost (~40 ms, once per process) makes guessing one from a file name as
  slow as guessing a password hash. The file holds the token and its expiry (wall-clock seconds) and nothing else —
  no refresh token, no password.
* **Who may read it.** The directory is created 0700, files are written 0600 with :func:`cmssync.fileio
  .write_atomically` (a reader sees the old file or the new one). A file that is not a regular file owned by this
  user with no group or other bits, in a directory of this user that others cannot write, is ignored, as is one
  that does not parse: the grant is then made as without a cache.
* **Trust.** A cached token is registered with :mod:`cmssync.secrets` before use, like a fresh one. When the site
  rejects it (401: revoked, the site reinstalled, the password changed and sessions dropped), the token source
  drops it, deletes the file if it still holds that token, and fetches a new token once (the transport's "rejected
  → ask once more" path).

Limits: the file of an old password stays until its token expires (it is never read again). Writing is best
effort: a cache that cannot be written is a debug log line, never an error.
"""

from __future__ import annotations

import contextlib
import functools
import hashlib
import json
import os
import stat
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

import structlog

from cmssync.config import Settings
from cmssync.errors import ConfigError
from cmssync.fileio import write_atomically
from cmssync.secrets import register_secret
from cmssync.usercache import read_private_file, refusal, usable_root

log = structlog.get_logger("cmssync.api")

CACHE_FORMAT = 1
MAX_FILE_BYTES = 64 * 1024
"""A token file larger than this is not read (a token is a few KiB at most)."""
CACHED_GRANTS = frozenset({"password", "client_credentials"})
"""Grants whose access token is cached; ``refresh_token`` keeps its rotated refresh token in ``auth.token_store``."""


@dataclass(frozen=True)
class CachedToken:
    access_token: str
    expires_at: float
    """Wall-clock seconds (``time.time``) when the site said the token expires."""


def default_cache_dir(places: Sequence[Path] = ()) -> Path | None:
    """``tokens`` in the per-user cache (:func:`cmssync.usercache.usable_root` for a command on ``places``: the
    content directory and the state's folder), or None without one that may be used."""
    root = usable_root(places)
    return root / "tokens" if root is not None else None


def token_cache_for(settings: Settings, *, base_dir: Path) -> TokenCache | None:
    """The cache ``auth.token_cache`` chooses for a command on the content directory ``base_dir``, or None.

    The per-user default is silently not used when it falls inside the content directory or the state's directory
    (a home directory inside the content, a container whose home is the state volume); a directory set explicitly
    there is a ``ConfigError``, since the user asked for something unsafe.
    """
    choice = settings.auth.token_cache
    if choice is False or settings.auth.grant not in CACHED_GRANTS:
        return None
    places = [base_dir, settings.state_path(base_dir).parent]
    if choice is True:
        directory = default_cache_dir(places)
        if directory is None:
            log.debug("token_cache.skipped", reason="no private per-user cache outside the content and the state")
        return TokenCache(directory) if directory is not None else None
    directory = settings.resolve(base_dir, choice)
    reason = refusal(directory, places)
    if reason is None:
        return TokenCache(directory)
    raise ConfigError(
        f"auth.token_cache: {reason}; an access token must not be kept there. "
        "Choose a directory outside the content and the state (or true for the per-user cache, false for none)"
    )


def cache_key(
    *,
    token_url: str,
    client_id: str,
    username: str | None,
    grant: str,
    scopes: Sequence[str] | None,
    secrets: Sequence[str | None] = (),
) -> str:
    """The file name (without ``.json``) of one identity's token with these credentials (``secrets``: the client
    secret and password): a digest in which the secrets only enter through a salted scrypt hash."""
    identity = [CACHE_FORMAT, token_url.rstrip("/"), client_id, username or "", grant, sorted(scopes or [])]
    named = hashlib.sha256(json.dumps(identity).encode()).digest()
    credentials = _credentials_hash(named, json.dumps([secret or "" for secret in secrets]))
    return hashlib.sha256(named + credentials).hexdigest()[:40]


@functools.lru_cache(maxsize=8)
def _credentials_hash(salt: bytes, secrets: str) -> bytes:
    """scrypt of the secrets (~40 ms), computed once per process and identity."""
    return hashlib.scrypt(secrets.encode(), salt=salt, n=2**13, r=8, p=1, dklen=32)


class TokenCache:
    """One directory of cached access tokens (see the module docstring)."""

    def __init__(self, directory: Path, *, wall: Callable[[], float] = time.time) -> None:
        self.directory = directory
        self._wall = wall

    def now(self) -> float:
        return self._wall()

    def path(self, key: str) -> Path:
        return self.directory / f"{key}.json"

    def load(self, key: str) -> CachedToken | None:
        """The token cached under ``key``, or None (absent, expired, unreadable, not ours, or not a token file)."""
        if not self._directory_is_private():
            return None
        text = _read_private_text(self.path(key))
        if text is None:
            return None
        try:
            data = json.loads(text)
        except ValueError:
            return None
        if not isinstance(data, dict) or data.get("format") != CACHE_FORMAT or data.get("key") != key:
            return None
        token, expires_at = data.get("access_token"), data.get("expires_at")
        if not isinstance(token, str) or not token or not isinstance(expires_at, int | float):
            return None
        register_secret(token)
        if expires_at <= self._wall():
            return None
        return CachedToken(token, float(expires_at))

    def save(self, key: str, token: CachedToken) -> None:
        """Keep ``token`` under ``key`` (directory 0700, file 0600, atomic); failures are logged, never raised."""
        try:
            self.directory.mkdir(mode=0o700, parents=True, exist_ok=True)
            info = os.stat(self.directory, follow_symlinks=False)
            if stat.S_ISDIR(info.st_mode) and info.st_uid == os.getuid() and stat.S_IMODE(info.st_mode) != 0o700:
                os.chmod(self.directory, 0o700)  # ours but made with a looser mode (another tool, an old umask)
            if not self._directory_is_private():
                log.debug("token_cache.skipped", directory=str(self.directory), reason="not a private directory")
                return
            document = {
                "format": CACHE_FORMAT,
                "key": key,
                "access_token": token.access_token,
                "expires_at": token.expires_at,
                "saved_at": self._wall(),
            }
            write_atomically(self.path(key), json.dumps(document), mode=0o600, durable=False)
        except OSError as exc:
            log.debug("token_cache.not_saved", directory=str(self.directory), error=str(exc))

    def discard(self, key: str, access_token: str) -> None:
        """Delete the file of ``key`` if it still holds ``access_token`` (another process may have renewed it)."""
        cached = self.load(key)
        if cached is not None and cached.access_token == access_token:
            with contextlib.suppress(OSError):
                self.path(key).unlink()

    def _directory_is_private(self) -> bool:
        """The directory is ours and nobody else may write into it (else a file there proves nothing)."""
        try:
            info = os.stat(self.directory, follow_symlinks=False)
        except OSError:
            return False
        return (
            stat.S_ISDIR(info.st_mode)
            and info.st_uid == os.getuid()
            and not info.st_mode & (stat.S_IWGRP | stat.S_IWOTH)
        )


def _read_private_text(path: Path) -> str | None:
    """The text of ``path`` if it is a regular file of this user that nobody else may read or write; else None."""
    data = read_private_file(path, MAX_FILE_BYTES)
    if data is None:
        return None
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError:
        return None
