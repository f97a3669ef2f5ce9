"""Signed, expiring bearer tokens in the shape of a JWT (``header.claims.signature``, base64url).

The real server signs RS256 JWTs; the emulator signs with HMAC-SHA256 and a per-database secret, which is enough for a
client that treats the token as opaque. Access and refresh tokens are both rows in ``tokens`` (keyed by ``jti``) so
that revocation (refresh-token rotation, the ``revoke-token`` fault) is a database fact, as in Concrete, where a
token whose row is gone or expired counts as revoked.

Parsing mirrors the error hints of lcobucci/jwt as league/oauth2-server reports them: a string without two dots,
segments that do not decode to JSON, a bad signature or an expired token.
"""

from __future__ import annotations

import base64
import binascii
import hashlib
import hmac
import json
import re
from typing import Any


class TokenError(Exception):
    """A token that cannot be used; the message is the hint the server reports."""


def _b64encode(raw: bytes) -> str:
    return base64.urlsafe_b64encode(raw).rstrip(b"=").decode("ascii")


_BASE64URL = re.compile(r"^[A-Za-z0-9_=-]+$")


def _b64decode(text: str) -> bytes:
    if not _BASE64URL.match(text):
        raise TokenError("Error while decoding from JSON")
    try:
        return base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))
    except (binascii.Error, ValueError) as exc:
        raise TokenError("Error while decoding from JSON") from exc


def sign(claims: dict[str, Any], key: bytes) -> str:
    header = _b64encode(json.dumps({"typ": "JWT", "alg": "HS256"}, separators=(",", ":")).encode())
    body = _b64encode(json.dumps(claims, separators=(",", ":")).encode())
    signature = hmac.new(key, f"{header}.{body}".encode(), hashlib.sha256).digest()
    return f"{header}.{body}.{_b64encode(signature)}"


def peek(token: str) -> dict[str, Any]:
    """The claims of a well-formed token without checking its signature (raises :class:`TokenError`)."""
    if token.count(".") != 2:
        raise TokenError("The JWT string must have two dots")
    header, body, _ = token.split(".")
    try:
        json.loads(_b64decode(header))
        claims = json.loads(_b64decode(body))
    except (ValueError, UnicodeDecodeError) as exc:
        raise TokenError("Error while decoding from JSON") from exc
    if not isinstance(claims, dict):
        raise TokenError("Error while decoding from JSON")
    return claims


def verify(token: str, key: bytes, now: int) -> dict[str, Any]:
    """The claims of a token signed with ``key`` that has not expired (raises :class:`TokenError`)."""
    claims = peek(token)
    header, body, signature = token.split(".")
    expected = hmac.new(key, f"{header}.{body}".encode(), hashlib.sha256).digest()
    try:
        given = _b64decode(signature)
    except TokenError as exc:
        raise TokenError("Access token could not be verified") from exc
    if not hmac.compare_digest(expected, given):
        raise TokenError("Access token could not be verified")
    exp = claims.get("exp")
    if not isinstance(exp, (int, float)) or exp <= now:
        raise TokenError("Access token could not be verified")
    return claims
