"""Errors decided from status and body: the real server's answers (from the recording) and the documented ones."""

from __future__ import annotations

import json
from pathlib import Path

import httpx
import pytest

from cmssync.api import errors as e
from cmssync.api.errors import error_for_response, is_token_rejection, parse_retry_after
from tests.support.api_clients import HTML_404, WHOOPS_500

TRANSCRIPT = Path("/work/shared/conformance/concrete-9.3.1/transcript.jsonl")


def _recorded() -> dict[str, tuple[str, str, httpx.Response]]:
    found: dict[str, tuple[str, str, httpx.Response]] = {}
    if not TRANSCRIPT.exists():
        return found
    for line in TRANSCRIPT.read_text(encoding="utf-8").splitlines():
        entry = json.loads(line)
        response = entry["response"]
        if response["status"] == 200 and not (isinstance(response["body"], dict) and response["body"].get("error")):
            continue
        body = response.get("body")
        content_type = response.get("content_type") or "application/json"
        raw = json.dumps(body) if not isinstance(body, str) else body
        found[entry["step"]] = (
            entry["request"]["method"],
            entry["request"]["path"],
            httpx.Response(response["status"], content=raw.encode(), headers={"content-type": content_type}),
        )
    return found


RECORDED = _recorded()

EXPECTED: dict[str, type[e.ApiError]] = {
    "auth.no_header": e.AuthenticationFailed,
    "auth.garbage_token": e.AuthenticationFailed,
    "auth.admin_first.after_refresh": e.AuthenticationFailed,
    "auth.no_scope_token": e.OutOfScope,
    "auth.out_of_scope": e.OutOfScope,
    "cc.account": e.ServerError,
    "cc.account.xhr": e.ServerError,
    "cc.page_versions_home": e.PermissionDenied,
    "cc.post_page": e.PermissionDenied,
    "sites.unknown": e.NotFound,
    "pages.children.unknown": e.NotFound,
    "pages.read.unknown": e.NotFound,
    "pages.read.non_numeric": e.ApiDisabled,
    "pages.read.non_numeric.xhr": e.NotFound,
    "pages.create.empty_name": e.ValidationFailed,
    "pages.create.bad_parent": e.NotFound,
    "pages.create.all_bad": e.ValidationFailed,
    "pages.create.missing_name_key": e.ServerError,
    "pages.update.invalid_template": e.ValidationFailed,
    "pages.update.unknown": e.NotFound,
    "pages.read.after_delete": e.PendingDeletion,
    "pages.delete.again": e.PendingDeletion,
    "areas.update.old_block_id": e.NotFound,
    "areas.update.unknown_area": e.NotFound,
    "areas.update.unknown_page": e.NotFound,
    "areas.update.validation_failure": e.ValidationFailed,
    "areas.delete.same_block_again": e.NotFound,
    "areas.add.unknown_type": e.ValidationFailed,
    "blocks.read.unknown": e.NotFound,
    "blocks.read.cc_token": e.PermissionDenied,
    "blocks.delete.again": e.NotFound,
    "page_versions.delete.live": e.Conflict,
    "page_versions.read.deleted": e.NotFound,
    "page_versions.list.unknown_page": e.ServerError,
    "files.upload.folder_unknown": e.ValidationFailed,
    "files.upload.disallowed_extension": e.ValidationFailed,
    "files.upload.no_extension": e.ServerError,
    "files.read.unknown_uuid": e.NotFound,
    "files.delete.again": e.NotFound,
    "files.update.cc_token": e.ServerError,
    "users.create.duplicate_username": e.Conflict,
    "users.create.duplicate_email": e.Conflict,
    "users.create.short_password": e.ValidationFailed,
    "users.create.all_bad": e.ValidationFailed,
    "users.update.own_username": e.Conflict,
    "users.update.unknown": e.NotFound,
    "users.change_password.short": e.ValidationFailed,
    "users.delete.again": e.NotFound,
    "regular.add_block": e.PermissionDenied,
    "regular.delete_user_1": e.PermissionDenied,
    "groups.create.cc_token": e.PermissionDenied,
    "groups.read.unknown": e.NotFound,
    "generic.unknown_path": e.ApiDisabled,
    "generic.limit_101": e.ServerError,
    "token.wrong_secret.form": e.AuthenticationFailed,
    "token.unknown_client_id": e.AuthenticationFailed,
    "token.unknown_grant": e.AuthenticationFailed,
    "token.get_method": e.ApiDisabled,
}


@pytest.mark.skipif(not RECORDED, reason="conformance transcript not available")
@pytest.mark.parametrize("step", sorted(EXPECTED))
def test_recorded_error_means(step: str) -> None:
    method, path, response = RECORDED[step]
    error = error_for_response(response, method=method, path=path)
    assert type(error) is EXPECTED[step], (step, error)


