"""``cmssync daemon``: wire the reconciler to its triggers and the health server, and run until SIGTERM.

Replicas: with a state backend that elects (PostgreSQL), a daemon first campaigns to lead (:mod:`.leader`); a
standby serves health, metrics and ``/status`` and starts nothing else until it leads. Triggers: a full run at
startup, file changes (incremental runs, debounced), the schedule (``daemon.interval`` and
``daemon.cron``, full runs that undo drift), SIGHUP (a full run) and the drift feed (``daemon.feed``: runs of the
managed objects an editor changed on the site, :mod:`.feed`); under ``drift: propose`` with ``proposals:`` the
site changes a run's plan lists are committed to the proposal branch (:mod:`.proposals`). ``daemon.mode`` or
``--mode`` picks enforce or report; SIGUSR1 / ``POST /suspend`` suspend (runs observe, nothing is written) and
SIGUSR2 / ``POST /resume`` resume with a full run (:mod:`.modes`). Every finished run goes through the
:class:`~.events.EventTracker`, whose events the :class:`~.notify.Notifier` queues for the webhooks without
waiting. SIGTERM and SIGINT stop the daemon: no new trigger is taken, the request gate closes (calls in flight
finish, no new one is sent), the run in progress ends within about one request's latency (its state written after
every completed change, as always), and if it has not ended after ``SHUTDOWN_GRACE`` seconds it is cancelled. Then
the notification queues get a few seconds to drain, the health server stops and the exit code is 0.

The daemon's own settings (watch, debounce, schedule, health address) are read once, at startup; a change to them
in ``cmssync.yaml`` needs a restart. Everything else is read afresh by every run.
"""

from __future__ import annotations

import asyncio
import json
import signal
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from zoneinfo import ZoneInfo

import structlog
from apscheduler.triggers.base import BaseTrigger

from cmssync.config import DaemonSettings, ProposalSettings, load_settings
from cmssync.daemon.events import EventTracker, RunFacts
from cmssync.daemon.feed import DriftFeed, PollResult
from cmssync.daemon.gate import RequestGate
from cmssync.daemon.health import HealthServer, build_app, parse_address
from cmssync.daemon.leader import Leadership, electing
from cmssync.daemon.metrics import DaemonMetrics
from cmssync.daemon.modes import Mode, ModeControl, ModeReadiness, control_routes
from cmssync.daemon.notify import Notifier, Receiver, receivers_from_settings
from cmssync.daemon.payloads import public_site
from cmssync.daemon.proposals import Proposer, in_git_repository, proposed_pages
from cmssync.daemon.reconciler import Backoff, Batch, Reconciler
from cmssync.daemon.runner import DaemonSite, RunRecord, SyncRunner
from cmssync.daemon.schedule import Schedule, cron_trigger, interval_trigger, load_timezone
from cmssync.daemon.watch import ContentWatcher, WatchMode
from cmssync.errors import EXIT_ERROR, EXIT_OK, ConfigError
from cmssync.plan.scope import scope_for_paths
from cmssync.secrets import mask_secrets
from cmssync.state.backends import open_state_backend

log = structlog.get_logger("cmssync.daemon")

SHUTDOWN_GRACE = 5.0
"""Seconds a run may take to end after SIGTERM before it is cancelled."""
RETRY_BACKOFF = Backoff(initial=5.0, maximum=300.0)


