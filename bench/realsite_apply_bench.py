"""Opt-in benchmark against a real Concrete 9.3.1 site: apply throughput against the site's saturation, and the
daemon's save-to-visible latency (issue 17's last two real-site targets).

    python bench/realsite_apply_bench.py [--env /tmp/concrete-site.env] [--pages 100] [--blocks 3]
                                         [--fixed 4,8] [--edits 5] [--debounce 0.5] [--window 6]

Needs the site of ``../shared/realsite/`` and its env file (exit 2 without it). It never resets the site: every page
it makes lives under parents named ``cmssync-apply-bench-<stamp>-…``, which it moves to the trash at the end
(``DELETE /pages/{id}`` of each parent: the subtree goes with it), so it can run while someone else uses other pages.

1. **Saturation**, measured in the same run: cmssync's own client (``ConcreteClient``, password grant) runs the
   apply's request mix — one page made the way ``apply`` makes a page with BLOCKS blocks: ``POST /pages``, ``PUT
   /pages/{id}``, BLOCKS × ``POST /pages/{id}/Main``, ``PUT /page_versions/{id}/{v}`` — under a scratch parent, with
   a fixed number of lanes (1, 2, 4, 8), each lane one request at a time, for ``--window`` seconds each. Throughput
   counts the requests that finished inside the window; latency is each call's round trip. The best is the site's
   saturation throughput for this mix.
2. **Apply**: PAGES pages × BLOCKS content blocks under a new parent, applied in-process (``apply_site``, as ``cmssync
   apply --yes`` does, without the interpreter start) with the default ``concurrency: auto``, then the same content
   under other parents with each ``--fixed`` concurrency. For each: wall time, requests (the client's count, and the
   lines the site's request log ``CONCRETE_REQUEST_LOG`` gained meanwhile: more means someone else used the site),
   req/s over the whole run and over its write phase (first to last write), against the saturation; for ``auto``
   the limit it ran at (time-weighted mean, highest, at the end).
3. **Daemon**: ``cmssync daemon`` (a real process, JSON log, ``daemon.debounce`` = ``--debounce``) watches the
   ``auto`` content; EDITS times one block of one page is changed (an editor's save: temp file renamed over the
   page file). Timestamps: the save; the debounce's end (the daemon's ``run started`` line); the daemon's ``run
   finished``; and the first public GET of the page (its URL, no token, a unique query string so no full-page cache
   can answer — the site's ``concrete.cache.pages`` is off anyway) whose HTML holds the new text. The public page is
   polled one GET at a time from the debounce's end (each GET is a full render, ~0.1–0.3 s: the visible time is the
   end of the first GET that shows it, so it is late by up to one render). Requests per incremental run: the
   daemon's own count, and the API lines (``/ccm/api/…``, ``/oauth/…``) of the request log during the run.

Targets (issue 17): the ``auto`` apply within 10% of the saturation throughput; a saved one-block edit visible on
the public page <= 1 s after the debounce.
"""

from __future__ import annotations

import argparse
import asyncio
import functools
import json
import logging
import os
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import threading
import time
import uuid
from collections.abc import AsyncIterator, Callable, Coroutine
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TypeVar

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import httpx

from bench.common import table
from bench.realsite_bench import log_lines, read_env, routes
from cmssync.api.auth import OAuthTokens
from cmssync.api.client import ConcreteClient
from cmssync.api.limiter import Slot
from cmssync.logs import configure_logging
from cmssync.sync.applying import ApplyRequest, apply_site
from cmssync.sync.workspace import Workspace, open_workspace

DEFAULT_ENV = Path("/tmp/concrete-site.env")
REPO = Path(__file__).resolve().parents[1]
LEVELS = (1, 2, 4, 8)
PREFIX = "cmssync-apply-bench"
T = TypeVar("T")


# -- the request log --------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class LogLine:
    """One request of the site's log: ``<start time> <method> <status> <ms> <uri>`` (router.php writes the time
    the request started and its duration)."""

    started: float
    ms: float
    method: str
    uri: str

    @property
    def ended(self) -> float:
        return self.started + self.ms / 1000

    @property
    def api(self) -> bool:
        return self.uri.startswith(("/ccm/api/", "/oauth/"))


