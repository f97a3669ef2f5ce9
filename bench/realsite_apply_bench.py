"""Opt-in benchmark against a real Concrete 9.3.1 site: apply throughput against the site's saturation, and the
daemon's save-to-visible latency (issue 17's last two real-site targets).

    python -m bench.realsite_apply_bench [--env /tmp/concrete-site.env] [--pages 100] [--blocks 3]
                                         [--fixed 2,8] [--edits 5] [--debounce 0.5] [--window 3]
                                         [--skip saturation|apply|daemon] [--keep]

Needs the site of ``../shared/realsite/`` and its env file (exit 2 without it). It never resets the site: every page
it makes lives under parents named ``cmssync-apply-bench-<stamp>-…``, which it moves to the trash at the end
(``DELETE /pages/{id}`` of each parent: the subtree goes with it), so it can run while someone else uses other pages.

1. **Saturation**, measured in the same run: cmssync's own client (``ConcreteClient``, password grant) runs the
   apply's request mix — one page made the way ``apply`` makes a page with BLOCKS blocks: ``POST /pages``, ``PUT
   /pages/{id}``, BLOCKS × ``POST /pages/{id}/Main``, ``PUT /page_versions/{id}/{v}`` — under a scratch parent, with
   a fixed number of lanes (1, 2, 4, 8), each lane one request at a time, for ``--window`` seconds each. Throughput
   counts the requests that finished inside the window; latency is each call's round trip. One sweep runs before the
   first apply and one after each, because on a shared 2-core machine the site's capacity moves by ±30% within
   minutes: an apply is compared with the saturation *around it* (the best concurrency's mean over the sweeps
   before and after it).
2. **Apply**: PAGES pages × BLOCKS content blocks under a new parent, applied in-process (``apply_site``, as ``cmssync
   apply --yes`` does, without the interpreter start) with the default ``concurrency: auto``, then the same content
   under other parents with each ``--fixed`` concurrency. For each: wall time, requests (the client's count, and the
   API lines the site's request log ``CONCRETE_REQUEST_LOG`` gained meanwhile: more means someone else used the site
   at the same time), req/s over the whole run and over its write phase (first write's start to last write's end,
   from the log), against the saturation around it; the limit it ran at (time-weighted mean, highest, at the end),
   the mean requests in flight, and for ``auto`` the limiter's state and the run in slices of 100 requests.
3. **Daemon**: ``cmssync daemon`` (a real process, JSON log, ``daemon.debounce`` = ``--debounce``) watches the
   ``auto`` content; EDITS times one block of one page is changed (an editor's save: temp file renamed over the
   page file). Times, from the debounce's end (the daemon's ``run started`` line): the daemon's ``run finished``;
   the end of the approval (``PUT /page_versions``, from the site's log, whose lines hold each request's start time
   and duration) — from then on the page is live; and the first public GET of the page (its URL, no token, a
   unique query string and ``Cache-Control: no-cache``, so no full-page cache can answer — the site's
   ``concrete.cache.pages`` is off anyway) whose HTML holds the new text. The public page is polled one GET at a
   time from the debounce's end; each GET is a full render of the page (0.3 s on a quiet machine, 1–4 s under
   load), so that GET ends up to two renders after the approval. Requests per incremental run: the daemon's own
   count (exact), and the API lines of the request log that started inside the run (someone else's included), with
   the run's timeline.

Targets (issue 17): the ``auto`` apply within 10% of the saturation throughput; a saved one-block edit visible on
the public page <= 1 s after the debounce (judged on the approval: a GET started then shows it, one render later).
"""

from __future__ import annotations

import argparse
import asyncio
import logging
import os
import shutil
import statistics
import sys
import tempfile
import time
from collections.abc import AsyncIterator, Coroutine
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TypeVar

from bench.common import table
from bench.realsite_bench import read_env
from bench.realsite_edits import RequestLog, daemon_edits, parse_log, print_edits, routes
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
        f"daemon: {{debounce: {debounce}s, interval: null, feed: null, health: '127.0.0.1:0'}}\n",
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
        routes=dict(routes(lines)),
        segments=workspace.trace.segments(),
    )


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
            print_edits(edits, options.debounce)
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
