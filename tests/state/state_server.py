"""A Terraform-style HTTP state server on loopback for the state backend tests (GitLab's semantics).

``StateServer`` is a Starlette app served by uvicorn on a thread (``tests.support.server.ThreadedServer``):

* ``GET /state/NAME`` → 200 with the document, or 204 when there is none.
* ``POST /state/NAME?ID=…`` stores the body; while the state is locked, a write without the holder's id is refused
  with 409 (as GitLab does).
* ``LOCK /state/NAME/lock`` (or ``POST``) with lock info → 200, or 423 with the holder's lock info when held.
* ``UNLOCK /state/NAME/lock`` (or ``DELETE``) → 200; a body whose ``ID`` is not the holder's → 409 with the
  holder's lock info; a body without an id releases whatever holds it (Terraform's force-unlock).

``script`` holds answers to give instead, one per matching request (method, status, body): how a test makes the
server fail. Every request is recorded (method, path, query, body, authorization) for the assertions.
"""

from __future__ import annotations

import json
import threading
from dataclasses import dataclass, field
from types import TracebackType
from typing import Any

from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route

from tests.support.server import ThreadedServer


@dataclass(frozen=True)
class Seen:
    method: str
    path: str
    query: dict[str, str]
    body: bytes
    authorization: str | None


@dataclass
class Scripted:
    method: str
    status: int
    body: bytes = b""


@dataclass
class StateServer:
    credentials: tuple[str, str] | None = None
    """Basic auth the server demands (401 otherwise)."""
    lock_status: int = 423
    require_serial: bool = False
    """Refuse a document without an integer ``serial`` with 422, as GitLab does."""
    documents: dict[str, bytes] = field(default_factory=dict)
    locks: dict[str, dict[str, Any]] = field(default_factory=dict)
    seen: list[Seen] = field(default_factory=list)
    script: list[Scripted] = field(default_factory=list)

    def __post_init__(self) -> None:
        methods = ["GET", "POST", "PUT", "DELETE", "LOCK", "UNLOCK"]
        app = Starlette(
            routes=[
                Route("/state/{name}/lock", self._lock, methods=methods),
                Route("/state/{name}", self._state, methods=methods),
            ]
        )
        self._http = ThreadedServer(app, "state server")
        self.base = self._http.url
        self._mutex = threading.Lock()

    def settings(self, name: str = "site", **extra: Any) -> dict[str, Any]:
        """The ``state:`` mapping pointing at state ``name`` of this server."""
        return {
            "backend": "http",
            "address": f"{self.base}/state/{name}",
            "lock_address": f"{self.base}/state/{name}/lock",
            **extra,
        }

    def requests(self, method: str) -> list[Seen]:
        return [seen for seen in self.seen if seen.method == method]

    # -- handlers ------------------------------------------------------------------------------------------------

    async def _record(self, request: Request) -> tuple[bytes, Response | None]:
        body = await request.body()
        with self._mutex:
            self.seen.append(
                Seen(
                    request.method,
                    request.url.path,
                    dict(request.query_params),
                    body,
                    request.headers.get("authorization"),
                )
            )
            if self.credentials is not None:
                import base64

                expected = "Basic " + base64.b64encode(":".join(self.credentials).encode()).decode()
                if request.headers.get("authorization") != expected:
                    return body, Response("bad credentials", status_code=401)
            for index, scripted in enumerate(self.script):
                if scripted.method == request.method:
                    del self.script[index]
                    return body, Response(scripted.body, status_code=scripted.status)
        return body, None

    async def _state(self, request: Request) -> Response:
        body, answer = await self._record(request)
        if answer is not None:
            return answer
        name = request.path_params["name"]
        with self._mutex:
            if request.method == "GET":
                document = self.documents.get(name)
                return (
                    Response(status_code=204) if document is None else Response(document, media_type="application/json")
                )
            if request.method == "POST":
                held = self.locks.get(name)
                if held is not None and request.query_params.get("ID") != held["ID"]:
                    return Response(json.dumps(held), status_code=409, media_type="application/json")
                if self.require_serial and not isinstance(json.loads(body).get("serial"), int):
                    return Response("No serial in payload", status_code=422)
                self.documents[name] = body
                return Response(status_code=200)
        return Response(status_code=405)

    async def _lock(self, request: Request) -> Response:
        body, answer = await self._record(request)
        if answer is not None:
            return answer
        name = request.path_params["name"]
        info: dict[str, Any] = json.loads(body) if body.strip() else {}
        with self._mutex:
            held = self.locks.get(name)
            if request.method in ("LOCK", "POST"):
                if held is not None:
                    return Response(json.dumps(held), status_code=self.lock_status, media_type="application/json")
                self.locks[name] = info
                return Response(status_code=200)
            if request.method in ("UNLOCK", "DELETE"):
                if held is not None and info.get("ID") and info["ID"] != held["ID"]:
                    return Response(json.dumps(held), status_code=409, media_type="application/json")
                self.locks.pop(name, None)
                return Response(status_code=200)
        return Response(status_code=405)

    # -- lifecycle -----------------------------------------------------------------------------------------------

    def __enter__(self) -> StateServer:
        self._http.start()
        return self

    def __exit__(
        self, kind: type[BaseException] | None, value: BaseException | None, traceback: TracebackType | None
    ) -> None:
        self._http.stop()
