"""``ThreadedServer``: an ASGI app served by uvicorn on ``127.0.0.1:<free port>`` in a daemon thread, for the test
doubles of other services (a webhook receiver, a state backend, a proxy in front of the sandbox)."""

from __future__ import annotations

import socket
import threading
import time
from typing import Literal

import uvicorn
from starlette.types import ASGIApp


class ThreadedServer:
    def __init__(self, app: ASGIApp, what: str, *, lifespan: Literal["on", "off"] = "off") -> None:
        self.what = what
        """What the server is, for the message if it does not start."""
        self._sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        self._sock.bind(("127.0.0.1", 0))
        self.url = f"http://127.0.0.1:{self._sock.getsockname()[1]}"
        self._server = uvicorn.Server(uvicorn.Config(app, log_level="warning", log_config=None, lifespan=lifespan))
        self._thread = threading.Thread(target=self._server.run, kwargs={"sockets": [self._sock]}, daemon=True)

    def start(self) -> None:
        """Serve, and return once the server accepts connections (10 s at most)."""
        self._thread.start()
        deadline = time.monotonic() + 10
        while not self._server.started:
            assert time.monotonic() < deadline, f"the {self.what} did not start"
            time.sleep(0.01)

    def stop(self) -> None:
        self._server.should_exit = True
        self._thread.join(10)
        self._sock.close()
