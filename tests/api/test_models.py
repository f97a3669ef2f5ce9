"""Every successful answer a real 9.3.1 site gave parses into its model; the documented shapes do too."""

from __future__ import annotations

import datetime as dt
import json
import re
from pathlib import Path
from typing import Any

import pytest
from pydantic import BaseModel

from cmssync.api.models import (
    Block,
    DeleteResult,
    File,
    Group,
    Page,
    PageVersion,
    Site,
    SystemInfo,
    TokenResponse,
    User,
    unwrap,
)

TRANSCRIPT = Path("/work/shared/conformance/concrete-9.3.1/transcript.jsonl")

ROUTES: list[tuple[str, str, type[BaseModel]]] = [
    ("GET", r"/account", User),
    ("GET", r"/system/info", SystemInfo),
    ("GET", r"/sites/?", Site),
    ("GET", r"/sites/(default|\d+)", Site),
    ("GET", r"/pages/?", Page),
    ("GET", r"/pages/\d+/children", Page),
    ("GET|POST|PUT", r"/pages/\d+", Page),
    ("POST", r"/pages", Page),
    ("POST|PUT", r"/pages/\d+/[^/]+(/\d+)?", Block),
    ("GET", r"/blocks/\d+", Block),
    ("GET", r"/page_versions/\d+", PageVersion),
    ("GET|PUT", r"/page_versions/\d+/\d+", PageVersion),
    ("GET", r"/files/?", File),
    ("GET|PUT|POST", r"/files(/[^/]+)?(/move)?", File),
    ("GET|PUT|POST", r"/users(/\d+)?(/change_password)?", User),
    ("GET|POST", r"/groups(/\d+)?", Group),
]


def _exchanges() -> list[tuple[str, str, Any]]:
    if not TRANSCRIPT.exists():
        return []
    found = []
    for line in TRANSCRIPT.read_text(encoding="utf-8").splitlines():
        entry = json.loads(line)
        request, response = entry["request"], entry["response"]
        if response["status"] == 200 and isinstance(response.get("body"), dict | list):
            found.append((f"{entry['seq']}:{entry['step']}", request["method"], (request["path"], response["body"])))
    return found


def _model_for(method: str, path: str, body: Any) -> type[BaseModel] | None:
    if path.startswith("/oauth/"):
        return TokenResponse
    if not path.startswith("/ccm/api/1.0") or path.startswith("/ccm/api/1.0//"):
        return None
    if method == "DELETE":
        return DeleteResult
    rest = path.removeprefix("/ccm/api/1.0")
    for methods, pattern, model in ROUTES:
        if re.fullmatch(methods, method) and re.fullmatch(pattern, rest):
            return model
    return None


@pytest.mark.skipif(not TRANSCRIPT.exists(), reason="conformance transcript not available")
@pytest.mark.parametrize(("step", "method", "exchange"), _exchanges(), ids=lambda v: v if isinstance(v, str) else "")
def test_real_answers_parse(step: str, method: str, exchange: tuple[str, Any]) -> None:
    path, body = exchange
    model = _model_for(method, path.replace("/index.php", ""), body)
    if model is None:
        pytest.skip(f"no model for {method} {path}")
    if isinstance(body, dict) and body.get("error") is True:
        pytest.skip("an ErrorList answered with 200 (block validation)")
    items = unwrap(body)
    for item in items if isinstance(items, list) else [items]:
        parsed = model.model_validate(item)
        assert parsed is not None


