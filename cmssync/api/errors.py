"""What a failed request means, decided from the status *and* the body.

The real server and the documented dialect disagree on almost every error: the real one answers "not found" with
400 for blocks, areas and pages inside areas, validation failures with 401 (and a block validation failure with 200),
and unknown routes with the site's HTML 404 page; the documented one answers with plain-text bodies. So the status
alone says little; :func:`error_for_response` reads both and returns one exception per *meaning*.

Every message names ``METHOD path`` (never the query string or headers) and the server's own reason, or at most
:data:`BODY_PREFIX` characters of a body it did not expect, with anything that looks like a secret masked. Temporary
errors (``temporary = True``: rate limiting, 5xx, transport failures) are worth retrying; the others are not.
"""

from __future__ import annotations

import email.utils
import html
import json
import re
import time
from collections.abc import Sequence
from typing import Any

import httpx

from cmssync.errors import ApiError, escape_controls
from cmssync.logs import redact_text

BODY_PREFIX = 200
"""At most this many characters of an unexpected body appear in a message."""


class NotFound(ApiError):
    """The object does not exist (any status: 404, the real server's 400/401 "… not found." answers, plain text)."""


class PendingDeletion(NotFound):
    """The page is in the trash can ("This page is pending deletion."): gone for every practical purpose."""


class PermissionDenied(ApiError):
    """The acting user may not do this (the site's permissions say no)."""


class OutOfScope(PermissionDenied):
    """The access token lacks the OAuth scope of this endpoint ("Endpoint out of scope.")."""


class ValidationFailed(ApiError):
    """The server refused the values sent; ``messages`` holds every reason it gave."""


class Conflict(ApiError):
    """The request clashes with the site's state (a username already taken, deleting the live version, …)."""


class RateLimited(ApiError):
    """429 Too Many Requests; ``retry_after`` is the server's requested wait in seconds, if it said."""

    temporary = True

    def __init__(self, reason: str, *, retry_after: float | None = None, **kwargs: Any) -> None:
        super().__init__(reason, **kwargs)
        self.retry_after = retry_after


class ServerError(ApiError):
    """5xx: the server failed (an uncaught exception on a real Concrete site, a proxy, maintenance)."""

    temporary = True

    def __init__(self, reason: str, *, retry_after: float | None = None, **kwargs: Any) -> None:
        super().__init__(reason, **kwargs)
        self.retry_after = retry_after


class TransportError(ApiError):
    """No HTTP answer: connection refused, timeout, connection dropped.

    ``maybe_processed`` is False only when the request certainly never reached the server (a failed connect).
    """

    temporary = True

    def __init__(self, reason: str, *, maybe_processed: bool = True, **kwargs: Any) -> None:
        super().__init__(reason, **kwargs)
        self.maybe_processed = maybe_processed


class AuthenticationFailed(ApiError):
    """The token endpoint refused the credentials, or the API still said 401 after one re-authentication."""


class OutcomeUnknown(ApiError):
    """A create failed ambiguously (timeout, dropped connection, 5xx): it may or may not have happened.

    The client never repeats a create; the caller reads the site to learn whether the object exists.
    ``late_commit_polls``: after a timeout or a dropped connection the server may still be working on the request
    and commit it later, so one lookup that finds nothing proves nothing; the caller looks again after each of these
    waits (seconds) and, if the object never appears, leaves it for the next run rather than sending the create
    again. Empty after a 5xx: the server answered, so it finished with the request.
    """

    temporary = True

    def __init__(self, reason: str, *, late_commit_polls: tuple[float, ...] = (), **kwargs: Any) -> None:
        super().__init__(reason, **kwargs)
        self.late_commit_polls = late_commit_polls


class DeadlineReached(OutcomeUnknown):
    """The run's deadline (``run_timeout``) passed before the site answered a call successfully, and no retry waits
    past it: the call may or may not have happened. Nothing more is sent for it in this run (a create is looked up
    once, never sent again); the next run reads the site and finds out, as after a lost answer."""


