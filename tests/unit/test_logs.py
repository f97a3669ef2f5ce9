"""Redaction of free text in log lines: credentials masked, the prose around them kept."""

from __future__ import annotations

import pytest

from cmssync.logs import REDACTED, redact_text


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        # A sentence that goes on after "token:" keeps its words (the word after the colon was swallowed).
        ("refresh token: the site rejected it", "refresh token: the site rejected it"),
        ("invalid token: Expired.", "invalid token: Expired."),
        ("password: required for the password grant", "password: required for the password grant"),
        # Credentials are masked in every written form.
        ("token: abc123def456ghi", f"token: {REDACTED}"),
        ("password: hunter2", f"password: {REDACTED}"),
        ("secret: AbCdEf", f"secret: {REDACTED}"),
        ("password: averyveryverylongpassphraseword", f"password: {REDACTED}"),
        ("token:abcdef", f"token:{REDACTED}"),
        ("token=abc&x=1", f"token={REDACTED}&x=1"),
        ('{"access_token": "xyz", "n": 1}', f'{{"access_token": "{REDACTED}", "n": 1}}'),
        ("Authorization: Bearer abc.def-ghi", f"Authorization: Bearer {REDACTED}"),
        ("client_secret=s3cr3t the rest", f"client_secret={REDACTED} the rest"),
    ],
)
def test_redaction_masks_credentials_and_keeps_prose(text: str, expected: str) -> None:
    assert redact_text(text) == expected
