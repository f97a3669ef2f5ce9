"""Bad input gets the real server's kind of answer and never takes the sandbox down (bounded hypothesis fuzzing)."""

from __future__ import annotations

import json
import logging
from collections.abc import Iterator
from typing import Any

import httpx
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from cmssync.emulator.embedded import Sandbox
from tests.emulator.helpers import client, token

JSON = st.recursive(
    st.none()
    | st.booleans()
    | st.integers(-(2**70), 2**70)
    | st.floats(allow_nan=False, allow_infinity=False)
    | st.text(max_size=20),
    lambda children: st.lists(children, max_size=4) | st.dictionaries(st.text(max_size=10), children, max_size=4),
    max_leaves=12,
)
FIELDS = st.sampled_from(
    [
        "parent",
        "name",
        "type",
        "template",
        "value",
        "username",
        "email",
        "password",
        "title",
        "attributes",
        "is_approved",
        "publish_end_date",
        "description",
        "tags",
        "language",
    ]
)
OBJECTS = st.dictionaries(FIELDS, JSON, max_size=6)
SEGMENTS = st.one_of(
    st.integers(-5, 10**20).map(str),
    st.text(alphabet="abc%-._~0123456789", min_size=1, max_size=12),
    st.sampled_from(["1", "2", "0", "999999", "00000000-0000-0000-0000-000000000000"]),
)
ENDPOINTS = [
    ("POST", "/pages"),
    ("PUT", "/pages/{id}"),
    ("POST", "/pages/{id}/Main"),
    ("PUT", "/pages/2/Main/{id}"),
    ("DELETE", "/pages/2/Main/{id}"),
    ("PUT", "/page_versions/2/{id}"),
    ("POST", "/users"),
    ("PUT", "/users/{id}"),
    ("POST", "/groups"),
    ("PUT", "/files/{id}"),
    ("GET", "/pages/{id}"),
    ("GET", "/files/{id}"),
    ("GET", "/pages/{id}/children"),
    ("DELETE", "/blocks/{id}"),
    ("GET", "/sites/{id}"),
]
ANSWERS = {200, 400, 401, 403, 404, 500}


class _Errors(logging.Handler):
    def __init__(self) -> None:
        super().__init__(logging.ERROR)
        self.records: list[logging.LogRecord] = []

    def emit(self, record: logging.LogRecord) -> None:
        self.records.append(record)


@pytest.fixture(scope="module")
def fuzzed() -> Iterator[tuple[Sandbox, httpx.Client, _Errors]]:
    errors = _Errors()
    logger = logging.getLogger("cmssync.emulator")
    logger.addHandler(errors)
    try:
        with Sandbox() as sandbox, client(sandbox, token(sandbox)) as api:
            yield sandbox, api, errors
    finally:
        logger.removeHandler(errors)


def _check(api: httpx.Client, errors: _Errors, response: httpx.Response) -> None:
    assert response.status_code in ANSWERS
    assert not errors.records, errors.records[0].getMessage()  # an emulator bug shows up as a logged exception
    assert api.get("/system/info").status_code == 200


@settings(max_examples=80, suppress_health_check=[HealthCheck.function_scoped_fixture], deadline=None)
@given(endpoint=st.sampled_from(ENDPOINTS), segment=SEGMENTS, body=st.one_of(OBJECTS, JSON))
def test_json_bodies_and_ids(
    fuzzed: tuple[Sandbox, httpx.Client, _Errors], endpoint: tuple[str, str], segment: str, body: Any
) -> None:
    _, api, errors = fuzzed
    method, template = endpoint
    response = api.request(
        method,
        template.replace("{id}", segment),
        content=json.dumps(body),
        headers={"content-type": "application/json"},
    )
    _check(api, errors, response)


@settings(max_examples=60, suppress_health_check=[HealthCheck.function_scoped_fixture], deadline=None)
@given(
    endpoint=st.sampled_from([("POST", "/pages"), ("PUT", "/pages/2"), ("POST", "/users"), ("PUT", "/users/3")]),
    body=st.fixed_dictionaries(
        {},
        optional=dict.fromkeys(
            ("parent", "name", "type", "template", "attributes", "username", "email", "password", "language"), JSON
        ),
    ),
)
def test_page_and_user_fields(
    fuzzed: tuple[Sandbox, httpx.Client, _Errors], endpoint: tuple[str, str], body: dict[str, Any]
) -> None:
    _, api, errors = fuzzed
    response = api.request(endpoint[0], endpoint[1], json=body)
    _check(api, errors, response)


@settings(max_examples=40, suppress_health_check=[HealthCheck.function_scoped_fixture], deadline=None)
@given(
    endpoint=st.sampled_from(ENDPOINTS),
    raw=st.binary(max_size=200),
    content_type=st.sampled_from(
        [
            "application/json",
            "application/x-www-form-urlencoded",
            "multipart/form-data",
            "multipart/form-data; boundary=xyz",
            "text/plain",
        ]
    ),
)
def test_raw_bodies(
    fuzzed: tuple[Sandbox, httpx.Client, _Errors], endpoint: tuple[str, str], raw: bytes, content_type: str
) -> None:
    _, api, errors = fuzzed
    method, template = endpoint
    response = api.request(method, template.replace("{id}", "2"), content=raw, headers={"content-type": content_type})
    _check(api, errors, response)


@settings(max_examples=30, suppress_health_check=[HealthCheck.function_scoped_fixture], deadline=None)
@given(
    form=st.dictionaries(
        st.sampled_from(
            ["grant_type", "client_id", "client_secret", "username", "password", "scope", "refresh_token", "code"]
        ),
        st.text(max_size=30),
        max_size=6,
    )
)
def test_token_endpoint_forms(fuzzed: tuple[Sandbox, httpx.Client, _Errors], form: dict[str, str]) -> None:
    sandbox, api, errors = fuzzed
    response = api.post(sandbox.token_url, data=form)
    assert response.status_code in {200, 400, 401, 500}
    _check(api, errors, response)


def test_huge_bodies(fuzzed: tuple[Sandbox, httpx.Client, _Errors]) -> None:
    _, api, errors = fuzzed
    huge = b'{"name": "' + b"x" * (25 * 1024 * 1024) + b'"}'
    response = api.post("/pages", content=huge, headers={"content-type": "application/json"})
    assert response.status_code == 500  # over post_max_size the body is empty to PHP
    upload = api.post("/files", files={"file": ("big.txt", b"y" * (25 * 1024 * 1024))})
    assert upload.status_code == 400
    assert upload.json()["errors"] == ["Invalid file."]
    _check(api, errors, response)
