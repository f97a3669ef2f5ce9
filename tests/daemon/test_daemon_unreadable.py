"""The daemon with one managed page that cannot be read: the rest is applied, the run fails without backoff.

The daemon runs as a real process whose ``site.url`` is a loopback reverse proxy in front of the sandbox. The proxy
forwards every request as it is, except ``GET /pages/{id of /about}``, which it answers 403 "You do not have
access to this page." (a permission changed) or 500 on every attempt (a server error that outlasts the retries) —
the faults of ``tests/reliability/test_unreadable_isolated.py``, which the sandbox's own fault rules cannot give
(no 403) to another process.

While ``/about`` cannot be read, a full run holds it, ``/about/history`` (to be created below it) and ``/index``
(whose new link needs ``/about/history``), and applies the edit of ``/contact``. The run is logged as failed, the
held objects with the server's reason are the problems of ``/healthz`` (503), and the reconciler does not retry the
whole site with backoff: the next save, schedule or signal runs again. Once ``/about`` reads again, that next run
(a save, which then owes the failed full run; or SIGHUP) converges: ``/healthz`` is clean, the plan is empty, and
``/about`` keeps its id (never created twice).
"""

from __future__ import annotations

import asyncio
import contextlib
import io
import json
import re
import signal
import threading
from collections.abc import AsyncIterator, Iterator
from dataclasses import dataclass

import httpx
import pytest
from ruamel.yaml import YAML
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route

from cmssync.daemon.main import RETRY_BACKOFF
from cmssync.emulator.embedded import Sandbox
from cmssync.sync.planning import make_plan
from cmssync.sync.workspace import open_workspace
from tests.support.daemon import DaemonProcess, DaemonSite, write_settings
from tests.support.rawsite import RawSite
from tests.support.server import ThreadedServer

pytestmark = pytest.mark.slow

ANSWERS = {
    403: (
        "You do not have access to this page.",
        json.dumps({"error": True, "errors": ["You do not have access to this page."]}),
        "application/json",
    ),
    500: ("Internal Server Error", "<html><body><h1>Internal Server Error</h1></body></html>", "text/html"),
}
HISTORY = "name: History\nareas:\n  Main:\n    - type: content\n      value:\n        content: <p>Since 1999.</p>\n"
HOP_HEADERS = {"content-length", "content-encoding", "transfer-encoding", "connection", "keep-alive"}


@dataclass(frozen=True)
class Refusal:
    """Answer requests of ``method`` whose path matches ``path`` (a regular expression) with this, every time."""

    method: str
    path: str
    status: int
    body: str
    content_type: str


class RefusingProxy:
    """A reverse proxy on loopback (Starlette under uvicorn on a thread, as ``tests/daemon/receiver.py``): every
    request goes to the sandbox unchanged (its ``Host`` too, so the answers name the proxy's address) unless the
    current :class:`Refusal` matches it."""

    def __init__(self, upstream: str) -> None:
        self.upstream = upstream
        self.refusal: Refusal | None = None
        self.refused = 0
        self._lock = threading.Lock()
        methods = ["GET", "POST", "PUT", "DELETE", "PATCH"]
        app = Starlette(routes=[Route("/{path:path}", self._handle, methods=methods)], lifespan=self._lifespan)
        self._client: httpx.AsyncClient | None = None
        self._http = ThreadedServer(app, "proxy", lifespan="on")
        self.url = self._http.url

    @contextlib.asynccontextmanager
    async def _lifespan(self, app: Starlette) -> AsyncIterator[None]:
        # The upstream client lives and is closed on the server's own event loop.
        async with httpx.AsyncClient(base_url=self.upstream, timeout=60) as client:
            self._client = client
            yield

    def refuse(self, refusal: Refusal | None) -> None:
        with self._lock:
            self.refusal = refusal

    async def _handle(self, request: Request) -> Response:
        with self._lock:
            refusal = self.refusal
            if refusal is not None and (
                request.method != refusal.method or not re.search(refusal.path, request.url.path)
            ):
                refusal = None
            if refusal is not None:
                self.refused += 1
        if refusal is not None:
            return Response(refusal.body, status_code=refusal.status, media_type=refusal.content_type)
        headers = [(k, v) for k, v in request.headers.items() if k.lower() not in HOP_HEADERS]
        assert self._client is not None
        upstream = await self._client.request(
            request.method,
            request.url.path,
            params=list(request.query_params.multi_items()),
            headers=headers,
            content=await request.body(),
        )
        answer = {k: v for k, v in upstream.headers.items() if k.lower() not in HOP_HEADERS}
        return Response(upstream.content, status_code=upstream.status_code, headers=answer)

    def start(self) -> RefusingProxy:
        self._http.start()
        return self

    def stop(self) -> None:
        self._http.stop()


@pytest.fixture
def proxy(sandbox: Sandbox) -> Iterator[RefusingProxy]:
    server = RefusingProxy(sandbox.url).start()
    try:
        yield server
    finally:
        server.stop()


