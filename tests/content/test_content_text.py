from __future__ import annotations

import re

import pytest

from cmssync.content.text import EnvRef, FileIdRef, FileUrlRef, PageIdRef, Reference, Text, parse_env_reference


def resolve(reference: Reference) -> str:
    if isinstance(reference, FileUrlRef):
        return f"https://cdn.example/{reference.path}"
    if isinstance(reference, FileIdRef):
        return "42"
    return "7"


def test_parts_and_render() -> None:
    text = Text('<img src="${file:images/logo.png}"> #${file-id:a b.pdf} ${page-id:/about} $${x}')
    assert text.parts == (
        '<img src="',
        FileUrlRef("images/logo.png"),
        '"> #',
        FileIdRef("a b.pdf"),
        " ",
        PageIdRef("/about"),
        " ${x}",
    )
    assert text.references == (FileUrlRef("images/logo.png"), FileIdRef("a b.pdf"), PageIdRef("/about"))
    assert text.render(resolve) == '<img src="https://cdn.example/images/logo.png"> #42 7 ${x}'
    assert text.plain is None


def test_source_is_kept_and_compared() -> None:
    text = Text("cost: $${price} and $5")
    assert text.source == str(text) == "cost: $${price} and $5"
    assert text.plain == "cost: ${price} and $5"
    assert text == Text("cost: $${price} and $5")
    assert text != Text("cost: ${page-id:/} and $5")
    assert len({text, Text("cost: $${price} and $5")}) == 1
    assert text != "cost: $${price} and $5"


def test_of_escapes_literal_parts() -> None:
    text = Text.of("a ${b} ", FileUrlRef("x.png"))
    assert text.source == "a $${b} ${file:x.png}"
    assert Text.of(*text.parts) == text


def test_texts_are_immutable() -> None:
    text = Text("x")
    with pytest.raises(AttributeError):
        text.source = "y"  # type: ignore[misc]


@pytest.mark.parametrize(
    ("source", "message"),
    [
        ("${file:../x}", "must stay inside files/"),
        ("${file:/etc/passwd}", "must be a relative path under files/"),
        ("${file:a\\b}", "must be a relative path under files/"),
        ("${file:a//b}", "must stay inside files/"),
        ("${file:}", "empty file reference"),
        ("${page-id:about}", "invalid page path 'about'"),
        ("${page-id:/About}", "invalid page handle 'About'"),
        ("${env:HOME}", "allowed only in cmssync.yaml and user passwords"),
        ("${user:x}", "unknown reference kind 'user'"),
        ("${file:x", "malformed reference"),
        ("${}", "malformed reference"),
        ("`${name}`", "malformed reference"),
    ],
)
def test_malformed_references(source: str, message: str) -> None:
    with pytest.raises(ValueError, match=re.escape(message)):
        Text(source)


def test_env_reference() -> None:
    assert parse_env_reference("${env:EDITOR_PASSWORD}") == EnvRef("EDITOR_PASSWORD")
    assert str(EnvRef("X")) == "${env:X}"
    for literal in ("hunter2", "${env:1BAD}", "x${env:A}", "${file:a}"):
        with pytest.raises(ValueError, match=r"password|environment variable name"):
            parse_env_reference(literal)
