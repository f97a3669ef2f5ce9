"""A webhook receiver on loopback for the notification tests, and a black hole that never answers.

:class:`WebhookReceiver` is a Starlette app served by uvicorn on a thread (the sandbox's pattern): it records every
POST (headers and raw body), answers with the next status of a script (default 200), verifies the HMAC signature
when it knows the secret, and offers bounded waits on a condition variable. :func:`black_hole` is a socket that
listens and never accepts: a connection opens, the request is sent, and no answer ever comes — the slowest receiver
there is.
"""

from __future__ import annotations

import json
import socket
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any

from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route

from cmssync.daemon.payloads import SIGNATURE_HEADER, verify
from tests.support.server import ThreadedServer


@dataclass(frozen=True)
class Delivery:
    headers: dict[str, str]
    body: bytes
    signed_ok: bool | None
    """None: the receiver has no secret."""

    @property
    def document(self) -> dict[str, Any]:
        value = json.loads(self.body)
        assert isinstance(value, dict)
        return value

    @property
    def event(self) -> str:
        return self.headers.get("x-cmssync-event", "")


class WebhookReceiver:
    def __init__(self, secret: bytes | None = None) -> None:
        self.secret = secret
        self.deliveries: list[Delivery] = []
        self.attempts = 0
        self.statuses: list[int] = []
        """Statuses to answer, one per request, before falling back to 200."""
        self._changed = threading.Condition()
        app = Starlette(routes=[Route("/hook", self._hook, methods=["POST"])])
        self._http = ThreadedServer(app, "webhook receiver")
        self.url = self._http.url + "/hook"

    async def _hook(self, request: Request) -> Response:
        body = await request.body()
        with self._changed:
            self.attempts += 1
            status = self.statuses.pop(0) if self.statuses else 200
            if status < 300:
                signed = None
                if self.secret is not None:
                    signed = verify(body, self.secret, request.headers.get(SIGNATURE_HEADER, ""))
                self.deliveries.append(Delivery(dict(request.headers), body, signed))
            self._changed.notify_all()
        return Response(status_code=status)

    def start(self) -> WebhookReceiver:
        self._http.start()
        return self

    def stop(self) -> None:
        self._http.stop()

    def events(self) -> list[str]:
        with self._changed:
            return [delivery.event for delivery in self.deliveries]

    def wait_for(self, count: int, timeout: float = 30.0) -> list[Delivery]:
        """Wait until at least ``count`` deliveries arrived; all of them."""
        deadline = time.monotonic() + timeout
        with self._changed:
            while len(self.deliveries) < count:
                left = deadline - time.monotonic()
                assert left > 0, (
                    f"{len(self.deliveries)} deliveries within {timeout}s, expected {count}: {self.events()}"
                )
                self._changed.wait(left)
            return list(self.deliveries)


@contextmanager
def receiver(secret: bytes | None = None) -> Iterator[WebhookReceiver]:
    server = WebhookReceiver(secret).start()
    try:
        yield server
    finally:
        server.stop()


@contextmanager
def black_hole() -> Iterator[str]:
    """A URL whose server takes the connection and never answers."""
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.bind(("127.0.0.1", 0))
    sock.listen(64)
    try:
        yield f"http://127.0.0.1:{sock.getsockname()[1]}/hook"
    finally:
        sock.close()