class CreateUnconfirmed(OutcomeUnknown):
    """A create whose request may still be committed by the server did not show up within the lookups: it is not
    sent again in this run (that could make a duplicate); the next run finds it or creates it."""


class UnexpectedResponse(ApiError):
    """The answer is not what the API gives (not JSON, wrong shape, a redirect, an HTML page)."""


class ResponseTooLarge(UnexpectedResponse):
    """The answer's body is larger than the transport reads (``cmssync.api.transport.MAX_BODY_BYTES``)."""


class ApiDisabled(UnexpectedResponse):
    """An API or token URL answered with the HTML 404 page: the REST API is not enabled, or the prefix is wrong."""


_OAUTH_ERRORS = {
    "access_denied",
    "invalid_request",
    "invalid_client",
    "invalid_grant",
    "invalid_scope",
    "unsupported_grant_type",
    "unauthorized_client",
    "server_error",
    "temporarily_unavailable",
}
_NOT_FOUND = re.compile(r"\bnot found\b|^invalid parent page specified", re.IGNORECASE)
_INVALID = re.compile(r"^(invalid|unable to find)\b", re.IGNORECASE)
_PENDING_DELETION = re.compile(r"pending deletion", re.IGNORECASE)
_CONFLICT = re.compile(r"already (taken|in use|exists)|may not delete the approved version", re.IGNORECASE)
_PERMISSION = re.compile(
    r"do not have (the proper )?(access|permission)|not allowed|you may not|permission", re.IGNORECASE
)
_OUT_OF_SCOPE = re.compile(r"out of scope", re.IGNORECASE)
_WHOOPS_FIRST_LINE = re.compile(r"<!--\s*(\S[^\n]*)")
_TITLE = re.compile(r"<title[^>]*>(.*?)</title>", re.IGNORECASE | re.DOTALL)
_TAGS = re.compile(r"<[^>]+>")
_SPACE = re.compile(r"\s+")


def short(text: str, limit: int = BODY_PREFIX) -> str:
    """One line, at most ``limit`` characters, secrets masked, control characters escaped."""
    text = escape_controls(redact_text(_SPACE.sub(" ", text).strip()))
    return text if len(text) <= limit else text[: limit - 1] + "…"


def looks_like_html(response: httpx.Response) -> bool:
    if "html" in response.headers.get("content-type", "").lower():
        return True
    head = response.content[:200].lstrip().lower()
    return head.startswith((b"<!doctype", b"<html", b"<?xml", b"<head", b"<body"))


def html_summary(text: str) -> str:
    """A short reason from an HTML page: the Whoops exception line, or the page title."""
    whoops = _WHOOPS_FIRST_LINE.search(text[:4000])
    if whoops and not whoops.group(1).lower().startswith("<"):
        return short(html.unescape(whoops.group(1)))
    title = _TITLE.search(text[:20000])
    if title:
        return short(html.unescape(_TAGS.sub(" ", title.group(1))))
    return short(html.unescape(_TAGS.sub(" ", text[:2000])))


def parse_retry_after(value: str | None, *, now: float | None = None) -> float | None:
    """``Retry-After`` as seconds to wait: delta-seconds or an HTTP date; None when absent or unreadable."""
    if value is None:
        return None
    value = value.strip()
    if not value:
        return None
    try:
        seconds = float(value)
    except ValueError:
        try:
            when = email.utils.parsedate_to_datetime(value)
        except (TypeError, ValueError, IndexError):
            return None
        seconds = when.timestamp() - (time.time() if now is None else now)
    if seconds != seconds or seconds in (float("inf"), float("-inf")):  # NaN or infinite
        return None
    return max(0.0, seconds)


def json_body(response: httpx.Response) -> Any:
    """The parsed JSON body, or None when the body is not JSON."""
    return json_bytes(response.content)


def json_bytes(content: bytes) -> Any:
    """``content`` parsed as JSON, or None when it is empty or not JSON."""
    if not content:
        return None
    try:
        return json.loads(content)
    except (ValueError, UnicodeDecodeError):
        return None


