"""OAuth2 as league/oauth2-server behaves inside Concrete 9.3: the token endpoint and bearer validation.

Token endpoint (``POST /oauth/2.0/token``) reads **form fields only**: a JSON body is no body at all, so it answers
``unsupported_grant_type``. Client credentials come from the form or HTTP Basic. Grants: ``client_credentials``
(a token without user: requests run as Guest), ``password`` (a login: counters move), ``refresh_token`` (rotates:
the used refresh token and the access token issued with it are revoked) and ``authorization_code`` (no code can be
valid here). Quirks kept from the recording: an unknown client id is ``invalid_grant`` with client_credentials but an
HTML 500 with the password grant; scopes not allowed for the client are dropped silently; an unknown scope is
``invalid_scope``; no scope at all gives a token that every endpoint refuses as out of scope.
"""

from __future__ import annotations

import base64
import binascii
import json
import uuid
from typing import Any

from starlette.requests import Request
from starlette.responses import Response

from cmssync.emulator import responses, tokens, userstore
from cmssync.emulator.caller import Caller
from cmssync.emulator.catalog import SCOPES
from cmssync.emulator.runtime import Emulator
from cmssync.emulator.store import dumps, loads, now

INVALID_REQUEST = (
    "The request is missing a required parameter, includes an invalid parameter value, includes a parameter more "
    "than once, or is otherwise malformed."
)
DENIED = "The resource owner or authorization server denied the request."
BAD_CREDENTIALS = "The user credentials were incorrect."
INVALID_SCOPE = "The requested scope is invalid, unknown, or malformed"
UNSUPPORTED_GRANT = "The authorization grant type is not supported by the authorization server."
TOKEN_HEADERS = {"cache-control": "no-store, private", "pragma": "no-cache", "content-type": responses.JSON_UTF8}


class OAuthFailure(Exception):
    def __init__(self, response: Response) -> None:
        super().__init__(response.status_code)
        self.response = response


def _fail(error: str, description: str, status: int, hint: str | None = None, **headers: str) -> OAuthFailure:
    return OAuthFailure(responses.oauth_error(error, description, status, hint, headers or None))


def _client_credentials(request: Request, form: dict[str, str]) -> tuple[str | None, str | None, bool]:
    header = request.headers.get("authorization", "")
    if header.startswith("Basic "):
        try:
            decoded = base64.b64decode(header[6:].strip(), validate=True).decode()
        except (binascii.Error, UnicodeDecodeError):
            decoded = ""
        if ":" in decoded:
            client_id, _, secret = decoded.partition(":")
            return client_id, secret, True
    return form.get("client_id"), form.get("client_secret"), False


async def read_form(request: Request) -> dict[str, str]:
    content_type = request.headers.get("content-type", "").split(";")[0].strip().lower()
    if content_type not in ("application/x-www-form-urlencoded", "multipart/form-data"):
        return {}
    try:
        form = await request.form()
    except Exception:  # a malformed form is no form to PHP either
        return {}
    out = {k: v for k, v in form.items() if isinstance(v, str)}
    await form.close()
    return out


async def token_endpoint(request: Request, emu: Emulator) -> Response:
    form = await read_form(request)
    try:
        return _issue(request, emu, form)
    except OAuthFailure as failure:
        return failure.response


