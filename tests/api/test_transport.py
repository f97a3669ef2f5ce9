"""Retries, re-authentication, concurrency, counting and logging, against an in-process handler."""

from __future__ import annotations

import asyncio
import json
from typing import Any

import httpx
import pytest
import stamina.instrumentation
from structlog.testing import capture_logs

from cmssync.api import errors as e
from cmssync.api.auth import StaticToken
from cmssync.api.client import ConcreteClient
from cmssync.api.retry import RetryPolicy
from tests.support.api_clients import FAST, FakeTokenEndpoint, data, error_list, mock_client, oauth

USER = {"id": 2, "username": "u", "email": "u@example.com"}
GROUP = {"id": 4, "name": "G"}


class Script:
    """Answers requests from a list of responses (or exceptions), then repeats the last one."""

    def __init__(self, *answers: httpx.Response | Exception) -> None:
        self.answers = list(answers)
        self.requests: list[httpx.Request] = []

    def __call__(self, request: httpx.Request) -> httpx.Response:
        self.requests.append(request)
        answer = self.answers.pop(0) if len(self.answers) > 1 else self.answers[0]
        if isinstance(answer, Exception):
            raise answer
        return answer


@pytest.fixture
def waits() -> Any:
    """The waits stamina scheduled, as seconds."""
    seen: list[float] = []

    def hook(details: stamina.instrumentation.RetryDetails) -> None:
        seen.append(details.wait_for)

    old = stamina.instrumentation.get_on_retry_hooks()
    stamina.instrumentation.set_on_retry_hooks([hook])
    yield seen
    stamina.instrumentation.set_on_retry_hooks(old)


async def test_get_retries_503_then_succeeds() -> None:
    script = Script(httpx.Response(503), httpx.Response(503), data(GROUP))
    async with mock_client(script) as client:
        group = await client.get_group(4)
    assert group.name == "G"
    assert len(script.requests) == 3
    assert client.stats.retries == 2
    assert client.stats.count("GET", "/groups/{group_id}", 503) == 2


async def test_retry_after_is_honoured_and_capped(waits: list[float]) -> None:
    policy = RetryPolicy(
        attempts=4, timeout=10, wait_initial=0.001, wait_max=0.002, wait_jitter=0, retry_after_max=0.05
    )
    script = Script(
        httpx.Response(429, headers={"retry-after": "0.03"}),
        httpx.Response(429, headers={"retry-after": "3600"}),
        data(GROUP),
    )
    async with mock_client(script, retry=policy) as client:
        await client.get_group(4)
    assert waits == [0.03, 0.05]


async def test_retries_are_bounded() -> None:
    script = Script(httpx.Response(503))
    async with mock_client(script) as client:
        with pytest.raises(e.ServerError) as caught:
            await client.get_group(4)
    assert len(script.requests) == FAST.attempts
    assert caught.value.temporary


async def test_transport_errors_are_retried_for_reads() -> None:
    script = Script(httpx.ReadTimeout("slow"), httpx.RemoteProtocolError("dropped"), data(GROUP))
    async with mock_client(script) as client:
        assert (await client.get_group(4)).id == 4
    assert client.stats.count(status="error") == 2


async def test_transport_error_after_retries_is_temporary() -> None:
    script = Script(httpx.ConnectError("refused"))
    async with mock_client(script) as client:
        with pytest.raises(e.TransportError) as caught:
            await client.get_group(4)
    assert caught.value.temporary
    assert "cannot connect" in str(caught.value)


@pytest.mark.parametrize(
    "failure",
    [
        httpx.Response(503),
        httpx.Response(500, text="boom"),
        httpx.Response(429, headers={"retry-after": "0"}),  # a rate limiter after the application: maybe committed
        httpx.ReadTimeout("slow"),
        httpx.RemoteProtocolError("x"),
    ],
)
async def test_create_is_never_repeated_after_an_ambiguous_failure(failure: Any) -> None:
    script = Script(failure, data(GROUP))
    async with mock_client(script) as client:
        with pytest.raises(e.OutcomeUnknown) as caught:
            await client.create_group("G")
    assert len(script.requests) == 1
    assert "POST /ccm/api/1.0/groups" in str(caught.value)


