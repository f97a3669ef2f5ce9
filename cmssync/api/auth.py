"""Access tokens: the OAuth2 grants of design.md §7, one token fetch shared by concurrent requests.

A :class:`TokenSource` hands out a bearer token and is told when the API rejected one (:meth:`TokenSource.rejected`);
the transport then asks once more and, if it is refused again, fails with ``AuthenticationFailed``. Tokens are
renewed ``leeway`` seconds before they expire. An ``asyncio.Lock`` makes concurrent callers wait for one fetch.

Grants: ``password`` (the site must enable it; it counts as a login), ``client_credentials`` (runs as Guest on a real
site: read-only checks), ``refresh_token`` (Concrete rotates refresh tokens and revokes the old one at once, so the new
refresh token is written to ``token_store`` — atomically, mode 0600 — *before* the new access token is used), and a
static ``token`` (cannot be renewed). The token endpoint is ``POST {site}/oauth/2.0/token``, form encoded (a JSON body
is not read by Concrete); scopes are always requested explicitly, since a token without scopes can call nothing.

Every credential a source is given and every token the site hands out is registered with :mod:`cmssync.secrets`
before it is used, so no log line, error or report can carry it, even where a server echoes it back.

Between processes, the access token of a ``password`` or ``client_credentials`` grant is kept in a per-user
:class:`~cmssync.api.token_cache.TokenCache` (``auth.token_cache``) until ``leeway`` seconds before it expires, so
that the next command skips the grant; a rejected cached token is dropped from the cache and fetched anew once.
"""

from __future__ import annotations

import asyncio
import base64
import contextlib
import hashlib
import json
import time
from collections.abc import Awaitable, Callable, Mapping, Sequence
from pathlib import Path
from typing import Any, Protocol

import httpx
from pydantic import ValidationError

from cmssync.api.errors import (
    AuthenticationFailed,
    ServerError,
    UnexpectedResponse,
    error_for_response,
    json_body,
    looks_like_html,
    short,
)
from cmssync.api.models import TokenResponse
from cmssync.api.token_cache import CACHED_GRANTS, CachedToken, TokenCache, cache_key
from cmssync.fileio import write_atomically
from cmssync.secrets import register_secret

TOKEN_PATH = "/oauth/2.0/token"

DEFAULT_SCOPES: tuple[str, ...] = (
    "account:read",
    "system:info:read",
    "sites:read",
    "files:read",
    "files:add",
    "files:update",
    "files:delete",
    "pages:read",
    "pages:add",
    "pages:update",
    "pages:delete",
    "pages:areas:add_block",
    "pages:areas:update_block",
    "pages:areas:delete_block",
    "pages:versions:read",
    "pages:versions:update",
    "pages:versions:delete",
    "blocks:read",
    "blocks:delete",
    "users:read",
    "users:add",
    "users:update",
    "users:delete",
    "groups:read",
    "groups:add",
)
"""Every scope cmssync uses (concrete-api.md §2); ``openid`` and the unused ``blocks:update`` are left out."""

TokenPost = Callable[[str, Mapping[str, str]], Awaitable[httpx.Response]]
"""How a token source POSTs a form to the token endpoint: ``(url, form) -> response`` (counted, logged, retried)."""


class TokenSource(Protocol):
    can_renew: bool
    """False for a static token: a 401 then fails at once."""

    async def token(self, post: TokenPost) -> str: ...

    async def rejected(self, token: str) -> None: ...


class StaticToken:
    """A bearer token given by the user (``auth.grant: token``); it cannot be renewed."""

    can_renew = False

    def __init__(self, token: str) -> None:
        register_secret(token)
        self._token = token

    async def token(self, post: TokenPost) -> str:
        return self._token

    async def rejected(self, token: str) -> None:
        return None