def _issue(request: Request, emu: Emulator, form: dict[str, str]) -> Response:
    grant = form.get("grant_type", "")
    grants = {"client_credentials", "refresh_token", "authorization_code"}
    if emu.settings.password_grant:
        grants.add("password")
    if grant not in grants:
        raise _fail(
            "unsupported_grant_type", UNSUPPORTED_GRANT, 400, "Check that all required parameters have been provided"
        )
    client_id, secret, basic = _client_credentials(request, form)
    if not client_id:
        raise _fail("invalid_request", INVALID_REQUEST, 400, "Check the `client_id` parameter")
    client = emu.store.one("SELECT * FROM clients WHERE client_id = ?", client_id)
    if client is None:
        if grant == "client_credentials":
            raise _fail("invalid_grant", BAD_CREDENTIALS, 400)
        # Concrete's ClientRepository::validateClient dereferences the missing client (recorded as a Whoops 500).
        raise OAuthFailure(
            responses.whoops(
                "Error",
                "Call to a member function getClientSecret() on null",
                xhr=False,
                file="<site-root>/concrete/src/Entity/OAuth/ClientRepository.php",
                line=57,
            )
        )
    if secret != client["secret"]:
        extra = {"www-authenticate": 'Basic realm="OAuth"'} if basic else {}
        raise _fail("invalid_client", "Client authentication failed", 401, **extra)
    allowed = loads(client["scopes"])
    ts = now()
    store = emu.store
    if grant == "authorization_code":
        hint = "Cannot decrypt the authorization code" if form.get("code") else "Check the `code` parameter"
        raise _fail("invalid_request", INVALID_REQUEST, 400, hint)
    if grant == "refresh_token":
        return _refresh(emu, client_id, form, allowed, ts, issuer=str(request.base_url))
    requested = _requested_scopes(form.get("scope"))
    user_id: int | None = None
    if grant == "password":
        username, password = form.get("username"), form.get("password")
        if not username:
            raise _fail("invalid_request", INVALID_REQUEST, 400, "Check the `username` parameter")
        if not password:
            raise _fail("invalid_request", INVALID_REQUEST, 400, "Check the `password` parameter")
        user = store.one("SELECT * FROM users WHERE username = ? COLLATE NOCASE", username)
        if user is None or not userstore.check_password(user["password"], password) or user["status"] != "active":
            raise _fail("invalid_grant", BAD_CREDENTIALS, 400)
        user_id = int(user["id"])
    scopes = [s for s in requested if allowed is None or s in allowed]
    with store.transaction():
        if user_id is not None:
            userstore.record_login(store, user_id, ts)
        body = _tokens(emu, client, user_id, scopes, ts, with_refresh=user_id is not None, issuer=str(request.base_url))
    return Response(json.dumps(body, separators=(",", ":")), headers=TOKEN_HEADERS)


def _requested_scopes(text: str | None) -> list[str]:
    names = [s for s in (text or "").split(" ") if s]
    for name in names:
        if name not in SCOPES:
            raise _fail("invalid_scope", INVALID_SCOPE, 400, f"Check the `{name}` scope")
    return list(dict.fromkeys(names))


def _tokens(
    emu: Emulator, client: Any, user_id: int | None, scopes: list[str], ts: int, *, with_refresh: bool, issuer: str
) -> dict[str, Any]:
    """Issue an access token (and a refresh token for user grants); call inside a transaction."""
    ttl = emu.settings.token_ttl
    access_jti = str(uuid.uuid4())
    claims = {
        "aud": client["identifier"],
        "jti": access_jti,
        "iat": ts,
        "nbf": ts,
        "exp": ts + ttl,
        "sub": "" if user_id is None else str(user_id),
        "scopes": scopes,
    }
    emu.store.db.execute(
        "INSERT INTO tokens (jti, kind, client_id, user_id, scopes, expires) VALUES (?, 'access', ?, ?, ?, ?)",
        (access_jti, client["client_id"], user_id, dumps(scopes), ts + ttl),
    )
    body: dict[str, Any] = {}
    if "openid" in scopes and user_id is not None:
        user = userstore.get(emu.store, user_id)
        assert user is not None
        body["id_token"] = tokens.sign(
            {
                "aud": client["identifier"],
                "iss": issuer,
                "iat": ts,
                "nbf": ts,
                "exp": ts + ttl,
                "sub": str(user_id),
                "email": user["email"],
                "email_verified": True,
                "preferred_username": user["username"],
                "profile": "",
            },
            emu.signing_key,
        )
    body.update(token_type="Bearer", expires_in=ttl, access_token=tokens.sign(claims, emu.signing_key))
    if with_refresh:
        refresh_jti = str(uuid.uuid4())
        refresh_ttl = 30 * 24 * 3600
        emu.store.db.execute(
            "INSERT INTO tokens (jti, kind, client_id, user_id, scopes, expires, access_jti)"
            " VALUES (?, 'refresh', ?, ?, ?, ?, ?)",
            (refresh_jti, client["client_id"], user_id, dumps(scopes), ts + refresh_ttl, access_jti),
        )
        body["refresh_token"] = tokens.sign(
            {"jti": refresh_jti, "kind": "refresh", "exp": ts + refresh_ttl}, emu.signing_key
        )
    return body


