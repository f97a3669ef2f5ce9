"""The secret values this process knows, and masking them by value wherever text leaves the process.

Masking by pattern (``password=…``, ``Bearer …`` in :mod:`cmssync.logs`) misses a secret that appears bare: a token
endpoint that echoes the client secret in its ``hint``, a server error page quoting the form it received, an
exception message built from a value. So every secret is also *registered* the moment cmssync learns it —
settings' credentials when the token source is built (``cmssync.api.client.token_source``), tokens when the token
endpoint hands them out (``cmssync.api.auth``), user passwords when the content's environment variables are read
(``cmssync.content.passwords.resolve_password``), passwords of basic authentication and of URLs also as the
``user:password`` pair and its base64 (:func:`register_credentials`, :func:`register_url_credentials`) — and
:func:`mask` replaces each registered value, and its URL-encoded and JSON-escaped forms, with :data:`MASK`. The
edges call it: the log processor, every ``CmsSyncError`` message (so reports, plan outcomes and the daemon's
``/readyz`` hold masked text), the CLI's error printer.

One registry per process, like the logging configuration it serves: a secret learned by one client must be masked
in a log line written by any other part of the process. It only grows (a rotated token stays masked). Values
shorter than :data:`MIN_LENGTH` characters are not registered: masking ``"abc"`` everywhere would garble ordinary
text, and a secret that short is no secret.
"""

from __future__ import annotations

import base64
import json
import threading
from urllib.parse import quote, quote_plus, unquote, urlsplit, urlunsplit

MASK = "(sensitive)"
MIN_LENGTH = 6


class SecretRegistry:
    """A set of secret values and the forms they take in text; :meth:`mask` replaces them all."""

    def __init__(self) -> None:
        self._forms: set[str] = set()
        self._ordered: tuple[str, ...] = ()
        self._lock = threading.Lock()

    def register(self, *values: str | None) -> None:
        """Remember ``values`` (``None`` and values shorter than :data:`MIN_LENGTH` are ignored)."""
        forms = {form for value in values if value and len(value) >= MIN_LENGTH for form in _forms(value)}
        if not forms - self._forms:
            return
        with self._lock:
            self._forms |= forms
            # Longest first, so a secret that contains another is masked whole.
            self._ordered = tuple(sorted(self._forms, key=lambda form: (-len(form), form)))

    def mask(self, text: str) -> str:
        """``text`` with every registered value replaced by :data:`MASK`."""
        for form in self._ordered:
            if form in text:
                text = text.replace(form, MASK)
        return text

    def __contains__(self, value: object) -> bool:
        return isinstance(value, str) and value in self._forms

    def clear(self) -> None:
        """Forget everything (tests only: a process never un-learns a secret)."""
        with self._lock:
            self._forms = set()
            self._ordered = ()


def _forms(value: str) -> set[str]:
    """The value as it appears raw, in a form body or URL, and inside a JSON string."""
    return {value, quote_plus(value, safe=""), quote(value, safe=""), json.dumps(value)[1:-1]} - {""}


REGISTRY = SecretRegistry()
"""The process's registry (see the module docstring for why there is one)."""


def register_secret(*values: str | None) -> None:
    REGISTRY.register(*values)


def register_credentials(username: str | None, password: str | None) -> None:
    """A password and every form it travels in: bare (and URL- or JSON-escaped), as ``user:password`` (a URL's
    userinfo) and as the base64 of that pair (an HTTP basic ``Authorization`` header, which a proxy or a server may
    quote back in an error page)."""
    if not password:
        return
    pair = f"{username or ''}:{password}"
    REGISTRY.register(password, pair, base64.b64encode(pair.encode("utf-8")).decode("ascii"))


def register_url_credentials(url: str | None) -> None:
    """The password of a URL's userinfo (``https://user:password@host/``), which httpx sends as basic auth."""
    if not url:
        return
    parts = urlsplit(url)
    if parts.password is not None:
        register_credentials(unquote(parts.username or ""), unquote(parts.password))
        REGISTRY.register(parts.password)


def url_without_credentials(url: str) -> str:
    """``url`` as it may be shown or stored: no userinfo, query or fragment (``https://user:pw@host/x?t=1`` →
    ``https://host/x``); the one rule for a site, state or webhook address in messages, plans and the state."""
    parts = urlsplit(url.strip())
    host = parts.hostname or ""
    if ":" in host:
        host = f"[{host}]"
    try:
        port = parts.port
    except ValueError:  # refused by the settings; shown without it here
        port = None
    netloc = f"{host}:{port}" if port is not None else host
    return urlunsplit((parts.scheme, netloc, parts.path, "", ""))


def mask_secrets(text: str) -> str:
    return REGISTRY.mask(text)
