"""The ASGI application: the Starlette app (control routes + the API dispatcher) inside the fault and statistics
layer.

The fault layer is the outermost ASGI callable so that it sees uvicorn's own ``send``: a ``drop`` fault closes the
connection through it without any answer (the client sees the server disconnect), which raising an exception
could not do — uvicorn would answer such an exception with its own 500.
"""

from __future__ import annotations

import asyncio
import urllib.parse
from email.utils import formatdate
from typing import Any

from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from cmssync.emulator import auth, control, responses, routing
from cmssync.emulator.faults import FaultRule
from cmssync.emulator.runtime import Emulator

ANY_METHOD = ("GET", "HEAD", "POST", "PUT", "PATCH", "DELETE", "OPTIONS", "TRACE", "PROPFIND", "PURGE")


class FaultsAndStats:
    """Applies the fault rules to every request outside ``/__emulator`` and counts what was answered."""

    def __init__(self, app: ASGIApp, emu: Emulator) -> None:
        self.app = app
        self.emu = emu

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http" or scope["path"].startswith("/__emulator"):
            await self.app(scope, receive, send)
            return
        query = urllib.parse.unquote(scope.get("query_string", b"").decode("latin-1"))
        decision = self.emu.faults.decide(scope["method"], scope["path"], query)
        if decision.latency_ms:
            await asyncio.sleep(decision.latency_ms / 1000)
        status = [0]

        async def recording_send(message: Message) -> None:
            if message["type"] == "http.response.start":
                status[0] = int(message["status"])
                # the site's own clock, the one its dates come from (a real server's Date header and PHP share it)
                date = (b"date", formatdate(routing.now(), usegmt=True).encode())
                message = {**message, "headers": [*message.get("headers", []), date]}
            await send(message)

        try:
            async with self.emu.capacity.worker():  # waits for a worker when the capacity model is on
                if decision.fault is None:
                    await self.app(scope, receive, recording_send)
                else:
                    await self._fault(decision.fault, scope, receive, send, recording_send)
        finally:
            route = scope.get(routing.ROUTE_KEY) or routing.label_for(self.emu, scope["method"], scope["path"])
            self.emu.stats.record(scope["method"], route, status[0])

    async def _fault(self, rule: FaultRule, scope: Scope, receive: Receive, raw_send: Send, send: Send) -> None:
        request = Request(scope, receive)
        xhr = request.headers.get("x-requested-with", "").lower() == "xmlhttprequest"
        response: Response
        if rule.kind == "drop":
            await _drop_connection(raw_send)
            return
        if rule.kind in ("commit-then-500", "commit-then-429"):

            async def discard(message: Message) -> None:
                return None

            await self.app(scope, receive, discard)
            response = (
                _too_many_requests(rule)
                if rule.kind == "commit-then-429"
                else responses.whoops("RuntimeException", "Injected fault: commit-then-500", xhr)
            )
        elif rule.kind == "revoke-token":
            if not request.headers.get("authorization", "").startswith("Bearer "):
                await self.app(scope, receive, send)  # nothing to revoke (the token endpoint, unauthenticated calls)
                return
            auth.revoke_bearer(request, self.emu)
            response = responses.oauth_error("access_denied", auth.DENIED, 401, "Access token has been revoked")
        elif rule.kind == "404":
            response = responses.not_found_page(self.emu.store.get_meta("site_name", "Sandbox Site"), xhr)
        elif rule.kind == "429":
            response = _too_many_requests(rule)
        elif rule.kind == "503":
            headers = {"content-type": "text/html; charset=UTF-8"}
            if "retry-after" in rule.options:
                headers["retry-after"] = rule.retry_after
            response = Response(
                "<html><body><h1>Service Unavailable</h1></body></html>", status_code=503, headers=headers
            )
        else:
            response = responses.whoops("RuntimeException", "Injected fault: 500", xhr)
        await response(scope, receive, send)


def _too_many_requests(rule: FaultRule) -> Response:
    return Response(
        "Too Many Requests",
        status_code=429,
        headers={"retry-after": rule.retry_after, "content-type": "text/plain; charset=UTF-8"},
    )


async def _drop_connection(send: Send) -> None:
    """Close the TCP connection without sending a byte of response."""
    cycle: Any = getattr(send, "__self__", None)
    transport: Any = getattr(cycle, "transport", None)
    if transport is None:
        # Not uvicorn's h11 cycle: start a response and die, which also leaves the client without an answer.
        await send({"type": "http.response.start", "status": 500, "headers": []})
        raise ConnectionAbortedError("drop fault")
    transport.abort()
    # Let the protocol notice (connection_lost marks the cycle disconnected, so uvicorn writes nothing more).
    for _ in range(3):
        await asyncio.sleep(0)
    if hasattr(cycle, "disconnected"):
        cycle.disconnected = True


def build_app(emu: Emulator) -> ASGIApp:
    """The emulator as an ASGI app (the caller owns ``emu`` and closes it after the server stops)."""

    async def api(request: Request) -> Response:
        return await routing.dispatch(request, emu)

    # Every method reaches the dispatcher: an unrouted one must get the CMS's 404 page, not Starlette's 405.
    app = Starlette(routes=[*control.ROUTES, Route("/{path:path}", api, methods=list(ANY_METHOD))])
    app.state.emulator = emu
    return FaultsAndStats(app, emu)