def _refresh(emu: Emulator, client_id: str, form: dict[str, str], allowed: Any, ts: int, *, issuer: str) -> Response:
    invalid = "The refresh token is invalid."
    try:
        claims = tokens.verify(form.get("refresh_token", ""), emu.signing_key, ts)
    except tokens.TokenError:
        raise _fail("invalid_request", invalid, 401, "Cannot decrypt the refresh token") from None
    row = emu.store.one("SELECT * FROM tokens WHERE jti = ? AND kind = 'refresh'", claims.get("jti"))
    if row is None:
        raise _fail("invalid_request", invalid, 401, "Cannot decrypt the refresh token")
    if row["client_id"] != client_id:
        raise _fail("invalid_request", invalid, 401, "Token is not linked to client")
    if row["revoked"]:
        raise _fail("invalid_request", invalid, 401, "Token has been revoked")
    original = loads(row["scopes"])
    requested = _requested_scopes(form.get("scope")) if form.get("scope") else original
    for name in requested:
        if name not in original:
            raise _fail("invalid_scope", INVALID_SCOPE, 400, f"Check the `{name}` scope")
    client = emu.store.one("SELECT * FROM clients WHERE client_id = ?", client_id)
    with emu.store.transaction():
        # Rotation: the used refresh token and the access token issued with it stop working.
        emu.store.db.execute("UPDATE tokens SET revoked = 1 WHERE jti IN (?, ?)", (row["jti"], row["access_jti"]))
        emu.forget_tokens()
        body = _tokens(
            emu,
            client,
            row["user_id"],
            [s for s in requested if allowed is None or s in allowed],
            ts,
            with_refresh=True,
            issuer=issuer,
        )
    return Response(json.dumps(body, separators=(",", ":")), headers=TOKEN_HEADERS)


def authenticate(request: Request, emu: Emulator) -> Caller:
    """The caller of a resource request, or :class:`OAuthFailure` with the league error."""
    header = request.headers.get("authorization")
    if header is None:
        raise _fail("access_denied", DENIED, 401, 'Missing "Authorization" header')
    # BearerTokenValidator strips "Bearer " case-sensitively; anything else is parsed as the token itself.
    stripped = header.lstrip()
    token = stripped[7:].strip() if stripped.startswith("Bearer ") else header.strip()
    ts = now()
    cached = emu.token_cache.get(token)
    if cached is not None and cached[1] > ts:
        return cached[0]
    try:
        claims = tokens.verify(token, emu.signing_key, ts)
    except tokens.TokenError as exc:
        raise _fail("access_denied", DENIED, 401, str(exc)) from None
    row = emu.store.one("SELECT * FROM tokens WHERE jti = ? AND kind = 'access'", claims.get("jti"))
    if row is None or row["revoked"] or row["expires"] <= ts:
        raise _fail("access_denied", DENIED, 401, "Access token has been revoked")
    user_id = row["user_id"]
    if user_id is not None and userstore.get(emu.store, int(user_id)) is None:
        raise _fail("access_denied", DENIED, 401, "Access token has been revoked")
    caller = Caller(
        user_id=None if user_id is None else int(user_id), scopes=frozenset(loads(row["scopes"])), jti=str(row["jti"])
    )
    if len(emu.token_cache) > 10_000:
        emu.token_cache.clear()
    emu.token_cache[token] = (caller, min(int(claims["exp"]), int(row["expires"])))
    return caller


def revoke_bearer(request: Request, emu: Emulator) -> None:
    """Revoke the token a request carries, if it carries a readable one (the ``revoke-token`` fault)."""
    header = request.headers.get("authorization", "")
    token = header[7:].strip() if header.startswith("Bearer ") else ""
    try:
        jti = tokens.peek(token).get("jti")
    except tokens.TokenError:
        return
    with emu.store.transaction():
        emu.store.db.execute("UPDATE tokens SET revoked = 1 WHERE jti = ?", (jti,))
    emu.forget_tokens()


def out_of_scope() -> Response:
    return responses.oauth_error(
        "invalid_request", "Endpoint out of scope.", 400, "Try reauthorizing with the proper scope."
    )
