"""Report mode and suspension: when the daemon may write to the site, and the controls that change it.

``daemon.mode`` (or ``--mode``) is ``enforce`` (apply the content) or ``report`` (observe and plan on the same
triggers, expose drift and pending changes as metrics and notifications, never write). A running daemon can be
*suspended* and *resumed* — ``POST /suspend`` / ``POST /resume`` on the health server, or ``SIGUSR1`` / ``SIGUSR2``.
A suspended daemon keeps running in report fashion: every trigger still observes and plans (so drift, pending
changes and failures stay visible), nothing is written. Resuming asks for a full run, which (in enforce mode)
applies what piled up meanwhile. A run already going when the suspension arrives is not interrupted: the mode is
read when a run starts. Suspension is held in memory only: a restarted daemon starts in its configured mode (set
``daemon.mode: report`` for a lasting one).

The control endpoints change what the daemon does, so they answer only connections from a loopback address (a
health server bound to ``0.0.0.0`` for probes still refuses them from outside: 403), and refuse requests that carry
an ``Origin`` header (a web page in a browser on the same host cannot drive them). The health port must not be
exposed beyond the host or pod anyway.
"""

from __future__ import annotations

import ipaddress
import json
import time
from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any, Literal

import structlog
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route

from cmssync.daemon.health import Readiness
from cmssync.daemon.leader import Leadership
from cmssync.daemon.metrics import DaemonMetrics
from cmssync.plan.request import PlanRequest
from cmssync.secrets import mask_secrets
from cmssync.sync.applying import ApplyReport
from cmssync.sync.planning import make_plan
from cmssync.sync.workspace import Workspace

log = structlog.get_logger("cmssync.daemon")

Mode = Literal["enforce", "report"]


class ModeControl:
    """The configured mode, the suspension, and the mode a run starting now takes (:attr:`effective`)."""

    def __init__(self, configured: Mode, metrics: DaemonMetrics, *, on_resume: Callable[[], None] = lambda: None):
        self.configured: Mode = configured
        self.suspended = False
        self.suspended_at: float | None = None
        self.suspended_by: str | None = None
        self._metrics = metrics
        self._on_resume = on_resume
        self._publish()

    @property
    def effective(self) -> Mode:
        return "report" if self.suspended else self.configured

    def suspend(self, by: str) -> bool:
        """Suspend (``by``: who asked, for the log and ``/status``); False when it already was."""
        if self.suspended:
            return False
        self.suspended, self.suspended_at, self.suspended_by = True, time.time(), by
        self._publish()
        log.warning("daemon suspended: runs observe and report, nothing is written", by=by)
        return True

    def resume(self, by: str) -> bool:
        """Resume and ask for a full run; False when it was not suspended."""
        if not self.suspended:
            return False
        self.suspended, self.suspended_at, self.suspended_by = False, None, None
        self._publish()
        log.info("daemon resumed", by=by, mode=self.configured)
        self._on_resume()
        return True

    def document(self) -> dict[str, Any]:
        body: dict[str, Any] = {"mode": self.configured, "effective_mode": self.effective, "suspended": self.suspended}
        if self.suspended_at is not None:
            body["suspended_since"] = datetime.fromtimestamp(self.suspended_at, UTC).isoformat(timespec="seconds")
            body["suspended_by"] = self.suspended_by
        return body

    def _publish(self) -> None:
        self._metrics.set_mode(self.effective, suspended=self.suspended)


@dataclass
class ModeReadiness(Readiness):
    """``/readyz`` with the mode and the suspension: a suspended daemon is still ready (it runs and observes)."""

    control: ModeControl | None = None
    leadership: Leadership | None = None
    """Which replica leads (:mod:`.leader`): ``role`` and ``leader`` in ``/readyz`` and ``/status``."""

    def document(self) -> dict[str, Any]:
        body = super().document()
        if self.control is not None:
            body.update(self.control.document())
        if self.leadership is not None:
            body.update(self.leadership.document())
        return body


async def report_only(workspace: Workspace, request: PlanRequest) -> ApplyReport:
    """A report-mode run: observe and plan exactly as ``apply`` would, write nothing (no state lock either).

    The result is an :class:`ApplyReport` with no outcomes, so the log, metrics and readiness treat both modes alike.
    """
    run = await make_plan(workspace, request)
    return ApplyReport(run.plan, [], [], run.requests, state=run.state)


def is_loopback(host: str | None) -> bool:
    if not host:
        return False
    try:
        return ipaddress.ip_address(host.split("%", 1)[0]).is_loopback
    except ValueError:
        return False


def control_routes(control: ModeControl, status: Callable[[], dict[str, Any]]) -> list[Route]:
    """``POST /suspend``, ``POST /resume`` (loopback only, no ``Origin``) and ``GET /status``."""

    def refused(request: Request) -> Response | None:
        peer = request.client.host if request.client is not None else None
        if not is_loopback(peer):
            log.warning("control request refused: not from a loopback address", path=request.url.path, peer=peer)
            return JSONResponse({"error": "control endpoints answer loopback connections only"}, status_code=403)
        if "origin" in request.headers:
            return JSONResponse({"error": "control endpoints refuse browser requests (Origin header)"}, status_code=403)
        return None

    def who(request: Request) -> str:
        agent = request.headers.get("user-agent", "")[:60]
        return f"POST {request.url.path}" + (f" ({agent})" if agent else "")

    async def suspend(request: Request) -> Response:
        if (refusal := refused(request)) is not None:
            return refusal
        changed = control.suspend(who(request))
        return JSONResponse({"changed": changed, **control.document()})

    async def resume(request: Request) -> Response:
        if (refusal := refused(request)) is not None:
            return refusal
        changed = control.resume(who(request))
        return JSONResponse({"changed": changed, **control.document()})

    async def status_endpoint(request: Request) -> Response:
        # Masked by value as a whole, like /readyz: a run's reason may quote a server that echoed a credential.
        return Response(mask_secrets(json.dumps(status())), media_type="application/json")

    return [
        Route("/suspend", suspend, methods=["POST"]),
        Route("/resume", resume, methods=["POST"]),
        Route("/status", status_endpoint, methods=["GET", "HEAD"]),
    ]