def parse_log(lines: list[str]) -> list[LogLine]:
    parsed = []
    for line in lines:
        parts = line.split()
        if len(parts) >= 5:
            try:
                parsed.append(LogLine(float(parts[0]), float(parts[3]), parts[1], parts[4]))
            except ValueError:
                continue
    return parsed


class RequestLog:
    """Lines the site's request log gained since :meth:`mark` (the web server writes a line after answering)."""

    def __init__(self, path: Path) -> None:
        self.path = path

    def mark(self) -> int:
        return len(log_lines(self.path))

    def since(self, mark: int, settle: float = 0.3) -> list[str]:
        time.sleep(settle)
        return log_lines(self.path)[mark:]


# -- timing every request of a client ----------------------------------------------------------------------------


@dataclass
class Trace:
    """Every request of the clients it is attached to: (started, ended, limit when it started)."""

    requests: list[tuple[float, float, int]] = field(default_factory=list)

    def attach(self, client: ConcreteClient) -> None:
        limiter = client.transport.limiter
        take = limiter.slot

        @asynccontextmanager
        async def timed(method: str = "") -> AsyncIterator[Slot]:
            async with take(method) as slot:
                started, limit = time.monotonic(), limiter.limit
                try:
                    yield slot
                finally:
                    self.requests.append((started, time.monotonic(), limit))

        limiter.slot = timed  # type: ignore[method-assign]

    def span(self) -> float:
        if not self.requests:
            return 0.0
        return max(e for _, e, _ in self.requests) - min(s for s, _, _ in self.requests)

    def mean_limit(self) -> float:
        """The limit weighted by the time each request spent in flight (what the site actually saw)."""
        total = sum(e - s for s, e, _ in self.requests)
        return sum((e - s) * limit for s, e, limit in self.requests) / total if total else 0.0

    def segments(self, size: int = 100) -> list[str]:
        """The run in slices of ``size`` requests (by start): ``limit@req/s,median ms`` each."""
        ordered = sorted(self.requests)
        parts = []
        for at in range(0, len(ordered) - size // 2, size):
            chunk = ordered[at : at + size]
            span = max(e for _, e, _ in chunk) - chunk[0][0]
            limit = sum(limit for _, _, limit in chunk) / len(chunk)
            rtt = statistics.median(e - s for s, e, _ in chunk) * 1000
            parts.append(f"{limit:.1f}@{len(chunk) / span:.1f}/s,{rtt:.0f}ms")
        return parts

    def in_flight_mean(self) -> float:
        """Mean number of requests in flight over the span."""
        span = self.span()
        return sum(e - s for s, e, _ in self.requests) / span if span else 0.0


@dataclass(frozen=True)
class TracedWorkspace(Workspace):
    """A workspace whose clients are kept and timed (the bench reads the limiter after the apply)."""

    trace: Trace = field(default_factory=Trace)
    clients: list[ConcreteClient] = field(default_factory=list)

    @classmethod
    def wrap(cls, workspace: Workspace) -> TracedWorkspace:
        values = {name: getattr(workspace, name) for name in workspace.__dataclass_fields__ if name != "retry"}
        return cls(**values, retry=workspace.retry)

    def client(self) -> ConcreteClient:
        client = super().client()
        self.trace.attach(client)
        self.clients.append(client)
        return client


# -- 1. saturation ------------------------------------------------------------------------------------------------


def client_for(site: dict[str, str], concurrency: int | None) -> ConcreteClient:
    base = site["CMSSYNC_URL"]
    auth = OAuthTokens(
        token_url=base + "/oauth/2.0/token",
        grant="password",
        client_id=site["CMSSYNC_CLIENT_ID"],
        client_secret=site["CMSSYNC_CLIENT_SECRET"],
        username=site["CMSSYNC_USERNAME"],
        password=site["CMSSYNC_PASSWORD"],
    )
    return ConcreteClient(base, auth=auth, concurrency=concurrency)


async def make_parent(client: ConcreteClient, name: str) -> int:
    page = await client.create_page(parent_id=1, name=name)
    return page.id


async def one_level(client: ConcreteClient, parent: int, blocks: int, lanes: int, window: float) -> dict[str, float]:
    """LANES lanes, each making pages the apply's way one request at a time, for WINDOW seconds."""
    done: list[tuple[float, float]] = []
    started_at = time.monotonic()
    deadline = started_at + window

    async def call(coro: Coroutine[Any, Any, T]) -> T:
        started = time.monotonic()
        answer = await coro
        done.append((started, time.monotonic()))
        return answer

    async def lane(n: int) -> None:
        unit = 0
        while time.monotonic() < deadline:
            unit += 1
            page = await call(client.create_page(parent_id=parent, name=f"L{lanes} lane {n} unit {unit}"))
            # The description's draft then takes the blocks too (consecutive writes share one draft), as in apply.
            updated = await call(client.update_page(page.id, description=f"lane {n} unit {unit}"))
            for b in range(blocks):
                await call(client.add_block(page.id, "Main", type="content", value={"content": f"<p>{b}</p>"}))
            draft = updated.version.id if updated.version is not None else None
            if draft is None:
                raise SystemExit(f"the update of page {page.id} answered no version")
            await call(client.approve_version(page.id, draft))

    await asyncio.gather(*(lane(n) for n in range(lanes)))
    inside = [e - s for s, e in done if e <= deadline]
    return {
        "rps": len(inside) / window,
        "median_ms": statistics.median(inside) * 1000,
        "p90_ms": statistics.quantiles(inside, n=10)[-1] * 1000,
        "requests": float(len(done)),
    }


class Sweep(dict[int, dict[str, float]]):
    """One pass over the fixed concurrencies: lanes -> req/s, median and p90 ms; with the load average at its end."""

    load: float = 0.0


async def saturation(site: dict[str, str], parent: int, blocks: int, window: float) -> Sweep:
    """The apply's request mix with 1, 2, 4, 8 lanes; req/s inside the window and the median round trip."""
    result = Sweep()
    async with client_for(site, max(LEVELS)) as client:
        await client.access_token()
        for lanes in LEVELS:
            result[lanes] = await one_level(client, parent, blocks, lanes, window)
    result.load = os.getloadavg()[0]
    return result


def best_of(sweeps: list[Sweep]) -> float:
    """The saturation around an apply: the best concurrency's mean req/s over the sweeps before and after it."""
    if not sweeps:
        return 0.0
    return max(statistics.mean(s[lanes]["rps"] for s in sweeps) for lanes in LEVELS)


# -- 2. apply -----------------------------------------------------------------------------------------------------


def write_content(
    root: Path, base_url: str, section: str, pages: int, blocks: int, concurrency: int | None, debounce: float
) -> None:
    """PAGES pages of BLOCKS content blocks under one new top-level page ``section``."""
    (root / "pages" / section).mkdir(parents=True)
    (root / "cmssync.yaml").write_text(
        f"site:\n  url: {base_url}\nauth:\n  grant: password\n  username: admin\npublish: approve\n"
        f"state: {root.parent / 'state' / 'state.json'}\n"
        f"concurrency: {'auto' if concurrency is None else concurrency}\n"
        f"daemon: {{debounce: {debounce}s, interval: null, health: '127.0.0.1:0'}}\n",
        encoding="utf-8",
    )
    (root / "pages" / f"{section}.yaml").write_text(f"name: Apply bench {section}\n", encoding="utf-8")
    for p in range(1, pages + 1):
        body = "".join(
            f"    - type: content\n      value:\n        content: <p>Page {p}, block {b}.</p>\n"
            for b in range(1, blocks + 1)
        )
        (root / "pages" / section / f"page-{p}.yaml").write_text(
            f"name: Page {p}\nareas:\n  Main:\n{body}", encoding="utf-8"
        )


@dataclass
class ApplyResult:
    name: str
    seconds: float
    requests: int
    log_requests: int
    write_rps: float
    limiter: dict[str, object]
    mean_limit: float
    in_flight: float
    routes: dict[str, int]
    segments: list[str]

    @property
    def rps(self) -> float:
        return self.requests / self.seconds


async def apply_once(root: Path, name: str, log: RequestLog) -> ApplyResult:
    mark = log.mark()
    started = time.monotonic()
    workspace = TracedWorkspace.wrap(open_workspace(root))
    report = await apply_site(workspace, ApplyRequest())
    seconds = time.monotonic() - started
    if report.failed:
        raise SystemExit(f"apply {name} failed: {report.counts()} {report.problems[:3]}")
    lines = log.since(mark)
    log_writes = [line for line in parse_log(lines) if line.api and line.method in ("POST", "PUT")]
    write_span = (
        max(line.ended for line in log_writes) - min(line.started for line in log_writes) if log_writes else 0.0
    )
    limiter = workspace.clients[0].transport.limiter.describe() if workspace.clients else {}
    return ApplyResult(
        name=name,
        seconds=seconds,
        requests=report.requests,
        log_requests=sum(1 for line in parse_log(lines) if line.api),
        write_rps=len(log_writes) / write_span if write_span else 0.0,
        limiter=limiter,
        mean_limit=workspace.trace.mean_limit(),
        in_flight=workspace.trace.in_flight_mean(),
        routes=dict(routes([line.replace("/ccm/api/1.0/", "/") for line in lines])),
        segments=workspace.trace.segments(),
    )


# -- 3. daemon ------------------------------------------------------------------------------------------------------


class Daemon:
    """``cmssync daemon`` as a process; its JSON log lines with the monotonic time they were read."""

    def __init__(self, root: Path, env: dict[str, str]) -> None:
        command = [sys.executable, "-m", "cmssync", "--log-format", "json", "daemon", str(root)]
        self.process = subprocess.Popen(command, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
        self.lines: list[tuple[float, dict[str, Any]]] = []
        self.changed = threading.Condition()
        threading.Thread(target=self._read, daemon=True).start()

    def _read(self) -> None:
        assert self.process.stderr is not None
        for text in self.process.stderr:
            try:
                line = json.loads(text)
            except ValueError:
                line = {"event": text.strip()}
            with self.changed:
                self.lines.append((time.monotonic(), line))
                self.changed.notify_all()

    def mark(self) -> int:
        with self.changed:
            return len(self.lines)

    def find(self, event: str, after: int, **fields: Any) -> tuple[float, dict[str, Any]] | None:
        with self.changed:
            for seen, line in self.lines[after:]:
                if line.get("event") == event and all(line.get(k) == v for k, v in fields.items()):
                    return seen, line
        return None

    def wait_for(
        self, event: str, after: int = 0, timeout: float = 120.0, **fields: Any
    ) -> tuple[float, dict[str, Any]]:
        with self.changed:
            self.changed.wait_for(
                lambda: self.find(event, after, **fields) is not None or self.process.poll() is not None, timeout
            )
        found = self.find(event, after, **fields)
        if found is None:
            raise SystemExit(f"daemon: no {event!r} (exit {self.process.poll()}); last lines: {self.lines[-5:]}")
        return found

    def stop(self) -> int:
        if self.process.poll() is None:
            self.process.send_signal(signal.SIGTERM)
            try:
                return self.process.wait(30)
            except subprocess.TimeoutExpired:
                self.process.kill()
        return self.process.wait()


@dataclass
class Edit:
    """One measured edit; times in seconds, from the save unless said otherwise."""

    debounce_end: float
    """Save to the daemon's ``run started`` (the end of the quiet window)."""
    run_finished: float
    """Save to the daemon's ``run finished``."""
    approved: float
    """Debounce end to the end of the approval (``PUT /page_versions``, the site's log): live from then on."""
    visible: float
    """Debounce end to the end of the first public GET showing the new text."""
    first_showing_started: float
    """Debounce end to the start of that GET."""
    polls: int
    get_ms: float
    """Median time of the public GETs (a full render of the page)."""
    daemon_requests: int
    log_requests: int
    timeline: list[tuple[str, float, float]]
    """The run's API requests from the site's log: route, start and end from the debounce end."""
    run_s: float


@dataclass
class Poll:
    started: float
    ended: float
    shows: bool


def wait_visible(url: str, text: str, failed: Callable[[], dict[str, Any] | None], timeout: float = 30.0) -> list[Poll]:
    """GET the public page one request at a time until its HTML holds ``text``; every GET (monotonic times).
    ``failed`` says whether the daemon's run failed (then the text will never come)."""
    polls: list[Poll] = []
    with httpx.Client(timeout=30, headers={"Cache-Control": "no-cache", "Pragma": "no-cache"}) as http:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            started = time.monotonic()
            response = http.get(url, params={"cmssync-bench": uuid.uuid4().hex[:8]})
            polls.append(Poll(started, time.monotonic(), text in response.text))
            if polls[-1].shows:
                return polls
            if (failure := failed()) is not None:
                raise SystemExit(f"the daemon's run failed: {failure}")
    raise SystemExit(f"{url} did not show {text!r} within {timeout} s")


def route_of(line: LogLine) -> str:
    """``METHOD /route`` with ids as ``{id}`` and the API prefix dropped."""
    return next(iter(routes([f"0 {line.method} 200 0 {line.uri.replace('/ccm/api/1.0', '')}"])))


def run_failure(daemon: Daemon, mark: int) -> dict[str, Any] | None:
    found = daemon.find("run finished", mark, trigger="file")
    return found[1] if found is not None and found[1].get("result") != "success" else None


def edit_page(path: Path, old: str, new: str) -> None:
    """An editor's save: a temp file renamed over the page file."""
    temp = path.with_name(f".{path.name}.tmp")
    temp.write_text(path.read_text(encoding="utf-8").replace(old, new, 1), encoding="utf-8")
    os.replace(temp, path)


def daemon_edits(root: Path, section: str, base: str, edits: int, env: dict[str, str], log: RequestLog) -> list[Edit]:
    daemon = Daemon(root, env)
    results: list[Edit] = []
    try:
        daemon.wait_for("run finished", trigger="startup")
        for n in range(edits):
            page = 1 + (n * 37) % max(1, len(list((root / "pages" / section).glob("page-*.yaml"))))
            path = root / "pages" / section / f"page-{page}.yaml"
            marker = f"Edit {n} {uuid.uuid4().hex[:6]}"
            time.sleep(0.5)
            mark, log_mark = daemon.mark(), log.mark()
            saved, saved_epoch = time.monotonic(), time.time()
            edit_page(path, f"<p>Page {page}, block 2.</p>", f"<p>{marker} page {page}, block 2.</p>")
            started_at, _ = daemon.wait_for("run started", after=mark, trigger="file")
            polls = wait_visible(f"{base}/{section}/page-{page}", marker, functools.partial(run_failure, daemon, mark))
            finished_at, finished = daemon.wait_for("run finished", after=mark, trigger="file")
            if finished.get("result") != "success":
                raise SystemExit(f"daemon run failed: {finished}")
            zero = saved_epoch + (started_at - saved)  # the debounce's end, in the log's clock
            lines = [line for line in parse_log(log.since(log_mark)) if line.api]
            timeline = [(route_of(line), line.started - zero, line.ended - zero) for line in lines]
            approvals = [end for route, _, end in timeline if route.startswith("PUT /page_versions")]
            results.append(
                Edit(
                    debounce_end=started_at - saved,
                    run_finished=finished_at - saved,
                    approved=approvals[0] if approvals else float("nan"),
                    visible=polls[-1].ended - started_at,
                    first_showing_started=polls[-1].started - started_at,
                    polls=len(polls),
                    get_ms=statistics.median(p.ended - p.started for p in polls) * 1000,
                    daemon_requests=int(finished.get("requests", -1)),
                    log_requests=len(lines),
                    timeline=timeline,
                    run_s=float(finished.get("duration_s", 0.0)),
                )
            )
            # Put the block back (another run, not measured) so the content ends as it began.
            mark = daemon.mark()
            edit_page(path, f"<p>{marker} page {page}, block 2.</p>", f"<p>Page {page}, block 2.</p>")
            daemon.wait_for("run finished", after=mark, trigger="file")
    finally:
        daemon.stop()
    return results


# -- cleanup and main -------------------------------------------------------------------------------------------------


async def trash_parents(site: dict[str, str], names: list[str]) -> list[str]:
    """Move every top-level page named like this run's parents to the trash (their subtrees go with them)."""
    done = []
    async with client_for(site, 2) as client:
        for child in await client.page_children(1):
            if (child.path or "").strip("/") in names:
                await client.delete_page(child.id)
                done.append(child.path or "")
    return done


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--env", type=Path, default=DEFAULT_ENV)
    parser.add_argument("--pages", type=int, default=100)
    parser.add_argument("--blocks", type=int, default=3)
    parser.add_argument("--fixed", default="2,8", help="Fixed concurrencies to apply with besides auto ('' for none).")
    parser.add_argument("--edits", type=int, default=5)
    parser.add_argument("--debounce", type=float, default=0.5)
    parser.add_argument("--window", type=float, default=3.0, help="Seconds per saturation level and sweep.")
    parser.add_argument("--skip", action="append", default=[], choices=["saturation", "apply", "daemon"])
    parser.add_argument("--keep", action="store_true", help="Leave the pages on the site and the work directory.")
    options = parser.parse_args(argv)
    if not options.env.exists():
        print(f"no real site: {options.env} does not exist (see ../shared/realsite/README.md)", file=sys.stderr)
        return 2
    site = read_env(options.env)
    log = RequestLog(Path(site.get("CONCRETE_REQUEST_LOG", "/tmp/concrete-requests.log")))
    base = site["CMSSYNC_URL"].rstrip("/")
    os.environ.update({k: v for k, v in site.items() if k.startswith("CMSSYNC_")})
    os.environ.pop("CMSSYNC_CONCURRENCY", None)
    env = {**os.environ, "NO_COLOR": "1", "PYTHONPATH": str(REPO)}
    configure_logging(level=logging.WARNING)
    stamp = time.strftime("%H%M%S")
    fixed = [int(c) for c in options.fixed.split(",") if c.strip()]
    variants: list[tuple[str, int | None]] = [("auto", None), *((f"c{c}", c) for c in fixed)]
    parents = [f"{PREFIX}-{stamp}-probe", *(f"{PREFIX}-{stamp}-{name}" for name, _ in variants)]
    work = Path(tempfile.mkdtemp(prefix="cmssync-realsite-apply-bench-"))
    load = os.getloadavg()[0]
    print(
        f"real site {base}; {options.pages} pages x {options.blocks} blocks; parents {PREFIX}-{stamp}-*; "
        f"load {load:.1f}"
    )
    try:
        sweeps: list[Sweep] = []
        probe: list[int] = []

        def sweep() -> None:
            if "saturation" in options.skip:
                return

            async def measure() -> Sweep:
                if not probe:
                    async with client_for(site, 2) as client:
                        probe.append(await make_parent(client, parents[0]))
                return await saturation(site, probe[0], options.blocks, options.window)

            sweeps.append(asyncio.run(measure()))

        applied: list[ApplyResult] = []
        brackets: list[float] = []
        sweep()
        if "apply" not in options.skip:
            for name, concurrency in variants:
                root = work / name / "site"
                write_content(
                    root, base, f"{PREFIX}-{stamp}-{name}", options.pages, options.blocks, concurrency, options.debounce
                )
                applied.append(asyncio.run(apply_once(root, name, log)))
                sweep()
                brackets.append(best_of(sweeps[-2:]))
        if sweeps:
            print(
                f"\nsaturation (the apply's mix: create, update, {options.blocks} blocks, approve), fixed lanes, "
                f"{options.window:.0f} s each; {len(sweeps)} sweeps, one before and one after each apply:"
            )
            rows = []
            for lanes in LEVELS:
                rps = [s[lanes]["rps"] for s in sweeps]
                median = statistics.median(s[lanes]["median_ms"] for s in sweeps)
                rows.append([lanes, f"{statistics.mean(rps):.1f}", " ".join(f"{r:.1f}" for r in rps), f"{median:.0f}"])
            print(table(["concurrency", "req/s (mean)", "req/s per sweep", "median ms"], rows))
            print(f"  load average at each sweep: {' '.join(f'{s.load:.1f}' for s in sweeps)}")
        if applied:
            rows = []
            for a, best in zip(applied, brackets or [0.0] * len(applied), strict=True):
                share = f"{a.rps / best * 100:.0f}%" if best else "-"
                write_share = f"{a.write_rps / best * 100:.0f}%" if best else "-"
                rows.append(
                    [
                        a.name,
                        f"{a.seconds:.1f}",
                        f"{a.requests} / {a.log_requests}",
                        f"{best:.1f}" if best else "-",
                        f"{a.rps:.1f} ({share})",
                        f"{a.write_rps:.1f} ({write_share})",
                        f"{a.mean_limit:.1f} / {a.limiter.get('highest', a.limiter.get('limit'))} / "
                        f"{a.limiter.get('limit')}",
                        f"{a.in_flight:.1f}",
                    ]
                )
            print(f"\napply of {options.pages} pages x {options.blocks} blocks (+ the parent), in-process:")
            heads = [
                "concurrency",
                "s",
                "requests (client / log)",
                "saturation around it",
                "req/s (of sat.)",
                "write phase req/s",
                "limit mean / max / end",
                "in flight",
            ]
            print(table(heads, rows))
            for a in applied:
                if a.name == "auto":
                    print(f"  auto limiter: {a.limiter}")
                    print(f"  auto by 100 requests (limit@req/s,median): {' '.join(a.segments)}")
                    top = sorted(a.routes.items(), key=lambda item: -item[1])[:8]
                    print("  routes: " + ", ".join(f"{count} {route}" for route, count in top))
                    best = brackets[applied.index(a)] if brackets else 0.0
                    if best:
                        ok = a.rps >= 0.9 * best
                        print(
                            f"target: auto apply within 10% of the saturation measured around it ({best:.1f}/s): "
                            f"{'met' if ok else 'MISSED'} ({a.rps / best * 100:.0f}% whole run, "
                            f"{a.write_rps / best * 100:.0f}% write phase)"
                        )
        if "daemon" not in options.skip and options.edits > 0 and applied:
            root = work / "auto" / "site"
            edits = daemon_edits(root, f"{PREFIX}-{stamp}-auto", base, options.edits, env, log)
            rows = [
                [
                    n + 1,
                    f"{e.debounce_end:.2f}",
                    f"{e.run_finished - e.debounce_end:.2f}",
                    f"{e.approved:.2f}",
                    f"{e.first_showing_started:.2f} / {e.visible:.2f}",
                    f"{e.polls} x {e.get_ms:.0f} ms",
                    f"{e.daemon_requests} / {e.log_requests}",
                ]
                for n, e in enumerate(edits)
            ]
            print(f"\ndaemon one-block edits (debounce {options.debounce} s); seconds after the debounce's end:")
            heads = [
                "edit",
                "save->debounce end",
                "run finished",
                "approved (site log)",
                "first GET showing it: start / end",
                "public GETs",
                "requests (daemon / log)",
            ]
            print(table(heads, rows))
            for n, e in enumerate(edits):
                steps = ", ".join(f"{route} {start:+.2f}..{end:.2f}" for route, start, end in e.timeline)
                print(f"  edit {n + 1}: {steps}")
            approved = [e.approved for e in edits]
            shown = [e.visible for e in edits]
            verdict = "met" if max(approved) <= 1 else "MISSED"
            print(
                f"target: live <= 1 s after the debounce: {verdict} (approved: median {statistics.median(approved):.2f}"
                f" s, max {max(approved):.2f} s; a public GET showing it ended: median {statistics.median(shown):.2f}"
                f" s, max {max(shown):.2f} s)"
            )
        return 0
    finally:
        if not options.keep:
            trashed = asyncio.run(trash_parents(site, parents))
            print(f"\ncleanup: moved {len(trashed)} parent pages to the trash: {', '.join(trashed)}")
            shutil.rmtree(work, ignore_errors=True)
        else:
            print(f"\nkept: {work} and the pages under {PREFIX}-{stamp}-*")


if __name__ == "__main__":
    sys.exit(main())
