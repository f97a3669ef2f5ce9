"""One daemon run: load the content afresh, apply it (all of it, or a scope), and record what happened.

Every run opens the workspace again, so it sees the content as it is on disk now. Invalid content fails the run
before any request: its ``file:line:col`` problems go to the log and to ``/readyz``, nothing is written, and the
next save that fixes it recovers. A run never raises for a failure of the site or the content; it reports a result
to the reconciler (which retries with backoff), the metrics, the readiness and the log (one ``run finished`` line
with the run id, trigger, duration, outcome counts and requests; file-triggered runs add the save-to-applied
latency).

In report mode (``daemon.mode: report``, or while suspended: see :mod:`.modes`) a run observes and plans the same
scope and writes nothing; its "pending" are the planned changes. ``on_finished`` hands each finished run to the
notifications (:mod:`.events`); it must not block.

The daemon's site is described once (:class:`DaemonSite`): every run's workspace and the drift feed's client are
made from it, each client with the shutdown :class:`~.gate.RequestGate` in front of its transport; a run keeps its
clients, so its request counters can be read after ``apply`` closed them.

The default site (``GET /sites/default``: the home page's id) is read by every full run and kept
(:class:`SiteMemo`); an incremental run takes the kept answer instead of asking again, for the same site address.
Every run's observation starts with that read and nothing else can go out before it, so on a real site it is one
whole round trip (0.07–0.3 s by load) of a one-block edit's four. The home page's id does not change while a
site runs; a full run (startup, schedule, SIGHUP) reads it afresh, and a failed full run forgets it.
"""

from __future__ import annotations

import asyncio
import time
from collections import Counter
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, Literal

import structlog

from cmssync.api.client import ConcreteClient
from cmssync.api.models import Site
from cmssync.api.stats import RequestKey
from cmssync.config import Settings
from cmssync.content.yamlsource import ParseCache
from cmssync.daemon.gate import RequestGate
from cmssync.daemon.health import Readiness
from cmssync.daemon.metrics import DaemonMetrics
from cmssync.daemon.modes import Mode, report_only
from cmssync.daemon.reconciler import PERMANENT, Batch
from cmssync.daemon.run_reports import save_run_report
from cmssync.errors import CmsSyncError, ContentError, printable
from cmssync.plan.request import PlanRequest
from cmssync.plan.scope_model import Scope
from cmssync.sync.applying import ApplyReport, ApplyRequest, apply_site
from cmssync.sync.kinds import Registry, discover
from cmssync.sync.workspace import Workspace, open_workspace

log = structlog.get_logger("cmssync.daemon")

MAX_REASONS = 20
"""Failed actions listed on /readyz and in the log, at most."""


class SiteMemo:
    """The default site as the last full run read it, per site address and ``includes`` (see the module
    docstring)."""

    def __init__(self) -> None:
        self._sites: dict[tuple[str, tuple[str, ...]], Site] = {}

    def get(self, api_url: str, includes: tuple[str, ...]) -> Site | None:
        return self._sites.get((api_url, includes))

    def keep(self, api_url: str, includes: tuple[str, ...], site: Site) -> None:
        self._sites[(api_url, includes)] = site

    def forget(self) -> None:
        self._sites.clear()


class DaemonClient(ConcreteClient):
    """The API client of a daemon run: the default site comes from the :class:`SiteMemo` in incremental runs."""

    memo: SiteMemo | None = None
    reuse_site: bool = False
    """True in incremental runs: take the kept default site if there is one."""

    async def default_site(self, *, includes: tuple[str, ...] = ("locales",)) -> Site:
        memo, key = self.memo, tuple(includes)
        if memo is None:
            return await super().default_site(includes=includes)
        if self.reuse_site and (kept := memo.get(self.transport.api_url, key)) is not None:
            return kept
        site = await super().default_site(includes=includes)
        memo.keep(self.transport.api_url, key, site)
        return site


@dataclass
class DaemonSite:
    """One site as the daemon reaches it, described once: its content directory and the settings' overrides, the
    kinds it manages, the shutdown gate every request goes through, and what is kept between runs (the default
    site, the parsed YAML). Every run's workspace (:meth:`open`) and the drift feed's client (:meth:`client`) are
    made from it."""

    directory: Path
    overrides: Mapping[str, Any] | None
    gate: RequestGate
    kinds: Registry = field(default_factory=discover)
    site_memo: SiteMemo = field(default_factory=SiteMemo)
    """The default site as the last full run read it (incremental runs reuse it)."""
    parse_cache: ParseCache = field(default_factory=ParseCache)
    """Parsed YAML kept between runs: a one-file edit re-parses one file, not the whole content."""

    def client(self, settings: Settings, *, reuse_site: bool = False) -> DaemonClient:
        """A client through the gate (``reuse_site``: it takes the kept default site)."""
        transport = self.gate.transport(settings.max_connections)
        client = DaemonClient.from_settings(settings, base_dir=self.directory, transport=transport)
        assert isinstance(client, DaemonClient)  # from_settings builds the class it is called on
        client.memo, client.reuse_site = self.site_memo, reuse_site
        return client

    def open(self, *, reuse_site: bool) -> tuple[Workspace, list[ConcreteClient]]:
        """A run's workspace, the content loaded afresh, and the clients it makes (kept for their counters)."""
        clients: list[ConcreteClient] = []

        def connect(settings: Settings) -> ConcreteClient:
            clients.append(self.client(settings, reuse_site=reuse_site))
            return clients[-1]

        workspace = open_workspace(
            self.directory,
            overrides=self.overrides,
            any_site=self.overrides is not None,
            parse_cache=self.parse_cache,
            kinds=self.kinds,
            connect=connect,
        )
        return workspace, clients