def test_page_with_every_include_enveloped_or_bare() -> None:
    block = {"id": 5, "type": "content", "value": {"content": "<p>x</p>"}}
    wrapped = {
        "id": 1,
        "path": None,
        "name": "Home",
        "date_added": "2026-11-21T12:20:16+00:00",
        "version": {"data": {"id": 2, "is_approved": 1, "date_created": "2026-11-21 12:20:16"}},
        "custom_attributes": {"data": [{"id": 3, "type": "boolean", "handle": "exclude_nav", "value": True}]},
        "areas": {"data": [{"name": "Main", "blocks": {"data": [block, {"id": 6, "type": "hr", "value": []}]}}]},
        "content": {"data": {"raw": "<p>", "content": "<p>"}},
    }
    bare = {
        "id": "1",
        "path": "",
        "name": "Home",
        "date_added": "2026-11-21",
        "version": {"id": "2", "is_approved": "1", "date_created": "2026-11-21"},
        "custom_attributes": [{"id": 3, "type": "boolean", "key": "exclude_nav", "value": "1"}],
        "areas": [{"name": "Main", "blocks": [block, {"id": "6", "type": "hr", "value": {}}]}],
        "content": {"raw": "<p>", "content": "<p>"},
    }
    for shape in (wrapped, bare, {"data": wrapped}):
        page = Page.model_validate(unwrap(shape))
        assert page.id == 1
        assert page.url_path == "/"
        assert page.version is not None
        assert page.version.id == 2
        assert page.version.is_approved is True
        assert page.custom_attributes[0].handle == "exclude_nav"
        main = page.area("Main")
        assert main is not None
        assert [b.id for b in main.blocks] == [5, 6]
        assert main.blocks[1].value == {}
        assert page.content is not None
        assert page.content.raw == "<p>"
        assert page.date_added is not None
        assert page.date_added.tzinfo is not None


@pytest.mark.parametrize(
    ("raw", "expected"),
    [(0, False), (1, True), ("0", False), ("1", True), (True, True), (False, False), (None, False), ("true", True)],
)
def test_is_approved_forms(raw: Any, expected: bool) -> None:
    assert PageVersion.model_validate({"id": 1, "is_approved": raw}).is_approved is expected


@pytest.mark.parametrize(
    ("raw", "expected"),
    [
        ("2026-11-21T12:20:16+00:00", dt.datetime(2026, 11, 21, 12, 20, 16, tzinfo=dt.UTC)),
        ("2026-11-21T14:20:16+02:00", dt.datetime(2026, 11, 21, 12, 20, 16, tzinfo=dt.UTC)),
        ("2026-11-21 12:20:16", dt.datetime(2026, 11, 21, 12, 20, 16, tzinfo=dt.UTC)),
        ("2026-11-21", dt.datetime(2026, 11, 21, tzinfo=dt.UTC)),
        ("2026-11-21T12:20:16Z", dt.datetime(2026, 11, 21, 12, 20, 16, tzinfo=dt.UTC)),
        (None, None),
        ("", None),
        ("0000-00-00 00:00:00", None),
    ],
)
def test_date_forms(raw: Any, expected: dt.datetime | None) -> None:
    assert PageVersion.model_validate({"id": 1, "date_created": raw}).date_created == expected


def test_file_size_exact_is_int_either_way_and_ids_are_strings() -> None:
    for exact in (39, "39", "1,234"):
        parsed = File.model_validate({"id": "b4d0", "size": {"description": "0.04 KB", "exact": exact}})
        assert isinstance(parsed.size.exact, int) if parsed.size else False
    assert File.model_validate({"id": 12}).id == "12"
    assert File.model_validate({"id": "x", "tags": "\na\nb c\n"}).tag_list == ["a", "b c"]


def test_user_documented_strings() -> None:
    user = User.model_validate(
        {
            "id": "7",
            "username": "u",
            "total_logins": "3",
            "has_avatar": "0",
            "last_login": 0,
            "date_added": "2026-01-02",
        }
    )
    assert (user.id, user.total_logins, user.has_avatar) == (7, 3, False)


def test_no_live_version_page() -> None:
    body = {
        "data": {
            "id": 268,
            "path": "/deny",
            "name": None,
            "template": False,
            "version": {"data": {"id": None, "is_approved": None, "date_created": None}},
        }
    }
    page = Page.model_validate(unwrap(body))
    assert page.name is None
    assert page.template is None
    assert page.version is not None
    assert page.version.id is None
    assert page.version.is_approved is False


def test_delete_result_shapes() -> None:
    assert DeleteResult.model_validate({"id": 155, "object": "blocks", "deleted": "1"}).id == "155"
    with_version = DeleteResult.model_validate(
        {"id": "155", "object": "blocks", "deleted": True, "version": {"id": 4, "is_approved": 0}}
    )
    assert with_version.version is not None
    assert with_version.version.is_approved is False