@pytest.mark.parametrize("refusal", [httpx.ConnectError("refused"), httpx.ConnectTimeout("no answer to SYN")])
async def test_create_is_repeated_when_certainly_not_processed(refusal: Any) -> None:
    script = Script(refusal, data(GROUP))
    async with mock_client(script) as client:
        assert (await client.create_group("G")).id == 4
    assert len(script.requests) == 2


async def test_delete_not_found_after_ambiguous_attempt_has_succeeded() -> None:
    script = Script(httpx.ReadTimeout("slow"), error_list(404, "User not found"))
    async with mock_client(script) as client:
        result = await client.delete_user(7)
    assert result.deleted
    assert result.confirmed_by_retry
    assert result.id == "7"


async def test_delete_not_found_at_first_attempt_is_not_found() -> None:
    script = Script(error_list(404, "User not found"))
    async with mock_client(script) as client:
        with pytest.raises(e.NotFound):
            await client.delete_user(7)


async def test_idempotent_posts_are_retried() -> None:
    script = Script(httpx.Response(503), data({"id": "abc", "folder": 9}))
    async with mock_client(script) as client:
        moved = await client.move_file("abc", 9)
    assert moved.folder == 9
    assert len(script.requests) == 2
    assert script.requests[-1].headers["content-type"] == "application/x-www-form-urlencoded"
    assert script.requests[-1].content == b"folder=9"


async def test_change_password_is_form_encoded_and_never_logged() -> None:
    script = Script(data(USER))
    with capture_logs() as logs:
        async with mock_client(script) as client:
            await client.change_password(2, "n3w-Secret!")
    request = script.requests[0]
    assert request.headers["content-type"] == "application/x-www-form-urlencoded"
    assert dict(httpx.QueryParams(request.content.decode())) == {"password": "n3w-Secret!"}
    assert "n3w-Secret!" not in repr(logs)


async def test_reauthenticates_once_on_401() -> None:
    denied = httpx.Response(401, json={"error": "access_denied", "hint": "Access token has been revoked"})
    tokens = FakeTokenEndpoint()
    script = Script(denied, data(GROUP))
    async with mock_client(script, tokens=tokens) as client:
        await client.get_group(4)
    assert tokens.issued == 2
    assert [r.headers["authorization"] for r in script.requests] == ["Bearer tok-1", "Bearer tok-2"]
    assert client.stats.reauthentications == 1


async def test_second_401_fails_with_authentication_failed() -> None:
    denied = httpx.Response(401, json={"error": "access_denied", "hint": "Access token could not be verified"})
    tokens = FakeTokenEndpoint()
    script = Script(denied)
    async with mock_client(script, tokens=tokens) as client:
        with pytest.raises(e.AuthenticationFailed) as caught:
            await client.get_group(4)
    assert tokens.issued == 2
    assert len(script.requests) == 2
    assert "tok-" not in str(caught.value)


async def test_static_token_cannot_reauthenticate() -> None:
    script = Script(httpx.Response(401, json={"error": "access_denied"}))
    async with mock_client(script, auth=StaticToken("static-secret")) as client:
        with pytest.raises(e.AuthenticationFailed) as caught:
            await client.get_group(4)
    assert len(script.requests) == 1
    assert "static-secret" not in str(caught.value)


async def test_permission_401_is_not_an_auth_problem() -> None:
    tokens = FakeTokenEndpoint()
    script = Script(httpx.Response(401, text="You do not have the proper permissions to access this resource"))
    async with mock_client(script, tokens=tokens) as client:
        with pytest.raises(e.PermissionDenied):
            await client.get_group(4)
    assert tokens.issued == 1
    assert len(script.requests) == 1