def request_counts(clients: list[ConcreteClient]) -> dict[RequestKey, int]:
    counts: Counter[RequestKey] = Counter()
    for client in clients:
        counts.update(client.stats.snapshot())
    return dict(counts)


@dataclass
class RunRecord:
    """What one run did, for the log, the metrics and /readyz."""

    result: str = "failure"
    """``success``, ``failure`` or ``interrupted`` (stopped by SIGTERM)."""
    reason: str = ""
    problems: list[str] = field(default_factory=list)
    report: ApplyReport | None = None
    requests: dict[RequestKey, int] = field(default_factory=dict)
    mode: Mode = "enforce"
    """``report``: the run only observed and planned."""
    permanent: bool = False
    """The run failed for a reason retrying cannot fix (``CmsSyncError.temporary`` is false): no backoff retry."""
    started: float | None = None
    """When the run began (``time.monotonic``): the drift feed's baseline (``DriftFeed.after_run``)."""


class SyncRunner:
    """The reconciler's run function for a content directory."""

    def __init__(
        self,
        site: DaemonSite,
        *,
        metrics: DaemonMetrics,
        readiness: Readiness,
        mode: Callable[[], Mode] = lambda: "enforce",
        on_finished: Callable[[Batch, RunRecord], None] = lambda batch, record: None,
    ) -> None:
        self.site = site
        self.mode = mode
        """Asked as each run starts: the mode it takes."""
        self.on_finished = on_finished
        self.metrics = metrics
        self.readiness = readiness
        self.gate = site.gate

    async def __call__(self, batch: Batch) -> bool | Literal["permanent"]:
        started = time.monotonic()
        log.info("run started", triggers=list(batch.triggers), scope=describe_scope(batch.scope))
        try:
            record = await self._reconcile(batch)
        except Exception as exc:
            # A bug, not a site failure: the run still ends as a failure wherever runs are watched (/readyz,
            # metrics, the run log, notifications through ``on_finished``); the reconciler logs the traceback.
            crashed = RunRecord(mode=self.mode(), reason=printable(f"run crashed: {type(exc).__name__}: {exc}")[:500])
            crashed.result = "interrupted" if self.gate.closed else "failure"
            self._finish(batch, crashed, started)
            raise
        self._finish(batch, record, started)
        if record.result == "success":
            return True
        return PERMANENT if record.permanent else False

    async def _reconcile(self, batch: Batch) -> RunRecord:
        record = RunRecord(mode=self.mode())
        try:
            workspace, clients = await asyncio.to_thread(self.site.open, reuse_site=not batch.full)
        except ContentError as exc:
            record.reason, record.problems = "invalid content", [str(p) for p in exc.problems]
            record.permanent = True  # a save that fixes it triggers the next run
            return record
        except CmsSyncError as exc:
            record.reason, record.permanent = str(exc), not exc.temporary
            return record
        try:
            # Someone else's draft is skipped (never written into nor approved) unless the settings say otherwise.
            request = PlanRequest(scope=batch.scope, foreign_draft_default="skip")
            if record.mode == "report":
                record.report = await report_only(workspace, request)
            else:
                record.report = await apply_site(workspace, ApplyRequest(request))
        except ContentError as exc:
            record.reason, record.problems = "invalid content", [str(p) for p in exc.problems]
            record.permanent = True
        except CmsSyncError as exc:
            record.reason, record.permanent = str(exc), not exc.temporary
        finally:
            record.requests = request_counts(clients)
        report = record.report
        if report is not None and report.plan.writes and workspace.settings.daemon.reports is not None:
            await asyncio.to_thread(save_run_report, workspace, report.plan, batch.run_id)
        if report is not None:
            _judge(record, report)
        if record.result != "success" and batch.full:
            self.site.site_memo.forget()  # the site may be another one now: the next run asks again
        if record.result != "success" and self.gate.closed:
            record.result = "interrupted"
        return record

    def _finish(self, batch: Batch, record: RunRecord, started: float) -> None:
        record.started = started
        ended = time.monotonic()
        duration = ended - started
        latency = ended - batch.first_change_at if batch.first_change_at is not None else None
        report = record.report
        finished_at = time.time()
        _log_run(batch, record, duration, latency)
        self.metrics.record_run(
            trigger=batch.trigger,
            result=record.result,
            duration=duration,
            requests=record.requests,
            finished_at=finished_at,
            latency=latency if record.result == "success" else None,
            pending=None if report is None else _pending(record.mode, report),
        )
        if report is not None:
            self.metrics.record_drift(_drifted(report), batch.scope, report.plan)
        run = {
            "run_id": batch.run_id,
            "trigger": batch.trigger,
            "result": record.result,
            "finished_at": datetime.fromtimestamp(finished_at, UTC).isoformat(timespec="seconds"),
        }
        if record.result == "success":
            self.readiness.ready(run)
        else:
            self.readiness.failing(record.reason, record.problems, run)
        self.on_finished(batch, record)