@pytest.mark.skipif(not RECORDED, reason="conformance transcript not available")
@pytest.mark.parametrize("step", sorted(RECORDED))
def test_every_recorded_error_is_short_and_says_where(step: str) -> None:
    method, path, response = RECORDED[step]
    error = error_for_response(response, method=method, path=path)
    text = str(error)
    assert text.startswith(f"{method} {path} ({response.status_code}): ")
    assert len(error.reason) <= 600  # several messages of a list, each short
    assert "Stack trace" not in text
    assert "<token:" not in text


def test_error_list_keeps_every_message() -> None:
    _, _, response = RECORDED.get(
        "users.create.all_bad", ("", "", httpx.Response(401, json={"error": True, "errors": ["a", "b"]}))
    )
    error = error_for_response(response, method="POST", path="/users")
    assert len(error.messages) >= 2


@pytest.mark.parametrize(
    ("status", "text", "expected"),
    [
        (404, "Block not found", e.NotFound),
        (404, "User not found", e.NotFound),
        (404, "Version not found", e.NotFound),
        (401, "You do not have the proper permissions to access this resource", e.PermissionDenied),
        (401, "You do not have the proper permissions to delete this resource", e.PermissionDenied),
        (403, "Forbidden", e.PermissionDenied),
        (400, "Bad things", e.ValidationFailed),
        (409, "Conflict", e.Conflict),
        (401, "", e.AuthenticationFailed),
        (502, "Bad gateway", e.ServerError),
    ],
)
def test_documented_plain_text(status: int, text: str, expected: type[e.ApiError]) -> None:
    response = httpx.Response(status, text=text, headers={"content-type": "text/plain"})
    error = error_for_response(response, method="GET", path="/cms/api/1.0/blocks/1")
    assert type(error) is expected
    if text:
        assert text in str(error)


def test_html_pages() -> None:
    disabled = error_for_response(httpx.Response(404, html=HTML_404), method="GET", path="/ccm/api/1.0/x")
    assert isinstance(disabled, e.ApiDisabled)
    assert "Page Not Found" in disabled.reason
    assert "xxxxxxxx" not in disabled.reason
    crashed = error_for_response(httpx.Response(500, html=WHOOPS_500), method="GET", path="/ccm/api/1.0/account")
    assert isinstance(crashed, e.ServerError)
    assert crashed.temporary
    assert crashed.reason.startswith("RuntimeException: There is no user associated with request")
    assert len(crashed.reason) <= e.BODY_PREFIX


def test_unexpected_body_is_cut_and_secrets_masked() -> None:
    body = "access_token=abcdef123456 " + "y" * 1000
    error = error_for_response(httpx.Response(418, text=body), method="GET", path="/p")
    assert "abcdef123456" not in str(error)
    assert len(error.reason) <= e.BODY_PREFIX
    bearer = error_for_response(httpx.Response(500, text="Bearer eyJhbGciOi.x.y failed"), method="GET", path="/p")
    assert "eyJhbGciOi" not in str(bearer)


def test_redirect_says_where() -> None:
    response = httpx.Response(301, headers={"location": "https://cms.test/ccm/api/1.0/pages?secret=1"})
    error = error_for_response(response, method="GET", path="/ccm/api/1.0/pages")
    assert isinstance(error, e.UnexpectedResponse)
    assert "https://cms.test/ccm/api/1.0/pages" in error.reason
    assert "secret" not in error.reason


def test_rate_limit_and_temporary_flags() -> None:
    limited = error_for_response(httpx.Response(429, headers={"retry-after": "7"}), method="GET", path="/p")
    assert isinstance(limited, e.RateLimited)
    assert limited.retry_after == 7
    assert limited.temporary
    assert e.TransportError("x").temporary
    assert e.OutcomeUnknown("x").temporary
    assert not e.NotFound("x").temporary
    assert not e.ValidationFailed("x").temporary


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        ("3", 3.0),
        ("0", 0.0),
        ("-5", 0.0),
        ("1.5", 1.5),
        ("", None),
        (None, None),
        ("soon", None),
        ("nan", None),
        ("Wed, 21 Oct 2015 07:28:00 GMT", 10.0),
        ("Wed, 21 Oct 2015 07:27:00 GMT", 0.0),
    ],
)
def test_retry_after(value: str | None, expected: float | None) -> None:
    now = 1445412470.0  # 2015-10-21 07:27:50 UTC
    assert parse_retry_after(value, now=now) == expected


@pytest.mark.parametrize(
    ("response", "rejects"),
    [
        (httpx.Response(401, json={"error": "access_denied", "error_description": "denied", "hint": "revoked"}), True),
        (
            httpx.Response(401, json={"error": True, "errors": ["A password must be between 5 and 128 characters"]}),
            False,
        ),
        (httpx.Response(401, text="You do not have the proper permissions to update this resource"), False),
        (httpx.Response(401, text=""), True),
        (httpx.Response(403, json={"error": "access_denied"}), False),
    ],
)
def test_token_rejection(response: httpx.Response, rejects: bool) -> None:
    assert is_token_rejection(response) is rejects