async def test_one_token_fetch_for_concurrent_requests() -> None:
    tokens = FakeTokenEndpoint()

    async def slow_tokens(request: httpx.Request) -> httpx.Response:
        await asyncio.sleep(0.01)
        return tokens(request)

    async def api(request: httpx.Request) -> httpx.Response:
        await asyncio.sleep(0.001)
        return data(GROUP)

    async def route(request: httpx.Request) -> httpx.Response:
        return await (slow_tokens(request) if request.url.path.startswith("/oauth") else api(request))

    client = ConcreteClient("http://cms.test", auth=oauth(), retry=FAST, transport=httpx.MockTransport(route))
    async with client:
        await asyncio.gather(*(client.get_group(4) for _ in range(20)))
    assert tokens.issued == 1
    assert client.stats.token_requests == 1


async def test_token_renewed_before_expiry() -> None:
    now = [1000.0]
    tokens = FakeTokenEndpoint(expires_in=3600)
    auth = oauth(clock=lambda: now[0], leeway=60)
    script = Script(data(GROUP))
    async with mock_client(script, tokens=tokens, auth=auth) as client:
        await client.get_group(4)
        now[0] += 3500
        await client.get_group(4)
        now[0] += 100  # within the leeway of the first token's expiry
        await client.get_group(4)
    assert tokens.issued == 2
    assert [r.headers["authorization"] for r in script.requests] == ["Bearer tok-1", "Bearer tok-1", "Bearer tok-2"]


async def test_password_grant_form_and_scopes() -> None:
    tokens = FakeTokenEndpoint()
    async with mock_client(Script(data(GROUP)), tokens=tokens) as client:
        await client.get_group(4)
    form = tokens.forms[0]
    assert form["grant_type"] == "password"
    assert form["username"] == "admin"
    assert form["client_id"] == "cid"
    assert form["client_secret"] == "csecret"
    assert "pages:areas:update_block" in form["scope"].split()
    assert "openid" not in form["scope"].split()


async def test_concurrency_is_bounded() -> None:
    in_flight = 0
    peak = 0

    async def api(request: httpx.Request) -> httpx.Response:
        nonlocal in_flight, peak
        if request.url.path.startswith("/oauth"):
            return FakeTokenEndpoint()(request)
        in_flight += 1
        peak = max(peak, in_flight)
        await asyncio.sleep(0.005)
        in_flight -= 1
        return data(GROUP)

    client = ConcreteClient(
        "http://cms.test", auth=oauth(), retry=FAST, concurrency=3, transport=httpx.MockTransport(api)
    )
    async with client:
        await asyncio.gather(*(client.get_group(4) for _ in range(15)))
    assert peak == 3


async def test_requests_are_counted_and_logged_without_query_or_headers() -> None:
    script = Script(data([], status=200))
    with capture_logs() as logs:
        async with mock_client(script) as client:
            _ = [u async for u in client.iter_users(includes=("groups",))]
    lines = [entry for entry in logs if entry["event"] == "api.request" and entry["route"] == "/users"]
    assert lines
    assert lines[0]["path"] == "/ccm/api/1.0/users"
    assert lines[0]["status"] == 200
    assert lines[0]["log_level"] == "debug"
    assert "limit" not in json.dumps(lines, default=str)
    assert "Bearer" not in json.dumps(lines, default=str)
    assert client.stats.count("GET", "/users", 200) == 1
    assert client.stats.count("POST", "/oauth/2.0/token", 200) == 1
    assert client.stats.total == 2


