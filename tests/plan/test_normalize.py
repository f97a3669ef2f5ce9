"""Normalisation: examples from the real server, and properties (idempotence, server round trips)."""

from __future__ import annotations

from datetime import UTC, date, datetime, timedelta, timezone
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from cmssync.plan.normalize import (
    block_field,
    canonical_json,
    digest,
    normalize_attribute,
    normalize_block_value,
    normalize_date,
    normalize_html,
    normalize_tags,
    rewrite_site_links,
)

SITE = "http://127.0.0.1:8090"


# --- block values ---------------------------------------------------------------------------------------------


def test_content_block_matches_what_the_recorded_server_returned() -> None:
    sent = {"content": '<p>Hello from the API. <a href="http://127.0.0.1:8090/about">About</a></p>\n'}
    returned = {"content": '<p>Hello from the API. <a href="{CCM:BASE_URL}/about">About</a></p>'}
    assert normalize_block_value("content", sent, base_url=SITE) == normalize_block_value(
        "content", returned, base_url=SITE
    )


def test_every_field_becomes_a_string() -> None:
    value = {"useCustomTitle": True, "maxWidth": 0, "ratio": 1.5, "whole": 2.0, "fID": None, "titleText": "T"}
    assert normalize_block_value("page_title", value, base_url=SITE) == {
        "useCustomTitle": "1",
        "maxWidth": "0",
        "ratio": "1.5",
        "whole": "2",
        "fID": "",
        "titleText": "T",
    }


@pytest.mark.parametrize("empty", [[], None, {}])
def test_blocks_without_a_table_have_an_empty_value(empty: Any) -> None:
    assert normalize_block_value("horizontal_rule", empty, base_url=SITE) == {}


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ('<a href="https://127.0.0.1:8090/x">', '<a href="{CCM:BASE_URL}/x">'),
        ('<a href="HTTP://127.0.0.1:8090">', '<a href="{CCM:BASE_URL}">'),
        ("see http://127.0.0.1:8090?a=1", "see {CCM:BASE_URL}?a=1"),
        # Like the server's LinkAbstractor: no boundary after the URL (lossless: rendering expands it back).
        ('<a href="http://127.0.0.1:80901/x">', '<a href="{CCM:BASE_URL}1/x">'),
        ("http://127.0.0.1:8090http://127.0.0.1:8090", "{CCM:BASE_URL}{CCM:BASE_URL}"),
        ('<a href="http://other.example/x">', '<a href="http://other.example/x">'),
    ],
)
def test_site_links(text: str, expected: str) -> None:
    assert rewrite_site_links(text, SITE) == expected


def test_site_in_a_subdirectory() -> None:
    base = "https://example.com/cms/"
    assert rewrite_site_links("https://example.com/cms/about", base) == "{CCM:BASE_URL}/about"
    assert rewrite_site_links("https://example.com/about", base) == "https://example.com/about"


def test_a_base_url_without_host_rewrites_nothing() -> None:
    assert rewrite_site_links("http://x/y", "") == "http://x/y"


def test_html_trailing_whitespace() -> None:
    assert normalize_html("<p>a</p>  \r\n\t<p>b</p>\t\n\n") == "<p>a</p>\n\t<p>b</p>"
    assert normalize_html('<a href="http://127.0.0.1:8090/">', base_url=SITE) == '<a href="{CCM:BASE_URL}/">'


# --- tags, dates, attributes ----------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("tags", "expected"),
    [
        ("\nred\nblue\n", ["red", "blue"]),
        ("", []),
        (None, []),
        ("red, blue,red", ["red", "blue"]),
        ([" red ", "", "blue"], ["red", "blue"]),
        (["b", "a"], ["b", "a"]),
    ],
)
def test_tags(tags: Any, expected: list[str]) -> None:
    assert normalize_tags(tags) == expected


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        ("2024-05-01T10:11:12+00:00", "2024-05-01 10:11:12"),
        ("2024-05-01T12:11:12+02:00", "2024-05-01 10:11:12"),
        ("2024-05-01T10:11:12Z", "2024-05-01 10:11:12"),
        ("2024-05-01 10:11:12", "2024-05-01 10:11:12"),
        ("2024-05-01", "2024-05-01 00:00:00"),
        (date(2024, 5, 1), "2024-05-01 00:00:00"),
        (datetime(2024, 5, 1, 10, 11, 12, 999, tzinfo=UTC), "2024-05-01 10:11:12"),
        (None, None),
        ("", None),
        ("0000-00-00 00:00:00", None),
        (" not a date ", "not a date"),
    ],
)
def test_dates(value: Any, expected: str | None) -> None:
    assert normalize_date(value) == expected