def start_through(site: DaemonSite, proxy: RefusingProxy) -> DaemonProcess:
    """Start the daemon on ``site`` with the proxy as its site address (the state and tokens as usual)."""
    write_settings(site.root, site.sandbox, site.state_dir, {})
    yaml = YAML()
    path = site.root / "cmssync.yaml"
    settings = yaml.load(path.read_text())
    settings["site"]["url"] = proxy.url
    buffer = io.StringIO()
    yaml.dump(settings, buffer)
    path.write_text(buffer.getvalue())
    process = DaemonProcess(site.root, site.env)
    site.processes.append(process)
    return process


def contact_text(raw: RawSite) -> str:
    return " ".join(str(value) for _kind, value in raw.blocks("/contact", "Main"))


@pytest.mark.parametrize(("status", "next_run"), [(403, "save"), (500, "signal")])
async def test_an_unreadable_page_fails_the_run_alone_and_is_not_retried_with_backoff(
    status: int,
    next_run: str,
    daemon_site: DaemonSite,
    proxy: RefusingProxy,
    raw: RawSite,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    first = start_through(daemon_site, proxy)
    assert first.wait_for("run finished", trigger="startup")["result"] == "success"
    assert first.terminate()[0] == 0
    about = raw.page_by_path("/about")
    assert about is not None
    about_id = int(about["id"])

    # Edits while the daemon is down; /about then refuses to be read.
    daemon_site.edit("pages/about.yaml", "About us", "About the team")
    daemon_site.edit("pages/contact.yaml", "or call", "or phone")
    daemon_site.edit(
        "pages/index.yaml",
        "Download our",
        'Read <a href="${page-link:/about/history}">it</a>. Download our',
    )
    (daemon_site.root / "pages" / "about" / "history.yaml").write_text(HISTORY, encoding="utf-8")
    reason, body, content_type = ANSWERS[status]
    proxy.refuse(Refusal("GET", rf"/pages/{about_id}$", status, body, content_type))

    daemon = start_through(daemon_site, proxy)
    failed = daemon.wait_for("run finished", trigger="startup")
    assert failed["result"] == "failure", failed
    assert failed["reason"] == "3 object(s) held: cannot be read, or need one that cannot", failed
    assert failed["outcomes"]["failed"] == 0, failed
    assert failed["outcomes"]["ok"] >= 1, failed  # the rest was applied
    assert proxy.refused >= 1
    assert "or phone" in contact_text(raw)
    about = raw.page_by_path("/about")
    assert about is not None
    assert (about["id"], about["name"]) == (about_id, "About us")  # held: neither updated nor created again
    assert raw.page_by_path("/about/history") is None

    ready = daemon.get("/healthz")
    assert ready.status_code == 503
    document = ready.json()
    assert document["status"] == "failing"
    problems = document["problems"]
    assert len(problems) == 3, problems
    refused = next(p for p in problems if p.startswith("page /about: "))
    assert f"page /about (id {about_id}): the page tree lists it but it cannot be read" in refused, refused
    assert reason in refused, refused
    assert any(p.startswith("page /about/history: ") for p in problems), problems
    assert any(p.startswith("page /: ") for p in problems), problems

    # No backoff retry of the whole site: the reconciler waits for the next save, schedule or signal.
    daemon.wait_for("run failed; not retrying until the content, the schedule or a signal asks again")
    mark = daemon.mark()
    await asyncio.sleep(RETRY_BACKOFF.initial + 1.0)
    assert [ln for ln in daemon.lines[mark:] if ln.get("event") in ("run started", "run failed; will retry")] == []
    assert daemon.runs_total() == 1

    # /about reads again; the next run converges.
    proxy.refuse(None)
    mark = daemon.mark()
    if next_run == "save":
        daemon_site.edit("pages/contact.yaml", "or phone", "or ring")
        saved = daemon.wait_for("run finished", after=mark, trigger="file")
        assert saved["result"] == "success", saved
        # the save's run succeeded without covering the failed full run: that one is run again at once
        converged = daemon.wait_for("run finished", after=mark, trigger="retry")
    else:
        daemon.signal(signal.SIGHUP)
        converged = daemon.wait_for("run finished", after=mark, trigger="signal")
    assert converged["result"] == "success", converged
    assert converged["full"] is True
    assert daemon.get("/healthz").status_code == 200
    assert "problems" not in daemon.get("/healthz").json()
    about = raw.page_by_path("/about")
    assert about is not None
    assert (about["id"], about["name"]) == (about_id, "About the team")
    assert raw.page_by_path("/about/history") is not None

    monkeypatch.setenv("CMSSYNC_CLIENT_SECRET", daemon_site.sandbox.client_secret)
    monkeypatch.setenv("CMSSYNC_PASSWORD", daemon_site.sandbox.admin_password)
    plan = (await make_plan(open_workspace(daemon_site.root))).plan
    assert plan.actions == (), [(a.kind, a.key, a.op) for a in plan.actions]
    assert plan.unreadable == ()