@pytest.mark.parametrize(
    ("answer", "expected"),
    [
        (httpx.Response(200, content=b'{"data": {"id": 4, "na'), e.UnexpectedResponse),
        (httpx.Response(200, text="OK"), e.UnexpectedResponse),
        (httpx.Response(200, html="<html><title>Login</title></html>"), e.UnexpectedResponse),
        (httpx.Response(200, json={"data": {"id": "not a number", "name": "G"}}), e.UnexpectedResponse),
        (httpx.Response(200, json={"data": {"name": "no id"}}), e.UnexpectedResponse),
        (httpx.Response(200, json=["a", "list"]), e.UnexpectedResponse),
        (httpx.Response(302, headers={"location": "https://cms.test/login"}), e.UnexpectedResponse),
    ],
)
async def test_garbage_answers(answer: httpx.Response, expected: type[e.ApiError]) -> None:
    async with mock_client(Script(answer)) as client:
        with pytest.raises(expected) as caught:
            await client.get_group(4)
    assert len(str(caught.value)) < 400


async def test_block_validation_with_status_200_is_an_error() -> None:
    answer = httpx.Response(
        200, json={"error": True, "errors": ["You must select a file.", "You must enter the link text."]}
    )
    async with mock_client(Script(answer)) as client:
        with pytest.raises(e.ValidationFailed) as caught:
            await client.update_block(266, "Main", 161, value={"fID": ""})
    assert caught.value.messages == ["You must select a file.", "You must enter the link text."]
    assert caught.value.status == 200


async def test_path_segments_are_quoted() -> None:
    script = Script(data({"id": 9, "type": "content", "value": {"content": "x"}}))
    async with mock_client(script) as client:
        await client.add_block(266, "Sidebar Area/x", type="content", value={"content": "x"})
    assert script.requests[0].url.raw_path == b"/ccm/api/1.0/pages/266/Sidebar%20Area%2Fx"


async def test_token_failure_during_a_create_is_not_ambiguous() -> None:
    def tokens(request: httpx.Request) -> httpx.Response:
        return httpx.Response(500, html="<!DOCTYPE html><!--\n\n\nRuntimeException: boom")

    script = Script(data(GROUP))

    def route(request: httpx.Request) -> httpx.Response:
        return tokens(request) if request.url.path.startswith("/oauth") else script(request)

    client = ConcreteClient("http://cms.test", auth=oauth(), retry=FAST, transport=httpx.MockTransport(route))
    async with client:
        with pytest.raises(e.ServerError):
            await client.create_group("G")
    assert script.requests == []


async def test_a_retry_after_holds_back_every_call() -> None:
    import time

    policy = RetryPolicy(attempts=3, timeout=10, wait_initial=0.001, wait_max=0.002, wait_jitter=0, retry_after_max=0.2)
    seen: list[tuple[str, float]] = []
    limited = [True]

    async def api(request: httpx.Request) -> httpx.Response:
        if request.url.path.startswith("/oauth"):
            return FakeTokenEndpoint()(request)
        seen.append((request.url.path, time.monotonic()))
        if request.url.path.endswith("/4") and limited[0]:
            limited[0] = False
            return httpx.Response(429, headers={"retry-after": "0.2"})
        await asyncio.sleep(0)
        return data(GROUP)

    client = ConcreteClient("http://cms.test", auth=oauth(), retry=policy, transport=httpx.MockTransport(api))
    async with client:
        await client.get_group(4)  # refused once: the site asks for 0.2 s
        started = time.monotonic()
        await client.get_group(5)
    # The refused call waited, and so did nothing else; a call right after the pause is not held.
    assert time.monotonic() - started < 0.15
    refused_at = seen[0][1]
    assert seen[1][1] - refused_at >= 0.19


async def test_download_is_retried_from_the_start(tmp_path: Any) -> None:
    from cmssync.api.models import File

    answers = [httpx.Response(503), httpx.Response(200, content=b"complete body")]

    def api(request: httpx.Request) -> httpx.Response:
        return answers.pop(0)

    target = tmp_path / "f.bin"
    async with mock_client(api) as client:
        written = await client.download_file(File(id="u", url="http://cms.test/application/files/f.bin"), target)
    assert written == len(b"complete body")
    assert target.read_bytes() == b"complete body"
    assert client.stats.retries == 1