@pytest.mark.parametrize(
    ("value", "attribute_type", "expected"),
    [
        (True, None, True),
        (False, None, ""),  # an absent attribute (false or empty: the server leaves it out) equals false
        (None, None, ""),
        ("", None, ""),
        (False, "boolean", False),
        (None, "boolean", False),
        ("1", "boolean", True),
        ("true", "boolean", True),
        (1, "boolean", True),
        ("0", "boolean", False),
        ("", "boolean", False),
        ("yes", "boolean", False),  # the recorded server did not take "yes"
        (2, "boolean", False),
        (7, "number", 7),
        ("7", "number", 7),
        (7.0, "number", 7),
        ("7.5", "number", 7.5),
        ({"data": []}, "select", []),
        ({"data": [{"id": 3, "value": "Red"}, {"id": 1, "value": "Blue"}]}, "select", ["1", "3"]),
        ([3, 1], "select", ["1", "3"]),
        ({"data": [{"id": 3, "value": "Red"}]}, None, ["3"]),
        ({"data": [{"value": "Red"}]}, "select", ["Red"]),
        ("Red", "select", ["Red"]),
        ({"data": {"id": "9f0c-uuid", "title": "logo"}}, "image_file", "9f0c-uuid"),
        ("Recorder meta title  \n", "text", "Recorder meta title"),
        (None, "text", ""),
        ({"city": "Oslo ", "postal_code": None}, "address", {"city": "Oslo", "postal_code": ""}),
        ([1.0, "a "], None, [1, "a"]),
    ],
)
def test_attributes(value: Any, attribute_type: str | None, expected: Any) -> None:
    assert normalize_attribute(value, attribute_type=attribute_type) == expected


# --- digest ---------------------------------------------------------------------------------------------------


def test_digest_is_canonical() -> None:
    assert digest({"b": 1, "a": [1, 2]}) == digest({"a": [1, 2], "b": 1})
    assert digest({"a": 1}) != digest({"a": "1"})
    assert digest({"a": 1}).startswith("sha256:")
    assert len(digest(None)) == len("sha256:") + 64
    assert canonical_json({"é": date(2024, 5, 1), "s": {2, 1}}) == '{"s":[1,2],"é":"2024-05-01"}'


def test_digest_refuses_unknown_objects() -> None:
    with pytest.raises(TypeError, match="cannot digest"):
        digest(object())


# --- properties -----------------------------------------------------------------------------------------------

HOSTS = ["127.0.0.1:8090", "www.example.com", "example.com/cms"]
text_pieces = st.one_of(
    st.text(alphabet=st.characters(codec="utf-8", exclude_categories=["Cs"]), max_size=12),
    st.sampled_from(
        [
            "http://",
            "https://",
            "{CCM:BASE_URL}",
            "/about",
            '"',
            " ",
            "\t",
            "\n",
            "\r\n",
            "<a href=",
            ".evil",
            *HOSTS,
            *(f"http://{h}" for h in HOSTS),
        ]
    ),
)
texts = st.lists(text_pieces, max_size=10).map("".join)
scalars = st.one_of(st.none(), st.booleans(), st.integers(-1000, 10**6), texts)
block_values = st.dictionaries(st.sampled_from(["content", "fID", "altText", "maxWidth", "lazyLoad"]), scalars)
bases = st.sampled_from(["http://127.0.0.1:8090", "https://www.example.com/", "https://example.com/cms"])


