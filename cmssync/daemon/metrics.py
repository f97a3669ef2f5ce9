"""The daemon's Prometheus metrics, in a registry of their own (one per daemon, so tests can build many).

Names follow design.md §6: runs by result and trigger, run duration, API requests by method and status (taken from
each run's request counters, so they cover exactly the requests cmssync made), objects that drifted in the last
full run, changes still pending after the last run, and the time of the last success. Scrape it at ``/metrics``.

Editor safety adds the daemon's mode (``enforce``/``report``, and whether it is suspended), conflicts and
guard-blocked deletes the last plan held, and notifications by receiver, event and result (``sent``, ``failed``
after the retries, ``dropped`` when a receiver's queue was full).

On a site with several locale trees (``cmssync.content.trees``) the object counts — drifted, conflicted and held
objects — carry a ``tree`` label as well (:class:`TreeCounts`); a single-tree site's series are what they always were.
"""

from __future__ import annotations

from collections import Counter as Tally
from collections.abc import Iterable, Iterator, Mapping

from prometheus_client import CollectorRegistry, Counter, Gauge, Histogram
from prometheus_client.core import GaugeMetricFamily, Metric
from prometheus_client.exposition import choose_encoder
from prometheus_client.registry import Collector

from cmssync.api.stats import RequestKey
from cmssync.daemon.events import ObjectState
from cmssync.plan.actions import Plan
from cmssync.plan.builtin_kinds import BUILT_IN_KINDS
from cmssync.plan.kinds import KindTable
from cmssync.plan.scope_model import Scope

MODES = ("enforce", "report")
RESULTS = ("success", "failure", "interrupted")
DURATION_BUCKETS = (0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0, 30.0, 60.0, 120.0, 300.0, 600.0, 1800.0)


HELD_REASONS = ("conflict", "foreign_draft", "unreadable")


class TreeCounts(Collector):
    """A gauge of objects counted by ``labels`` (the kind, the reason; none for a plain count) and, while the site
    has several locale trees, by ``tree``: the locale of a page's or stack's tree (``Plan.tree_of``), ``""`` for an
    object in no tree (a file, a user; a localized stack whose tree the API does not tell). On a single-tree site
    the series are a plain labelled gauge's, byte for byte. A series once shown stays, at 0 when nothing is counted
    (an alert on ``tree="de_DE"`` sees 0, not an absent series)."""

    def __init__(
        self,
        name: str,
        documentation: str,
        labels: tuple[str, ...],
        initial: Iterable[tuple[str, ...]],
        registry: CollectorRegistry,
    ) -> None:
        self.name, self.documentation, self.labels = name, documentation, labels
        self.initial = tuple(initial)
        self.counts: Tally[tuple[str, ...]] = Tally()
        """``(*label values, tree)`` → objects."""
        self.trees = False
        self.shown: dict[tuple[str, ...], None] = {}
        """The series shown so far, in the order they first were (an ordered set)."""
        registry.register(self)

    def set(self, counted: Iterable[tuple[tuple[str, ...], str]], *, trees: bool) -> None:
        """Count each object's ``(label values, tree)``; ``trees``: the site has several locale trees."""
        self.counts = Tally((*values, tree) for values, tree in counted)
        if trees != self.trees:
            self.trees, self.shown = trees, {}

    def collect(self) -> Iterator[Metric]:
        if self.trees:
            names = [*self.labels, "tree"]
            totals = self.counts
            self.shown |= dict.fromkeys([*((*values, "") for values in self.initial), *totals])
        else:
            names = list(self.labels)
            totals = Tally()
            for labelled, count in self.counts.items():
                totals[labelled[:-1]] += count
            self.shown |= dict.fromkeys([*self.initial, *totals])
        family = GaugeMetricFamily(self.name, self.documentation, labels=names)
        for values in self.shown:
            family.add_metric(list(values), totals.get(values, 0))
        yield family


