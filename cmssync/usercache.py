"""The per-user cache: where cmssync keeps what it derives, outside any directory a repository can fill.

A content directory (and the state's directory beside it, which the example CI workflow commits) is whatever the
last ``git checkout`` made it: a pull request can add any file there, with the owner and mode git gives. So nothing
cmssync reads back *as its own* may live there — not the access tokens (:mod:`cmssync.api.token_cache`), not the
parse cache (which is pickled, i.e. code: :mod:`cmssync.content.yamlsource`), not the file-hash cache (a lying hash
would hide a changed file from the plan a reviewer reads).

* **Root.** ``$XDG_CACHE_HOME/cmssync`` (an absolute XDG path only, as the spec says), else ``~/.cache/cmssync``;
  none when there is no home directory (then nothing is cached on disk).
* **Out of every repository and state folder.** :func:`usable_root` refuses a root inside the git work tree that
  holds the content (found by walking up to ``.git``), inside the content itself, or inside the state's folder or
  the work tree holding it: ``XDG_CACHE_HOME`` inside a checkout (a CI caching pattern) would otherwise let a
  committed ``cache.key`` sign a committed pickle, and the state's folder is committed by the documented CI
  workflow. A home directory that is itself a git work tree (dotfiles) holding the content therefore has no disk
  cache: speed, never correctness.
* **Per content directory.** :func:`derived_cache_dir` is ``<root>/content/<digest of the resolved content path>``,
  so two checkouts never share (or thrash) one cache.
* **Authenticated.** :func:`cache_key` is 32 random bytes in ``<root>/cache.key`` (0600, created once, never
  committed anywhere): derived files are signed with it (HMAC-SHA256) and a file whose signature does not verify is
  ignored, so even a file planted in the cache directory by something else cannot be taken for cmssync's own.
* **Private.** Directories are created 0700 and used only when they belong to this user and nobody else may write
  them; anything else means no disk cache (speed, never correctness).
"""

from __future__ import annotations

import contextlib
import hashlib
import hmac
import os
import secrets
import stat
from collections.abc import Sequence
from pathlib import Path

KEY_FILE = "cache.key"
KEY_BYTES = 32
SIGNATURE_BYTES = hashlib.sha256().digest_size


def user_cache_root() -> Path | None:
    """``$XDG_CACHE_HOME/cmssync`` or ``~/.cache/cmssync``; None when there is no home directory to put it in."""
    xdg = os.environ.get("XDG_CACHE_HOME", "").strip()
    if xdg and Path(xdg).is_absolute():
        return Path(xdg) / "cmssync"
    try:
        home = Path.home()
    except (RuntimeError, KeyError):
        return None
    return home / ".cache" / "cmssync" if home.is_absolute() and str(home) != "/" else None


def private_directory(path: Path) -> bool:
    """Create ``path`` (0700) if needed; True when it is a directory of this user that nobody else may write."""
    with contextlib.suppress(OSError):
        path.mkdir(mode=0o700, parents=True, exist_ok=True)
    try:
        info = os.stat(path, follow_symlinks=False)
    except OSError:
        return False
    return stat.S_ISDIR(info.st_mode) and info.st_uid == os.getuid() and not info.st_mode & 0o022


def work_tree_of(place: Path) -> Path:
    """The top of the git work tree holding ``place`` (the nearest directory at or above it with a ``.git``
    entry), or ``place`` itself (resolved) when none does."""
    resolved = place.resolve()
    for directory in (resolved, *resolved.parents):
        if os.path.lexists(directory / ".git"):
            return directory
    return resolved


def refusal(directory: Path, places: Sequence[Path]) -> str | None:
    """Why a cache must not live in ``directory`` for a command on ``places`` (the content directory, the state's
    folder), or None when it may: inside one of them or the git work tree holding it."""
    for place in places:
        if is_inside(directory, place):
            return f"{directory} is inside {place}, which may be committed to git"
        tree = work_tree_of(place)
        if is_inside(directory, tree):
            return f"{directory} is inside the git work tree {tree} that holds {place}"
    return None


def usable_root(places: Sequence[Path]) -> Path | None:
    """The per-user cache root for a command on ``places`` (see :func:`refusal`), created if needed; None when
    there is none, it is refused, or it is not private (a symbolic link, another user's, writable by others)."""
    root = user_cache_root()
    if root is None or refusal(root, places) is not None or not private_directory(root):
        return None
    return root


def is_inside(path: Path, place: Path) -> bool:
    """``path`` is ``place`` or under it, after resolving links."""
    resolved, home = path.resolve(), place.resolve()
    return resolved == home or home in resolved.parents


def derived_cache_dir(root: Path, content_root: Path) -> Path | None:
    """The private directory under the cache ``root`` (from :func:`usable_root`) for what cmssync derives from
    ``content_root`` (see the module docstring), or None when it is not private."""
    digest = hashlib.sha256(str(content_root.resolve()).encode("utf-8", "surrogatepass")).hexdigest()[:32]
    directory = root / "content" / digest
    return directory if private_directory(directory) else None


def cache_key(root: Path) -> bytes | None:
    """This user's key for signing derived files (created on first use) in the cache ``root`` (from
    :func:`usable_root`), or None when it cannot be kept privately."""
    path = root / KEY_FILE
    with contextlib.suppress(FileExistsError, OSError):
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_NOFOLLOW", 0), 0o600)
        with os.fdopen(fd, "wb") as handle:
            handle.write(secrets.token_bytes(KEY_BYTES))
    key = read_private_file(path, KEY_BYTES)
    return key if key is not None and len(key) == KEY_BYTES else None  # a half-written key (a killed run) is no key


def read_private_file(path: Path, limit: int) -> bytes | None:
    """The bytes of ``path`` if it is a regular file of this user that nobody else may read or write and it holds at
    most ``limit`` bytes; else None. A symbolic link is not followed."""
    try:
        # O_NONBLOCK: a FIFO planted under the name must not hang the command (no effect on a regular file).
        flags = os.O_RDONLY | os.O_NONBLOCK | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_CLOEXEC", 0)
        fd = os.open(path, flags)
    except OSError:
        return None
    with os.fdopen(fd, "rb") as handle:
        info = os.fstat(handle.fileno())
        if not stat.S_ISREG(info.st_mode) or info.st_uid != os.getuid() or info.st_mode & 0o077:
            return None
        if info.st_size > limit:
            return None
        try:
            data = handle.read(limit + 1)
        except OSError:
            return None
    return data if len(data) <= limit else None


def sign(key: bytes, payload: bytes) -> bytes:
    """``payload`` preceded by its signature under ``key``."""
    return hmac.new(key, payload, hashlib.sha256).digest() + payload


def verified(key: bytes, data: bytes) -> bytes | None:
    """The payload of ``data`` made by :func:`sign` with ``key``, or None when the signature does not verify."""
    signature, payload = data[:SIGNATURE_BYTES], data[SIGNATURE_BYTES:]
    expected = hmac.new(key, payload, hashlib.sha256).digest()
    return payload if len(signature) == SIGNATURE_BYTES and hmac.compare_digest(signature, expected) else None