def error_list_messages(body: Any) -> list[str] | None:
    """Messages of a Concrete ErrorList (``{"error": true, "errors": [...]}``) or of a Whoops JSON error; else None."""
    if not isinstance(body, dict) or "errors" not in body:
        return None
    errors = body.get("errors")
    if not isinstance(errors, list):
        return None
    if body.get("error") is True or isinstance(body.get("error"), dict | str):
        messages = [str(m) for m in errors if m is not None]
        if not messages and isinstance(body.get("error"), dict):
            messages = [str(body["error"].get("message", ""))]
        return messages
    return None


def oauth_error(body: Any) -> tuple[str, str] | None:
    """``(error, description)`` of an OAuth2 error body (league/oauth2-server), else None.

    The description and the hint are server text that may quote what was sent (a real server's ``hint`` can name
    the client secret or the password it refused), so they pass through :func:`short`: masked and shortened.
    """
    if not isinstance(body, dict):
        return None
    code = body.get("error")
    if not isinstance(code, str) or code not in _OAUTH_ERRORS:
        return None
    description = body.get("error_description") or body.get("message") or code
    hint = body.get("hint")
    text = short(str(description))
    if isinstance(hint, str) and hint:
        text = f"{text} ({short(hint)})"
    return code, text


def is_token_rejection(response: httpx.Response) -> bool:
    """A 401 that says the *token* is bad (expired, revoked, missing), so re-authenticating may help.

    Plain-text or ErrorList 401s are permission or validation answers (the documented dialect and the real server use
    401 for those) and re-authenticating would not change them.
    """
    if response.status_code != 401:
        return False
    body = json_body(response)
    found = oauth_error(body)
    if found is not None:
        return found[0] in {"access_denied", "invalid_request", "invalid_grant"}
    if error_list_messages(body) is not None:
        return False
    text = response.text[:500] if not looks_like_html(response) else ""
    # A plain-text 401 that names a permission or a missing object is an answer, not a token problem.
    return not (_PERMISSION.search(text) or _NOT_FOUND.search(text))


def _by_messages(messages: Sequence[str], status: int) -> type[ApiError]:
    joined = " ".join(messages)
    if _PENDING_DELETION.search(joined):
        return PendingDeletion
    if messages and all(_NOT_FOUND.search(m) for m in messages):
        return NotFound
    if messages and all(_INVALID.search(m) for m in messages):
        return ValidationFailed  # "Invalid block type handle." and the like, whatever the status
    if status == 404:
        return NotFound
    if messages and all(_CONFLICT.search(m) for m in messages):
        return Conflict
    if _OUT_OF_SCOPE.search(joined):
        return OutOfScope
    if messages and all(_PERMISSION.search(m) for m in messages):
        return PermissionDenied
    if status == 409:
        return Conflict
    return ValidationFailed


def error_from_messages(messages: Sequence[str], *, status: int, method: str, path: str) -> ApiError:
    """The error an ErrorList means, whatever its status (a real site answers block validation with 200)."""
    reason = "; ".join(short(m) for m in messages) or "error without a message"
    return _by_messages(messages, status)(reason, messages=messages, method=method, path=path, status=status)


def download_error(response: httpx.Response, *, path: str) -> ApiError:
    """Why a file's public URL did not give its bytes. Such a URL is served by the web server, not the REST API, so a
    404 there (or 410) says the file's bytes are missing or moved, never that the API is disabled."""
    status = response.status_code
    if status in (404, 410):
        reason = f"{status} {response.reason_phrase}".strip()
        return NotFound(
            f"the file's public URL answered {reason}: the site serves no bytes there (removed from the storage, or "
            "the file was renamed or deleted since it was listed)",
            method="GET",
            path=path,
            status=status,
        )
    return error_for_response(response, method="GET", path=path)