@st.composite
def site_links(draw: st.DrawFn) -> tuple[str, str, str]:
    """(base URL, text with absolute site links, the same text as the server stores it)."""
    host = draw(st.sampled_from(HOSTS))
    base = f"{draw(st.sampled_from(['http', 'https']))}://{host}"
    pieces = draw(
        st.lists(st.one_of(st.sampled_from(["/about", "?q=1", '">', "<p>x</p>", " "]), st.just("LINK")), max_size=6)
    )
    sent = "".join(f"{draw(st.sampled_from(['http', 'https']))}://{host}" if p == "LINK" else p for p in pieces)
    stored = "".join("{CCM:BASE_URL}" if p == "LINK" else p for p in pieces)
    return base, sent, stored


def server_stringify(value: Any) -> str:
    if value is None:
        return ""
    if isinstance(value, bool):
        return "1" if value else "0"
    return str(value)


@settings(deadline=None)
@given(st.text(max_size=10), block_values, bases)
def test_block_normalisation_is_idempotent(block_type: str, value: dict[str, Any], base: str) -> None:
    once = normalize_block_value(block_type, value, base_url=base)
    assert normalize_block_value(block_type, once, base_url=base) == once


@settings(deadline=None)
@given(block_values, bases, st.sampled_from(["", " ", "\n", " \t\n", "\r\n"]))
def test_server_stringified_values_normalise_alike(value: dict[str, Any], base: str, trailing: str) -> None:
    from_server = {k: server_stringify(v) + (trailing if isinstance(v, str) else "") for k, v in value.items()}
    assert normalize_block_value("x", from_server, base_url=base) == normalize_block_value("x", value, base_url=base)


@settings(deadline=None)
@given(site_links())
def test_server_link_rewriting_normalises_alike(case: tuple[str, str, str]) -> None:
    base, sent, stored = case
    assert normalize_block_value("content", {"content": sent}, base_url=base) == normalize_block_value(
        "content", {"content": stored}, base_url=base
    )


@settings(deadline=None)
@given(texts)
def test_html_normalisation_is_idempotent(text: str) -> None:
    once = normalize_html(text, base_url=SITE)
    assert normalize_html(once, base_url=SITE) == once


@settings(deadline=None)
@given(st.lists(st.text(alphabet=st.characters(codec="utf-8", exclude_categories=["Cs"]), max_size=8), max_size=6))
def test_tags_in_stored_form_normalise_alike(tags: list[str]) -> None:
    once = normalize_tags(tags)
    assert normalize_tags(once) == once
    stored = "\n" + "\n".join(once) + "\n" if once else ""
    assert normalize_tags(stored) == once
    assert normalize_tags(",".join(tags)) == once


@settings(deadline=None)
@given(
    st.datetimes(min_value=datetime(1971, 1, 1), max_value=datetime(2100, 1, 1)),
    st.integers(-12 * 60, 14 * 60),
)
def test_date_forms_normalise_alike(moment: datetime, offset_minutes: int) -> None:
    moment = moment.replace(microsecond=0)
    zone = timezone(timedelta(minutes=offset_minutes))
    atom = moment.replace(tzinfo=UTC).astimezone(zone).isoformat()
    db = moment.strftime("%Y-%m-%d %H:%M:%S")
    assert normalize_date(atom) == normalize_date(db) == db
    assert normalize_date(normalize_date(atom)) == db
    assert normalize_date(moment.date()) == normalize_date(moment.date().isoformat())


json_values = st.recursive(
    st.one_of(st.none(), st.booleans(), st.integers(), st.floats(allow_nan=False, allow_infinity=False), texts),
    lambda inner: st.one_of(st.lists(inner, max_size=4), st.dictionaries(st.text(max_size=5), inner, max_size=4)),
    max_leaves=12,
)


@settings(deadline=None)
@given(json_values, st.sampled_from([None, "boolean", "number", "select", "text", "image_file"]))
def test_attribute_normalisation_is_idempotent(value: Any, attribute_type: str | None) -> None:
    once = normalize_attribute(value, attribute_type=attribute_type)
    assert normalize_attribute(once, attribute_type=attribute_type) == once


@settings(deadline=None)
@given(st.one_of(st.booleans(), st.integers(-1000, 1000)))
def test_attribute_server_forms_normalise_alike(value: bool | int) -> None:
    kind = "boolean" if isinstance(value, bool) else "number"
    assert normalize_attribute(block_field(value), attribute_type=kind) == normalize_attribute(
        value, attribute_type=kind
    )