@dataclass(frozen=True)
class DaemonConfig:
    """The daemon's settings, checked: a bad cron line or address stops the start with a clear error."""

    watch: WatchMode | None
    debounce: float
    timezone: ZoneInfo
    triggers: dict[str, BaseTrigger]
    host: str
    port: int
    mode: Mode = "enforce"
    receivers: tuple[Receiver, ...] = ()
    site: str = ""
    """The site's address without credentials, for notifications."""
    feed: float | None = None
    """Seconds between polls of the drift feed; None: off."""
    proposals: ProposalSettings | None = None
    """Where editors' approved changes are committed (``proposals:``); None: nowhere."""

    @classmethod
    def from_settings(
        cls,
        settings: DaemonSettings,
        watch: str | None,
        *,
        mode: str | None = None,
        site: str | None = None,
        proposals: ProposalSettings | None = None,
    ) -> DaemonConfig:
        timezone = load_timezone(settings.timezone)
        triggers: dict[str, BaseTrigger] = {}
        if settings.interval is not None:
            triggers["interval"] = interval_trigger(settings.interval, timezone)
        if settings.cron:
            triggers["cron"] = cron_trigger(settings.cron, timezone)
        host, port = parse_address(settings.health)
        return cls(
            watch=watch_mode(watch, settings.watch),
            debounce=settings.debounce,
            timezone=timezone,
            triggers=triggers,
            host=host,
            port=port,
            mode=pick_mode(mode, settings.mode),
            receivers=tuple(receivers_from_settings(settings.notify)),
            site=public_site(site),
            feed=settings.feed,
            proposals=proposals,
        )


def pick_mode(option: str | None, setting: Mode) -> Mode:
    """``--mode`` wins over ``daemon.mode``."""
    chosen = option if option is not None else setting
    if chosen == "enforce":
        return "enforce"
    if chosen == "report":
        return "report"
    raise ConfigError(f"unknown daemon mode {chosen!r}: use enforce or report")


def watch_mode(option: str | None, setting: bool | str) -> WatchMode | None:
    """``--watch`` wins; otherwise ``daemon.watch``: true → inotify, "poll" → poll, false → off (None)."""
    chosen = (
        option if option is not None else ("inotify" if setting is True else "poll" if setting == "poll" else "off")
    )
    if chosen == "inotify":
        return "inotify"
    if chosen == "poll":
        return "poll"
    if chosen == "off":
        return None
    raise ConfigError(f"unknown watch mode {chosen!r}: use inotify, poll or off")


def run_daemon(
    directory: Path, *, overrides: Mapping[str, Any] | None, watch: str | None, mode: str | None = None
) -> int:
    """Run the daemon until SIGTERM or SIGINT; returns the exit code (0 after a clean stop)."""
    if not directory.is_dir():
        raise ConfigError(f"content directory {directory} does not exist")
    settings = load_settings(directory, overrides=overrides)
    config = DaemonConfig.from_settings(
        settings.daemon, watch, mode=mode, site=settings.site.url, proposals=settings.proposals
    )
    leadership = Leadership(electing(open_state_backend(settings, directory)))
    return asyncio.run(Daemon(directory, overrides, config, leadership=leadership).serve())