class OAuthTokens:
    """Tokens from the site's token endpoint for one grant, cached until ``leeway`` seconds before expiry."""

    can_renew = True

    def __init__(
        self,
        *,
        token_url: str,
        grant: str,
        client_id: str,
        client_secret: str | None = None,
        username: str | None = None,
        password: str | None = None,
        refresh_token: str | None = None,
        scopes: Sequence[str] | None = DEFAULT_SCOPES,
        token_store: Path | None = None,
        cache: TokenCache | None = None,
        leeway: float = 60.0,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        if grant not in {"password", "client_credentials", "refresh_token"}:
            raise ValueError(f"unsupported grant {grant!r}")
        register_secret(client_secret, password, refresh_token)
        self.token_url = token_url
        self.grant = grant
        self._client_id = client_id
        self._client_secret = client_secret
        self._username = username
        self._password = password
        self._configured_refresh = refresh_token
        self._refresh_token = refresh_token
        self._scopes = list(scopes) if scopes is not None else None
        self._store = token_store
        self._leeway = leeway
        self._clock = clock
        self._access: str | None = None
        self._expires_at = 0.0
        self._lock = asyncio.Lock()
        self._loaded_store = False
        self._cache = cache if grant in CACHED_GRANTS else None
        self._cache_key = (
            cache_key(
                token_url=token_url,
                client_id=client_id,
                username=username,
                grant=grant,
                scopes=self._scopes,
                secrets=(client_secret, password),
            )
            if self._cache is not None
            else ""
        )
        self._rejected: set[str] = set()
        self.cache_hits = 0
        """Tokens taken from the cache instead of the token endpoint (for tests and diagnostics)."""
        self.fetches = 0
        """Token requests made (for tests and diagnostics)."""
        self.last_token: str | None = None

    async def token(self, post: TokenPost) -> str:
        async with self._lock:
            if self._access is not None and self._clock() < self._expires_at - self._leeway:
                return self._access
            self._access = None
            cached = self._from_cache()
            if cached is not None:
                return cached
            token = await self._fetch(post)
            if self._cache is not None:
                lifetime = self._expires_at - self._clock()
                self._cache.save(self._cache_key, CachedToken(token, self._cache.now() + lifetime))
            return token

    async def rejected(self, token: str) -> None:
        async with self._lock:
            self._rejected.add(token)
            if self._access == token:
                self._access = None
            if self._cache is not None:
                self._cache.discard(self._cache_key, token)

    def _from_cache(self) -> str | None:
        """A token another process (or client) cached, if it has more than ``leeway`` seconds left and was not
        rejected here; registered as a secret by the cache before it is returned."""
        if self._cache is None:
            return None
        cached = self._cache.load(self._cache_key)
        if cached is None or cached.access_token in self._rejected:
            return None
        remaining = cached.expires_at - self._cache.now()
        if remaining <= self._leeway:
            return None
        self.cache_hits += 1
        self._access = cached.access_token
        self._expires_at = self._clock() + remaining
        self.last_token = cached.access_token
        return cached.access_token

    # -- fetching -----------------------------------------------------------------------------------------------

    async def _fetch(self, post: TokenPost) -> str:
        if self.grant == "refresh_token":
            self._load_store()
            if not self._refresh_token:
                raise AuthenticationFailed(
                    "no refresh token: set auth.refresh_token (CMSSYNC_REFRESH_TOKEN)", method="POST", path=TOKEN_PATH
                )
            return await self._request(post, self._refresh_form(self._refresh_token), persist_refresh=True)
        if self.grant == "password" and self._refresh_token:
            # Renew with the refresh token the password grant gave, rather than logging in again.
            with contextlib.suppress(AuthenticationFailed):
                return await self._request(post, self._refresh_form(self._refresh_token), persist_refresh=False)
            self._refresh_token = None
        form = {"grant_type": self.grant, "client_id": self._client_id}
        if self._client_secret is not None:
            form["client_secret"] = self._client_secret
        if self.grant == "password":
            form["username"] = self._username or ""
            form["password"] = self._password or ""
        if self._scopes:
            form["scope"] = " ".join(self._scopes)
        return await self._request(post, form, persist_refresh=False)

    def _refresh_form(self, refresh_token: str) -> dict[str, str]:
        form = {"grant_type": "refresh_token", "refresh_token": refresh_token, "client_id": self._client_id}
        if self._client_secret is not None:
            form["client_secret"] = self._client_secret
        # No scope on refresh unless configured: asking for more than the original grant is invalid_scope.
        if self._scopes is not None and self.grant == "refresh_token" and self._scopes != list(DEFAULT_SCOPES):
            form["scope"] = " ".join(self._scopes)
        return form

    async def _request(self, post: TokenPost, form: dict[str, str], *, persist_refresh: bool) -> str:
        self.fetches += 1
        response = await post(self.token_url, form)
        if response.status_code != 200:
            raise self._explain(response, form["grant_type"])
        try:
            answer = TokenResponse.model_validate(json_body(response))
            register_secret(answer.access_token, answer.refresh_token)
        except ValidationError:
            if looks_like_html(response):
                raise UnexpectedResponse(
                    "the token endpoint answered with an HTML page instead of a token",
                    method="POST",
                    path=TOKEN_PATH,
                    status=200,
                ) from None
            raise UnexpectedResponse(
                f"the token endpoint's answer holds no access_token: {short(response.text, 80)}",
                method="POST",
                path=TOKEN_PATH,
                status=200,
            ) from None
        if answer.refresh_token:
            if persist_refresh:
                # Concrete revokes the old refresh token now: keep the new one before anything else can fail.
                self._save_store(answer.refresh_token)
            self._refresh_token = answer.refresh_token
        lifetime = float(answer.expires_in) if answer.expires_in and answer.expires_in > 0 else 3600.0
        self._expires_at = self._clock() + lifetime
        self._access = answer.access_token
        self.last_token = answer.access_token
        return answer.access_token

    def _explain(self, response: httpx.Response, grant: str) -> Exception:
        error = error_for_response(response, method="POST", path=TOKEN_PATH, api=False)
        status = response.status_code
        body = json_body(response)
        code = body.get("error") if isinstance(body, dict) else None
        where: dict[str, Any] = {"method": "POST", "path": TOKEN_PATH, "status": status}
        if code == "unsupported_grant_type" and grant == "password":
            return AuthenticationFailed(
                "the site does not accept the password grant: enable it with "
                "concrete.api.grant_types.password_credentials (or use another auth.grant)",
                **where,
            )
        if code == "invalid_client":
            return AuthenticationFailed(
                "client authentication failed: wrong auth.client_secret for this client_id", **where
            )
        if code == "invalid_grant" and grant == "password":
            return AuthenticationFailed(
                "the user credentials were incorrect (auth.username / auth.password), or the client_id is unknown",
                **where,
            )
        if code == "invalid_grant" and grant == "client_credentials":
            return AuthenticationFailed("unknown auth.client_id (the integration's client key)", **where)
        if code in {"invalid_request", "invalid_grant"} and grant == "refresh_token":
            return AuthenticationFailed(
                f"the refresh token was refused ({error.reason}); obtain a new one and set auth.refresh_token",
                **where,
            )
        if code == "invalid_scope":
            return AuthenticationFailed(
                f"the site does not know a requested scope ({error.reason}); check auth.scopes", **where
            )
        if isinstance(error, ServerError) and "getClientSecret" in response.text[:4000]:
            # A real 9.3 site answers an unknown client id with a 500 page under the password grant.
            return AuthenticationFailed("unknown auth.client_id (the site failed looking it up)", **where)
        return error

    # -- the refresh-token store ------------------------------------------------------------------------------

    def _fingerprint(self) -> str:
        return hashlib.sha256((self._configured_refresh or "").encode()).hexdigest()[:16]

    def _load_store(self) -> None:
        if self._loaded_store or self._store is None:
            return
        self._loaded_store = True
        try:
            data = json.loads(self._store.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            return
        if not isinstance(data, dict) or not isinstance(data.get("refresh_token"), str):
            return
        register_secret(data["refresh_token"])
        # A refresh token newly set in the settings wins over one rotated from an older setting.
        if self._configured_refresh and data.get("configured") != self._fingerprint():
            return
        self._refresh_token = data["refresh_token"]

    def _save_store(self, refresh_token: str) -> None:
        if self._store is None:
            return
        self._loaded_store = True
        write_secret_file(
            self._store,
            json.dumps({"refresh_token": refresh_token, "configured": self._fingerprint(), "saved_at": time.time()}),
        )


def write_secret_file(path: Path, text: str) -> None:
    """Write ``text`` to ``path`` atomically, readable by its owner only (mode 0600)."""
    write_atomically(path, text, mode=0o600)


def jwt_claims(token: str) -> dict[str, Any] | None:
    """The claims of a JWT, decoded without verifying the signature; None if ``token`` is not a JWT."""
    parts = token.split(".")
    if len(parts) != 3:
        return None
    payload = parts[1] + "=" * (-len(parts[1]) % 4)
    try:
        claims = json.loads(base64.urlsafe_b64decode(payload))
    except (ValueError, UnicodeDecodeError):
        return None
    return claims if isinstance(claims, dict) else None


def granted_scopes(token: str) -> list[str] | None:
    """The ``scopes`` claim of a Concrete access token; None when unknown (not a JWT, or no such claim)."""
    claims = jwt_claims(token)
    if claims is None:
        return None
    scopes = claims.get("scopes", claims.get("scope"))
    if isinstance(scopes, str):
        return scopes.split()
    if isinstance(scopes, list):
        return [str(s) for s in scopes]
    return None
