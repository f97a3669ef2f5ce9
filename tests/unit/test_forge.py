"""The pull/merge request client (``cmssync.gitrepo.forge``) against a local fake of GitHub's, GitLab's and Gitea's
REST APIs (Starlette on loopback, served by uvicorn): one request per branch, opened once and updated after, each
forge's own paths, fields and authentication; a refusal says the status and the forge's message, never the token."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

import pytest
from pydantic import SecretStr
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse
from starlette.routing import Route

from cmssync.config import ForgeSettings
from cmssync.gitrepo.forge import ForgeError, open_pull_request
from tests.support.server import ThreadedServer

TOKEN = "forge-token-123456"
AUTH = {"github": ("authorization", f"Bearer {TOKEN}"), "gitea": ("authorization", f"token {TOKEN}"),
        "gitlab": ("private-token", TOKEN)}  # fmt: skip


@dataclass
class FakeForge:
    """What the fake forge holds: its pull requests and the requests it answered (method, path, query)."""

    type: str
    pulls: list[dict[str, Any]] = field(default_factory=list)
    calls: list[tuple[str, str, dict[str, str]]] = field(default_factory=list)
    url: str = ""

    def app(self) -> Starlette:
        if self.type == "gitlab":
            collection = "/projects/{project:path}/merge_requests"
            item = "/projects/{project:path}/merge_requests/{number}"
        else:
            collection, item = "/repos/{owner}/{repo}/pulls", "/repos/{owner}/{repo}/pulls/{number}"
        return Starlette(
            routes=[
                Route(collection, self.collection, methods=["GET", "POST"]),
                Route(item, self.item, methods=["PATCH", "PUT"]),
            ]
        )

    def _refused(self, request: Request) -> JSONResponse | None:
        raw_path = request.scope["raw_path"].decode()  # as sent: GitLab's project id stays URL-encoded
        self.calls.append((request.method, raw_path, dict(request.query_params)))
        header, value = AUTH[self.type]
        if request.headers.get(header) != value:
            return JSONResponse({"message": "Bad credentials"}, status_code=401)
        return None

    async def collection(self, request: Request) -> JSONResponse:
        if (refused := self._refused(request)) is not None:
            return refused
        if request.method == "GET":
            query = request.query_params
            found = [p for p in self.pulls if p["open"]]
            if self.type == "github":
                found = [p for p in found if f"octo:{p['head']}" == query.get("head") and p["base"] == query["base"]]
            if self.type == "gitlab":
                found = [p for p in found if p["head"] == query.get("source_branch")]
            return JSONResponse([self._shown(p) for p in found])
        body = await request.json()
        head, base = (
            (body["source_branch"], body["target_branch"]) if self.type == "gitlab" else (body["head"], body["base"])
        )
        if any(p["head"] == head and p["open"] for p in self.pulls):
            return JSONResponse({"message": "Validation Failed", "errors": ["A pull request already exists"]}, 422)
        text = body.get("description" if self.type == "gitlab" else "body")
        pull = {"number": len(self.pulls) + 1, "head": head, "base": base, "title": body["title"], "text": text,
                "open": True}  # fmt: skip
        self.pulls.append(pull)
        return JSONResponse(self._shown(pull), status_code=201)

    async def item(self, request: Request) -> JSONResponse:
        if (refused := self._refused(request)) is not None:
            return refused
        pull = self.pulls[int(request.path_params["number"]) - 1]
        body = await request.json()
        pull["title"] = body["title"]
        pull["text"] = body.get("description" if self.type == "gitlab" else "body")
        return JSONResponse(self._shown(pull))

    def _shown(self, pull: dict[str, Any]) -> dict[str, Any]:
        web = f"{self.url}/octo/site/pull/{pull['number']}"
        if self.type == "gitlab":
            return {"iid": pull["number"], "source_branch": pull["head"], "target_branch": pull["base"], "web_url": web}
        return {"number": pull["number"], "head": {"ref": pull["head"]}, "base": {"ref": pull["base"]}, "html_url": web}


@pytest.fixture(params=["github", "gitlab", "gitea"])
def forge(request: pytest.FixtureRequest) -> Iterator[FakeForge]:
    fake = FakeForge(request.param)
    server = ThreadedServer(fake.app(), f"fake {request.param}")
    fake.url = server.url
    server.start()
    try:
        yield fake
    finally:
        server.stop()


def settings(fake: FakeForge, token: str = TOKEN) -> ForgeSettings:
    return ForgeSettings(type=fake.type, repository="octo/site", url=fake.url, token=SecretStr(token), base="main")  # type: ignore[arg-type]


async def test_one_request_per_branch_opened_then_updated(forge: FakeForge) -> None:
    url = await open_pull_request(settings(forge), "cmssync/site-changes", "Site changes", "page /about: name")
    assert url == f"{forge.url}/octo/site/pull/1"
    assert forge.pulls[0]["head"] == "cmssync/site-changes"
    assert forge.pulls[0]["base"] == "main"
    again = await open_pull_request(settings(forge), "cmssync/site-changes", "Site changes (2)", "page /contact")
    assert again == url
    assert len(forge.pulls) == 1, "the open request is updated, not a second one opened"
    assert forge.pulls[0]["title"] == "Site changes (2)"
    assert forge.pulls[0]["text"] == "page /contact"
    methods = [method for method, _, _ in forge.calls]
    assert methods == ["GET", "POST", "GET", "PUT" if forge.type == "gitlab" else "PATCH"]
    if forge.type == "gitlab":
        assert forge.calls[0][1] == "/projects/octo%2Fsite/merge_requests"
        assert forge.calls[0][2]["source_branch"] == "cmssync/site-changes"
    elif forge.type == "github":
        assert forge.calls[0][2]["head"] == "octo:cmssync/site-changes"
    other = await open_pull_request(settings(forge), "other-branch", "Other", "")
    assert other.endswith("/pull/2")


async def test_a_refusal_says_the_status_and_the_forges_message_never_the_token(forge: FakeForge) -> None:
    with pytest.raises(ForgeError) as refused:
        await open_pull_request(settings(forge, token="wrong-token-98765"), "b", "t", "")
    message = str(refused.value)
    assert "answered 401: Bad credentials" in message
    assert "wrong-token-98765" not in message
    assert message.startswith("GET http://127.0.0.1:")
