"""What each endpoint method sends, and how it turns odd answers into the truth."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import httpx
import pytest

from cmssync.api import errors as e
from tests.support.api_clients import data, mock_client

USER = {"id": 2, "username": "old", "email": "old@example.com"}


class Recorder:
    def __init__(self, answer: Any) -> None:
        self.answer = answer
        self.requests: list[httpx.Request] = []

    def __call__(self, request: httpx.Request) -> httpx.Response:
        self.requests.append(request)
        answer = self.answer(request) if callable(self.answer) else self.answer
        return answer if isinstance(answer, httpx.Response) else data(answer)

    def json(self, index: int = -1) -> Any:
        return json.loads(self.requests[index].content)


async def test_update_user_reads_the_user_again() -> None:
    def answer(request: httpx.Request) -> Any:
        if request.method == "PUT":
            return USER  # as it was before, like a real server
        return {**USER, "email": "new@example.com"}

    recorder = Recorder(answer)
    async with mock_client(recorder) as client:
        user = await client.update_user(2, email="new@example.com")
    assert user.email == "new@example.com"
    assert [r.method for r in recorder.requests] == ["PUT", "GET"]
    assert recorder.json(0) == {"email": "new@example.com"}


async def test_deny_reads_the_version_again() -> None:
    def answer(request: httpx.Request) -> Any:
        return {"id": 1, "is_approved": 1 if request.method == "PUT" else 0}

    recorder = Recorder(answer)
    async with mock_client(recorder) as client:
        version = await client.deny_version(5, 1)
    assert version.is_approved is False
    assert recorder.json(0) == {"is_approved": False}


async def test_publish_end_date_format() -> None:
    import datetime as dt

    recorder = Recorder({"id": 3, "is_approved": 1, "publish_end_date": "2027-01-31 00:00:00"})
    async with mock_client(recorder) as client:
        version = await client.update_page_version(5, 3, approved=True, publish_end_date=dt.date(2027, 1, 31))
        await client.update_page_version(
            5, 3, publish_end_date=dt.datetime(2027, 1, 31, 14, 0, tzinfo=dt.timezone(dt.timedelta(hours=2)))
        )
    assert recorder.json(0) == {"is_approved": True, "publish_end_date": "2027-01-31 00:00:00"}
    assert recorder.json(1) == {"publish_end_date": "2027-01-31 12:00:00"}
    assert version.publish_end_date is not None


async def test_documented_block_update_answer_is_followed_by_a_read() -> None:
    def answer(request: httpx.Request) -> Any:
        if request.method == "PUT":
            return httpx.Response(200, json={"id": "160", "object": "blocks", "deleted": False, "version": {"id": 2}})
        return httpx.Response(200, json={"id": 160, "type": "content", "value": {"content": "<p>new</p>"}})

    recorder = Recorder(answer)
    async with mock_client(recorder, prefix="/cms/api/1.0") as client:
        block = await client.update_block(266, "Main", 154, value={"content": "<p>new</p>"})
    assert (block.id, block.value) == (160, {"content": "<p>new</p>"})
    assert recorder.requests[1].url.path == "/cms/api/1.0/blocks/160"


async def test_real_block_update_returns_the_new_id() -> None:
    recorder = Recorder({"id": 160, "type": "content", "value": {"content": "x"}, "page": {"data": {"id": 266}}})
    async with mock_client(recorder) as client:
        block = await client.update_block(266, "Main", 154, value={"content": "x"})
    assert block.id == 160
    assert block.page is not None
    assert block.page.id == 266
    assert recorder.json() == {"value": {"content": "x"}}


async def test_page_requests() -> None:
    recorder = Recorder({"id": 9, "path": "/a", "name": "A"})
    async with mock_client(recorder) as client:
        await client.get_page(9, includes=("areas", "custom_attributes"), version="recent")
        await client.create_page(parent_id=1, name="A", attributes={"exclude_nav": True})
        await client.update_page(9, description="d")
    first = recorder.requests[0].url.params
    assert first["includes"] == "areas,custom_attributes"
    assert first["version"] == "recent"
    assert recorder.json(1) == {
        "parent": 1,
        "name": "A",
        "type": "page",
        "template": "full",
        "attributes": {"exclude_nav": True},
    }
    assert recorder.json(2) == {"description": "d"}


async def test_create_user_body_and_update_file_tags() -> None:
    recorder = Recorder({"id": "abc", "title": "t"})
    async with mock_client(recorder) as client:
        await client.update_file("abc", tags=["a", "b"], title="t")
    assert recorder.json() == {"title": "t", "tags": "a\nb"}


async def test_upload_is_multipart_with_folder(tmp_path: Path) -> None:
    source = tmp_path / "logo.png"
    source.write_bytes(b"\x89PNG....")
    recorder = Recorder({"id": "u-1", "title": "logo.png", "size": {"exact": 8}})
    async with mock_client(recorder) as client:
        uploaded = await client.upload_file(source, folder_id=12)
    request = recorder.requests[0]
    assert request.headers["content-type"].startswith("multipart/form-data; boundary=")
    body = request.content
    assert b'name="folder"\r\n\r\n12' in body
    assert b'name="file"; filename="logo.png"' in body
    assert b"Content-Type: image/png" in body
    assert uploaded.size is not None
    assert uploaded.size.exact == 8


async def test_upload_is_not_retried_after_a_drop(tmp_path: Path) -> None:
    source = tmp_path / "a.txt"
    source.write_text("x")
    calls = []

    def drop(request: httpx.Request) -> httpx.Response:
        calls.append(request)
        raise httpx.RemoteProtocolError("Server disconnected without sending a response.")

    async with mock_client(drop) as client:
        with pytest.raises(e.OutcomeUnknown):
            await client.upload_file(source)
    assert len(calls) == 1


async def test_upload_reopens_the_file_when_repeated(tmp_path: Path) -> None:
    source = tmp_path / "a.txt"
    source.write_text("hello")
    bodies: list[bytes] = []

    def unreachable_then_ok(request: httpx.Request) -> httpx.Response:
        bodies.append(request.content)
        if len(bodies) == 1:  # certainly not processed: the only failure a create is resent on without a lookup
            raise httpx.ConnectError("connection refused", request=request)
        return data({"id": "u"})

    async with mock_client(unreachable_then_ok) as client:
        await client.upload_file(source)
    assert len(bodies) == 2
    assert b"hello" in bodies[1]


async def test_download_streams_to_a_path(tmp_path: Path) -> None:
    payload = bytes(range(256)) * 1000

    def api(request: httpx.Request) -> httpx.Response:
        if request.url.path.startswith("/application/files/"):
            assert "authorization" not in request.headers
            return httpx.Response(200, content=payload)
        return data({"id": "u-1", "url": "http://cms.test/application/files/1/2/3/a.bin"})

    target = tmp_path / "out" / "a.bin"
    async with mock_client(api) as client:
        written = await client.download_file("u-1", target)
    assert written == len(payload)
    assert target.read_bytes() == payload
    assert [p.name for p in target.parent.iterdir()] == ["a.bin"]


async def test_download_failure_leaves_nothing(tmp_path: Path) -> None:
    def api(request: httpx.Request) -> httpx.Response:
        return httpx.Response(404, html="<html><title>Not Found</title></html>")

    from cmssync.api.models import File

    async with mock_client(api) as client:
        with pytest.raises(e.ApiError):
            await client.download_file(File(id="u", url="http://cms.test/application/files/x"), tmp_path / "x")
    assert not any(True for _ in os.scandir(tmp_path))


async def test_sites_system_account() -> None:
    def api(request: httpx.Request) -> Any:
        path = request.url.path
        if path.endswith("/sites"):
            return data([{"id": 1, "name": "S"}])
        if path.endswith("/sites/default") or path.endswith("/sites/1"):
            return data({"id": 1, "name": "S", "locales": {"data": [{"id": 1, "country": "US", "language": "en"}]}})
        if path.endswith("/system/info"):
            return data({"version": "9.3.1"})
        return data({"id": 1, "username": "admin"})

    async with mock_client(api) as client:
        assert (await client.list_sites())[0].name == "S"
        assert (await client.default_site()).locales[0].code == "en_US"
        assert (await client.get_site(1)).id == 1
        assert (await client.system_info()).version == "9.3.1"
        assert (await client.account()).username == "admin"
