"""The health server: ``/livez`` (alive), ``/readyz`` (serving), ``/healthz`` (the last run), ``/metrics``.

A small Starlette app served by uvicorn as a task in the daemon's own event loop, on the socket we bind ourselves
(so ``daemon.health: 127.0.0.1:0`` works and the bound port can be logged). uvicorn's ``serve()`` would install its
own SIGINT/SIGTERM handlers and re-raise the signal on exit; the daemon owns signals, so :class:`_Server` opts out.

``/livez`` answers ``200 ok`` while the process serves: the liveness probe. ``/readyz`` answers 200 while the
process serves, whatever its runs do, and 503 ``stopping`` once SIGTERM came: the readiness probe, so an orchestrator
keeps the pod in its Service exactly when its metrics and run status are wanted most, and drains it on the way out.
Its JSON body says how the runs go. ``/healthz`` is that run status as a code: 503 ``starting`` until the first run
finishes, 200 once a run succeeded (a run reads the site, so the credentials work), and 503 with the reason after a
failed or crashed run: the ``file:line:col`` problems of invalid content, or the error (site unreachable,
credentials refused, failed actions, an exception). Alert on it (or on the metrics), never restart or unroute on it.
While a run goes on, every body also says which and since when (``running``: ``since`` in UTC, ``seconds``), so a
run that hangs is seen as one.
"""

from __future__ import annotations

import asyncio
import json
import socket
from collections.abc import Callable, Generator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any, Literal

import structlog
import uvicorn
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import PlainTextResponse, Response
from starlette.routing import Route

from cmssync.daemon.metrics import DaemonMetrics
from cmssync.errors import ConfigError
from cmssync.secrets import mask_secrets

log = structlog.get_logger("cmssync.daemon")

START_TIMEOUT = 10.0
STOP_TIMEOUT = 5.0


@dataclass
class Readiness:
    """What ``/readyz`` says; updated after every run."""

    status: Literal["starting", "ready", "failing"] = "starting"
    reason: str = "no run has finished yet"
    problems: tuple[str, ...] = ()
    last_run: dict[str, Any] = field(default_factory=dict)
    stopping: bool = False
    """SIGTERM came: ``/readyz`` answers 503 so the orchestrator stops routing here."""
    in_progress: Callable[[], dict[str, Any] | None] = lambda: None
    """The run going on (id, trigger, ``since``, ``seconds``), or None: shown beside the last run's status, so a
    run that hangs shows as one running for a long time."""

    def ready(self, run: dict[str, Any]) -> None:
        self.status, self.reason, self.problems, self.last_run = "ready", "the last run succeeded", (), run

    def failing(self, reason: str, problems: Sequence[str], run: dict[str, Any]) -> None:
        self.status, self.reason, self.problems, self.last_run = "failing", reason, tuple(problems), run

    def document(self) -> dict[str, Any]:
        body: dict[str, Any] = {"status": self.status, "reason": self.reason}
        if self.problems:
            body["problems"] = list(self.problems)
        if self.last_run:
            body["last_run"] = self.last_run
        running = self.in_progress()
        if running is not None:
            body["running"] = running
        return body


def build_app(readiness: Readiness, metrics: DaemonMetrics) -> Starlette:
    def document(code: int) -> Response:
        # Masked by value as a whole: a reason or a run summary may quote a server that echoed a credential.
        body = mask_secrets(json.dumps({**readiness.document(), "serving": not readiness.stopping}))
        return Response(body, status_code=code, media_type="application/json")

    async def livez(request: Request) -> Response:
        return PlainTextResponse("ok\n")

    async def readyz(request: Request) -> Response:
        return document(503 if readiness.stopping else 200)

    async def healthz(request: Request) -> Response:
        return document(200 if readiness.status == "ready" else 503)

    async def metrics_endpoint(request: Request) -> Response:
        body, content_type = metrics.render(request.headers.get("accept"))
        return Response(body, headers={"Content-Type": content_type})

    return Starlette(
        routes=[
            Route("/livez", livez, methods=["GET", "HEAD"]),
            Route("/readyz", readyz, methods=["GET", "HEAD"]),
            Route("/healthz", healthz, methods=["GET", "HEAD"]),
            Route("/metrics", metrics_endpoint, methods=["GET", "HEAD"]),
        ]
    )


def parse_address(text: str) -> tuple[str, int]:
    """``host:port`` (``[::1]:9090`` for IPv6; port 0: any free port) → (host, port)."""
    host, sep, port_text = text.strip().rpartition(":")
    host = host.strip("[]")
    if not sep or not host or not port_text.isdigit() or int(port_text) > 65535:
        raise ConfigError(f"daemon.health {text!r}: expected HOST:PORT such as 127.0.0.1:9090 or 0.0.0.0:9090")
    return host, int(port_text)


def bind(host: str, port: int) -> socket.socket:
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    sock = socket.socket(family, socket.SOCK_STREAM)
    try:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        sock.bind((host, port))
    except OSError as exc:
        sock.close()
        raise ConfigError(f"daemon.health: cannot listen on {host}:{port}: {exc.strerror or exc}") from None
    return sock


class _Server(uvicorn.Server):
    @contextmanager
    def capture_signals(self) -> Generator[None, None, None]:
        yield  # the daemon installs its own handlers with loop.add_signal_handler


class HealthServer:
    """uvicorn serving ``app`` on ``host:port`` inside the running loop."""

    def __init__(self, app: Starlette, host: str, port: int) -> None:
        self.host = host
        self._sock = bind(host, port)
        self.port = int(self._sock.getsockname()[1])
        config = uvicorn.Config(app, log_level="warning", log_config=None, access_log=False, lifespan="off")
        self._server = _Server(config)
        self._task: asyncio.Task[None] | None = None

    async def start(self) -> None:
        self._task = asyncio.create_task(self._server.serve(sockets=[self._sock]), name="cmssync-health")
        async with asyncio.timeout(START_TIMEOUT):
            while not self._server.started:
                if self._task.done():
                    self._task.result()  # raises what stopped it
                    raise RuntimeError("the health server stopped while starting")
                await asyncio.sleep(0.005)  # uvicorn offers no start event, only this flag
        log.info("health server listening", host=self.host, port=self.port, url=f"http://{self._url_host}:{self.port}")

    @property
    def _url_host(self) -> str:
        return f"[{self.host}]" if ":" in self.host else self.host

    async def stop(self) -> None:
        self._server.should_exit = True
        if self._task is not None:
            try:
                async with asyncio.timeout(STOP_TIMEOUT):
                    await self._task
            except TimeoutError:
                self._task.cancel()
        self._sock.close()