class Daemon:
    def __init__(
        self,
        directory: Path,
        overrides: Mapping[str, Any] | None,
        config: DaemonConfig,
        *,
        leadership: Leadership | None = None,
    ) -> None:
        self.directory = directory
        self.overrides = overrides
        self.config = config
        self.feed: DriftFeed | None = None
        self.gate = RequestGate(shared_pool=True)
        self.site = DaemonSite(directory, overrides, self.gate)
        """The site, described once: the runs' workspaces and the feed's client are made from it."""
        self.kinds = self.site.kinds
        self.metrics = DaemonMetrics(kinds=self.kinds.table)
        self.control = ModeControl(config.mode, self.metrics, on_resume=lambda: self.reconciler.request("resume"))
        self.leadership = leadership if leadership is not None else Leadership(None)
        self.readiness = ModeReadiness(control=self.control, leadership=self.leadership)
        self.tracker = EventTracker(self.kinds.table)
        self.notifier = Notifier(config.receivers, self.metrics, site=config.site)
        runner = SyncRunner(
            self.site,
            metrics=self.metrics,
            readiness=self.readiness,
            mode=lambda: self.control.effective,
            on_finished=self._on_run_finished,
        )
        self.reconciler = Reconciler(runner, debounce=config.debounce, backoff=RETRY_BACKOFF)
        self.readiness.in_progress = self.reconciler.in_progress
        self.proposer: Proposer | None = Proposer(
            directory, config.proposals, overrides=overrides, publish=self.notifier.publish, mode=config.mode
        )
        self.schedule = Schedule(config.triggers, config.timezone, lambda: self.reconciler.request("schedule"))
        self._stop = asyncio.Event()

    async def serve(self) -> int:
        loop = asyncio.get_running_loop()
        self._install_signals(loop)  # first: a SIGTERM during the start still stops cleanly
        app = build_app(self.readiness, self.metrics)
        for route in control_routes(self.control, self._status):
            app.router.routes.append(route)
        if self.config.proposals is not None and self.proposer is not None:
            await asyncio.to_thread(self.proposer.check)  # not a git repository: refused before anything starts
        elif not await asyncio.to_thread(in_git_repository, self.directory):
            self.proposer = None  # nothing to commit to: drift: adopt writes the content, nothing more
        health = HealthServer(app, self.config.host, self.config.port)
        await health.start()
        if not await self.leadership.campaign(self._stop):  # a standby stopped before it led: nothing else started
            await health.stop()
            self._remove_signals(loop)
            log.info("stopped")
            return EXIT_OK
        self.notifier.start()
        if self.proposer is not None:
            self.proposer.start()
        watcher: ContentWatcher | None = None
        if self.config.watch is not None:
            watcher = ContentWatcher(
                self.directory, self._on_change, loop=loop, mode=self.config.watch, kinds=self.kinds.table
            )
            try:
                await asyncio.to_thread(watcher.start)
            except ConfigError:
                await self.notifier.close(grace=0)
                await health.stop()
                raise
        self.schedule.start()
        feeding = self._start_feed()
        log.info(
            "daemon started",
            directory=str(self.directory),
            mode=self.config.mode,
            notify=[receiver.name for receiver in self.config.receivers],
            watch=self.config.watch or "off",
            debounce_s=self.config.debounce,
            schedule={name: str(trigger) for name, trigger in self.config.triggers.items()},
            feed_s=self.config.feed,
        )
        serving = asyncio.create_task(self.reconciler.serve(), name="cmssync-reconciler")
        self.reconciler.request("startup")
        stopping = asyncio.create_task(self._stop.wait())
        lost = asyncio.create_task(self.leadership.watch(), name="cmssync-leadership")
        await asyncio.wait({serving, stopping, lost}, return_when=asyncio.FIRST_COMPLETED)
        crashed = serving.done() or lost.done()
        lost.cancel()
        if feeding is not None:
            feeding.cancel()
            await asyncio.gather(feeding, return_exceptions=True)
        await self._shut_down(loop, serving, stopping, watcher, health)
        self.leadership.release()  # after the last run saved: a standby takes over from a complete state
        return EXIT_ERROR if crashed else EXIT_OK

    def _start_feed(self) -> asyncio.Task[None] | None:
        """The drift feed's polling task, with a client of its own through the request gate (None: feed off)."""
        if self.config.feed is None:
            return None
        settings = load_settings(self.directory, overrides=self.overrides)
        self.feed = DriftFeed(
            self.site.client(settings),
            self.reconciler.request,
            interval=self.config.feed,
            busy=lambda: not self.reconciler.idle.is_set(),
            on_poll=self._polled,
            kinds=self.site.kinds,
        )
        return asyncio.create_task(self._feeding(self.feed), name="cmssync-drift-feed")

    async def _feeding(self, feed: DriftFeed) -> None:
        async with feed.client:
            await feed.serve()

    def _polled(self, result: PollResult) -> None:
        assert self.feed is not None
        stats = self.feed.client.stats
        outcome = "failed" if result.failed else "moved" if result.moved else "unchanged"
        self.metrics.record_poll(result.kind, outcome, result.moved, len(result.managed), stats.snapshot())
        stats.reset()

    def _on_change(self, paths: list[str] | None, at: float) -> None:
        scope = None if paths is None else scope_for_paths(paths, self.kinds.table)
        log.debug("content changed", paths=paths)
        self.reconciler.request("file", scope, debounce=True, at=at)

    def _install_signals(self, loop: asyncio.AbstractEventLoop) -> None:
        for sig in (signal.SIGTERM, signal.SIGINT):
            loop.add_signal_handler(sig, self._on_stop_signal, sig)
        loop.add_signal_handler(signal.SIGHUP, self._on_hangup)
        loop.add_signal_handler(signal.SIGUSR1, self.control.suspend, "SIGUSR1")
        loop.add_signal_handler(signal.SIGUSR2, self.control.resume, "SIGUSR2")

    def _on_run_finished(self, batch: Batch, record: RunRecord) -> None:
        """Derive the run's events and queue them (never waits); gauges of the plan's conflicts and held deletes."""
        plan = record.report.plan if record.report is not None else None
        if self.feed is not None and record.report is not None:
            done = [o.action for o in record.report.outcomes if o.status == "ok"]
            trees = plan.trees if plan is not None else None
            self.feed.after_run(done, record.report.state, trees=trees, started=record.started)
        self._notify(
            RunFacts(
                run_id=batch.run_id,
                trigger=batch.trigger,
                mode=record.mode,
                scope=batch.scope,
                result=record.result,
                reason=record.reason,
                problems=tuple(record.problems),
                plan=plan,
                outcomes=tuple(record.report.outcomes) if record.report is not None else (),
            )
        )
        if self.proposer is not None and record.report is not None:
            if pages := proposed_pages(record.report.plan):
                self.proposer.propose(pages, batch.run_id)
            if (adopted := record.report.adopted) is not None and adopted.files:
                self.proposer.adopted(adopted.pulled, batch.run_id)
        if plan is not None:
            self.metrics.set_plan_objects(plan, self.tracker.conflicts.current)
            if batch.full:
                self.metrics.blocked_deletes.set(sum(len(entry.keys) for entry in plan.blocked))

    def _notify(self, facts: RunFacts) -> None:
        # Notifications must never fail a run: a bug here is logged, the run's result stands.
        try:
            self.notifier.publish(self.tracker.observe(facts))
        except Exception:
            log.exception("could not derive or queue the run's notifications", run_id=facts.run_id)

    def _status(self) -> dict[str, Any]:
        """``GET /status``: the mode and suspension, readiness, the run going on, the next scheduled runs."""
        body: dict[str, Any] = {
            **self.control.document(),
            "readiness": self.readiness.document(),
            "running": self.reconciler.in_progress(),
            "failures": self.reconciler.failures,
            "next_runs": {
                name: when.isoformat(timespec="seconds") if when else None
                for name, when in self.schedule.next_fire_times().items()
            },
            "notify": [receiver.name for receiver in self.config.receivers],
        }
        return json.loads(mask_secrets(json.dumps(body)))  # type: ignore[no-any-return]

    def _on_stop_signal(self, sig: signal.Signals) -> None:
        log.info("stopping", signal=sig.name)
        self.readiness.stopping = True  # /readyz 503: no more traffic routed here while the run ends
        self.gate.close()  # at once: calls in flight finish, no new one is sent
        self._stop.set()

    def _on_hangup(self) -> None:
        log.info("SIGHUP: full run requested")
        self.reconciler.request("signal")

    async def _shut_down(
        self,
        loop: asyncio.AbstractEventLoop,
        serving: asyncio.Task[None],
        stopping: asyncio.Task[bool],
        watcher: ContentWatcher | None,
        health: HealthServer,
    ) -> None:
        stopping.cancel()
        self.schedule.shutdown()
        self.gate.close()
        self.reconciler.stop()
        if watcher is not None:
            await asyncio.to_thread(watcher.stop)
        done, _ = await asyncio.wait({serving}, timeout=SHUTDOWN_GRACE)
        if not done:
            log.warning("the run did not end in time; cancelling it", grace_s=SHUTDOWN_GRACE)
            serving.cancel()
            await asyncio.wait({serving}, timeout=1.0)
        elif serving.exception() is not None:
            log.error("the reconciler crashed", exc_info=serving.exception())
        if self.proposer is not None:
            await self.proposer.close()
        await self.notifier.close()
        await self.gate.aclose()
        await health.stop()
        self._remove_signals(loop)
        log.info("stopped")

    @staticmethod
    def _remove_signals(loop: asyncio.AbstractEventLoop) -> None:
        for sig in (signal.SIGTERM, signal.SIGINT, signal.SIGHUP, signal.SIGUSR1, signal.SIGUSR2):
            loop.remove_signal_handler(sig)