def error_for_response(response: httpx.Response, *, method: str, path: str, api: bool = True) -> ApiError:
    """The exception that says what a non-successful answer means (also for a 200 carrying an ErrorList).

    ``api=False`` for the token endpoint, whose HTML 404 also means "API disabled".
    """
    status = response.status_code
    where: dict[str, Any] = {"method": method, "path": path, "status": status}
    retry_after = parse_retry_after(response.headers.get("retry-after"))
    if status == 429:
        return RateLimited("rate limited by the site", retry_after=retry_after, **where)
    body = json_body(response)
    found = oauth_error(body)
    if found is not None:
        return _oauth_failure(*found, retry_after=retry_after, where=where)
    messages = error_list_messages(body)
    if messages is not None:
        if status >= 500:
            reason = "; ".join(short(m) for m in messages) or "error without a message"
            return ServerError(reason, retry_after=retry_after, messages=messages, **where)
        return error_from_messages(messages, status=status, method=method, path=path)
    if looks_like_html(response):
        return _html_failure(html_summary(response.text), retry_after=retry_after, where=where)
    if 300 <= status < 400:
        return _redirect(response.headers.get("location", "").strip(), where=where)
    if status >= 500:
        text = short(response.text) if body is None else short(json.dumps(body))
        return ServerError(text or "server error", retry_after=retry_after, **where)
    if body is None:  # the documented dialect: a plain-text reason
        return _plain_text_failure(short(response.text) or response.reason_phrase or "no reason given", where=where)
    return _json_failure(short(json.dumps(body)), where=where)


def _json_failure(text: str, *, where: dict[str, Any]) -> ApiError:
    """A JSON body that is neither an OAuth2 error nor an ErrorList."""
    status = where["status"]
    if status == 404:
        return NotFound(text, **where)
    if 400 <= status < 500:
        return ValidationFailed(text, messages=[text], **where)
    return UnexpectedResponse(f"unexpected answer: {text}", **where)


def _oauth_failure(code: str, text: str, *, retry_after: float | None, where: dict[str, Any]) -> ApiError:
    """An OAuth2 error body (the token endpoint, or a token the API refused)."""
    status = where["status"]
    if _OUT_OF_SCOPE.search(text):
        return OutOfScope(
            f"{text}; the access token lacks this endpoint's scope (check auth.scopes and the integration)", **where
        )
    if status == 401 or code in {"invalid_client", "invalid_grant", "unsupported_grant_type", "invalid_scope"}:
        return AuthenticationFailed(f"{code}: {text}", **where)
    if status >= 500:
        return ServerError(f"{code}: {text}", retry_after=retry_after, **where)
    return ValidationFailed(f"{code}: {text}", messages=[text], **where)


def _html_failure(summary: str, *, retry_after: float | None, where: dict[str, Any]) -> ApiError:
    """An HTML page where JSON was due: the site's 404 page (the API is off or the prefix wrong), a crash page, or
    something in front of the site."""
    status = where["status"]
    if status == 404:
        return ApiDisabled(
            f"the site answered with an HTML page ({summary}): the REST API is not enabled "
            "(concrete.api.enabled) or site.url/site.api_prefix is wrong",
            **where,
        )
    if status >= 500:
        return ServerError(summary, retry_after=retry_after, **where)
    return UnexpectedResponse(f"HTML instead of JSON: {summary}", **where)


def _redirect(location: str, *, where: dict[str, Any]) -> ApiError:
    if not location:
        return UnexpectedResponse(
            f"the site answered with a redirect ({where['status']}) without a Location header; check site.url and "
            "the proxy in front of the site",
            **where,
        )
    return UnexpectedResponse(
        f"redirected to {short(location.split('?')[0], 120)}; use that address as site.url", **where
    )


def _plain_text_failure(text: str, *, where: dict[str, Any]) -> ApiError:
    """A plain-text reason (the documented dialect), by status and by what it says."""
    status = where["status"]
    cls: type[ApiError]
    if status in (401, 403) and not _NOT_FOUND.search(text):
        cls = AuthenticationFailed if status == 401 and not _PERMISSION.search(text) else PermissionDenied
    elif status == 409:
        cls = Conflict
    elif 400 <= status < 500:
        cls = _by_messages([text], status)
    else:
        return UnexpectedResponse(f"unexpected answer: {text}", **where)
    return cls(text, messages=[text], **where)