def _judge(record: RunRecord, report: ApplyReport) -> None:
    """The run's result from its report: success, or the failure with its reasons."""
    failed = [o.line() for o in report.outcomes if o.status != "ok"]
    unreadable = [f"{held.kind} {held.key}: {held.message}" for held in report.plan.unreadable]
    if report.failed:
        record.reason = _summary(report)
        record.problems = [*report.problems, *failed, *unreadable][:MAX_REASONS]
    elif unreadable:
        # Objects that exist but cannot be read were held with what needs them, and the rest applied: a failure to
        # report (log, /readyz), not one to retry the whole site for with backoff.
        record.reason = f"{len(unreadable)} object(s) held: cannot be read, or need one that cannot"
        record.problems, record.permanent = unreadable[:MAX_REASONS], True
    else:
        record.result = "success"


def _log_run(batch: Batch, record: RunRecord, duration: float, latency: float | None) -> None:
    """One line per action, then the ``run finished`` line (with the save-to-applied latency for file changes)."""
    report = record.report
    outcomes: Counter[str] = Counter()
    if report is not None:
        for outcome in report.outcomes:
            outcomes[outcome.status] += 1
            action = outcome.action
            about = {"kind": action.kind, "key": action.key, "op": action.op, "drift": action.drift}
            if outcome.status == "ok":
                log.info("action applied", **about, message=outcome.message)
            else:
                log.warning(f"action {outcome.status}", **about, message=outcome.message)
    summary: dict[str, Any] = {
        "result": record.result,
        "mode": record.mode,
        "full": batch.full,
        "triggers": list(batch.triggers),
        "duration_s": round(duration, 3),
        "outcomes": {status: outcomes[status] for status in ("ok", "failed", "skipped")},
        "requests": sum(record.requests.values()),
        "requests_by_method": dict(_by_method(record.requests)),
    }
    if report is not None and (drift := _drift(report)):
        summary["drift"] = drift
    if report is not None and report.plan.held:
        # Nothing is skipped silently: every held object (a foreign draft under skip included) is a warning line.
        for held in report.plan.held:
            log.warning("object held", kind=held.kind, key=held.key, reason=held.reason, message=held.message)
        summary["held"] = len(report.plan.held)
    if latency is not None:
        summary["save_to_applied_s"] = round(latency, 3)
    if record.result == "success":
        log.info("run finished", **summary)
    else:
        log.error("run finished", **summary, reason=record.reason, problems=record.problems)


def _summary(report: ApplyReport) -> str:
    counts = report.counts()
    return f"apply failed: {counts['ok']} succeeded, {counts['failed']} failed, {counts['skipped']} skipped"


def _pending(mode: Mode, report: ApplyReport) -> int:
    """Changes the site still lacks: every planned action in report mode, else the ones not done."""
    if mode == "report":
        return len(report.plan.actions)
    return sum(1 for o in report.outcomes if o.status != "ok")


def _drifted(report: ApplyReport) -> dict[str, str]:
    """Object id -> kind of the objects changed outside cmssync: those the run overwrote (``drift: revert``,
    flagged actions) and those the drift policy keeps on the site (``Plan.site_changes``)."""
    drifted = {action.id: action.kind for action in report.plan.actions if action.drift}
    return drifted | {change.id: change.kind for change in report.plan.site_changes}


def _drift(report: ApplyReport) -> dict[str, int]:
    """The objects changed outside cmssync, by kind."""
    return dict(Counter(_drifted(report).values()))


def _by_method(requests: Mapping[RequestKey, int]) -> Counter[str]:
    totals: Counter[str] = Counter()
    for key, count in requests.items():
        totals[key.method] += count
    return totals


def describe_scope(scope: Scope | None) -> Any:
    """A log-friendly view of a scope: ``"full"`` or the objects it names."""
    if scope is None:
        return "full"
    described: dict[str, Any] = {}
    for name in ("pages", "files", "users"):
        values = getattr(scope, name)
        if values:
            described[name] = sorted(values)
    if scope.all_users:
        described["users"] = "all"
    if scope.kinds:
        described["kinds"] = sorted(scope.kinds)
    return described