class DaemonMetrics:
    def __init__(self, registry: CollectorRegistry | None = None, kinds: KindTable = BUILT_IN_KINDS) -> None:
        self.kinds = tuple(kinds.names)
        """The run's kinds (their drift gauges start at 0)."""
        self._drifted = ObjectState(kinds)
        """The objects found drifted, as each run's scope last saw them."""
        self.registry = registry if registry is not None else CollectorRegistry()
        self.runs = Counter(
            "cmssync_sync_runs", "Reconcile runs, by result and trigger.", ["result", "trigger"], registry=self.registry
        )
        self.duration = Histogram(
            "cmssync_sync_duration_seconds",
            "Duration of reconcile runs.",
            buckets=DURATION_BUCKETS,
            registry=self.registry,
        )
        self.change_latency = Histogram(
            "cmssync_change_latency_seconds",
            "From the first file event of a batch to the end of the run that applied it.",
            buckets=DURATION_BUCKETS,
            registry=self.registry,
        )
        self.api_requests = Counter(
            "cmssync_api_requests",
            "Requests sent to the site's API, by method and status ('error': no answer).",
            ["method", "status"],
            registry=self.registry,
        )
        self.drift = TreeCounts(
            "cmssync_drift_resources",
            "Objects changed outside cmssync as the runs last saw them (a full run: the whole site; a drift-feed or "
            "file-change run: the objects it read), by kind.",
            ("kind",),
            [(kind,) for kind in self.kinds],
            self.registry,
        )
        self.pending = Gauge(
            "cmssync_pending_changes",
            "Planned changes the last run did not complete (failed or skipped).",
            registry=self.registry,
        )
        self.last_success = Gauge(
            "cmssync_last_success_timestamp_seconds",
            "Unix time of the end of the last successful run.",
            registry=self.registry,
        )
        self.mode = Gauge(
            "cmssync_daemon_mode",
            "1 for the mode runs take now (report while suspended), 0 for the other.",
            ["mode"],
            registry=self.registry,
        )
        self.suspended = Gauge(
            "cmssync_daemon_suspended",
            "1 while the daemon is suspended (it observes, never writes).",
            registry=self.registry,
        )
        self.conflicts = TreeCounts(
            "cmssync_conflict_resources",
            "Objects changed both in the content and on the site, in the last plan.",
            (),
            [()],
            self.registry,
        )
        self.blocked_deletes = Gauge(
            "cmssync_blocked_deletes",
            "Deletes the prune guards held back in the last full plan.",
            registry=self.registry,
        )
        self.held = TreeCounts(
            "cmssync_held_objects",
            "Objects the last plan held back (nothing written to them), by reason.",
            ("reason",),
            [(reason,) for reason in HELD_REASONS],
            self.registry,
        )
        self.feed_polls = Counter(
            "cmssync_drift_feed_polls",
            "Polls of the drift feed, by list and result (unchanged, moved, failed).",
            ["list", "result"],
            registry=self.registry,
        )
        self.feed_moved = Counter(
            "cmssync_drift_feed_objects",
            "Objects the drift feed saw change on the site, by kind and whether cmssync manages them.",
            ["kind", "managed"],
            registry=self.registry,
        )
        self.notifications = Counter(
            "cmssync_notifications",
            "Notifications by receiver, event and result (sent, failed after retries, dropped: queue full).",
            ["receiver", "event", "result"],
            registry=self.registry,
        )
        self.set_mode("enforce", suspended=False)

    def set_plan_objects(self, plan: Plan, conflicted: Iterable[str]) -> None:
        """What the last plan holds: the objects in conflict (``KIND:KEY``, as the runs have seen them) and the held
        objects by reason (conflict, foreign_draft, unreadable), each with its tree when the site has several."""
        trees = bool(plan.trees)
        self.conflicts.set((((), _tree(plan, object_id)) for object_id in conflicted), trees=trees)
        self.held.set((((held.reason,), _tree(plan, held.id)) for held in plan.held), trees=trees)

    def set_mode(self, effective: str, *, suspended: bool) -> None:
        for mode in MODES:
            self.mode.labels(mode=mode).set(1 if mode == effective else 0)
        self.suspended.set(1 if suspended else 0)

    def record_run(
        self,
        *,
        trigger: str,
        result: str,
        duration: float,
        requests: Mapping[RequestKey, int],
        finished_at: float,
        latency: float | None = None,
        pending: int | None = None,
    ) -> None:
        """Count one finished run; ``pending`` None when the run did not get as far as a plan."""
        self.runs.labels(result=result, trigger=trigger).inc()
        self.duration.observe(duration)
        if latency is not None:
            self.change_latency.observe(latency)
        for key, count in requests.items():
            self.api_requests.labels(method=key.method, status=key.status).inc(count)
        if pending is not None:
            self.pending.set(pending)
        if result == "success":
            self.last_success.set(finished_at)

    def record_drift(self, drifted: Iterable[str], scope: Scope | None, plan: Plan) -> None:
        """The objects (``KIND:KEY``) a run's ``plan`` found changed outside cmssync; ``scope`` what the run read
        (None: the whole site). Objects outside the scope keep what the last run that read them found, so a drift-feed
        run updates the gauge for what it read (it used to move only on full runs)."""
        self._drifted.update({object_id: _tree(plan, object_id) for object_id in drifted}, scope)
        self.drift.set(
            (((object_id.partition(":")[0],), tree) for object_id, tree in self._drifted.current.items()),
            trees=bool(plan.trees),
        )

    def record_poll(self, kind: str, result: str, moved: int, managed: int, requests: Mapping[RequestKey, int]) -> None:
        """Count one poll of the drift feed and the requests it sent."""
        self.feed_polls.labels(list=kind, result=result).inc()
        if moved:
            self.feed_moved.labels(kind=kind, managed="yes").inc(managed)
            self.feed_moved.labels(kind=kind, managed="no").inc(moved - managed)
        for key, count in requests.items():
            self.api_requests.labels(method=key.method, status=key.status).inc(count)

    def render(self, accept: str | None) -> tuple[bytes, str]:
        """The exposition text (Prometheus or OpenMetrics, as the scraper asks) and its content type."""
        encoder, content_type = choose_encoder(accept or "")
        return encoder(self.registry), content_type


def _tree(plan: Plan, object_id: str) -> str:
    """The locale tree of the page or stack ``KIND:KEY`` names on a site with several trees; "" for any other."""
    kind, _, key = object_id.partition(":")
    return plan.tree_of(kind, key) or ""
