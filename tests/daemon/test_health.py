"""The health server in the test's own loop: /healthz, /healthz states, /metrics as Prometheus text."""

from __future__ import annotations

import asyncio
import datetime as dt
from collections.abc import AsyncIterator

import httpx
import pytest
from prometheus_client import CollectorRegistry, Gauge, generate_latest
from prometheus_client.parser import text_string_to_metric_families

from cmssync.api.stats import RequestKey
from cmssync.daemon.health import HealthServer, Readiness, build_app, parse_address
from cmssync.daemon.metrics import DaemonMetrics
from cmssync.daemon.reconciler import Batch, Reconciler
from cmssync.errors import ConfigError
from cmssync.plan.actions import HeldObject, Plan
from cmssync.plan.builtin_kinds import BUILT_IN_KINDS

ONE_TREE = Plan(site="http://site", content_digest="x")
TREES = Plan(site="http://site", content_digest="x", trees={"/": "en_US", "/de": "de_DE", "/fr": "fr_FR"})


@pytest.fixture
async def served() -> AsyncIterator[tuple[httpx.AsyncClient, Readiness, DaemonMetrics]]:
    readiness, metrics = Readiness(), DaemonMetrics()
    server = HealthServer(build_app(readiness, metrics), "127.0.0.1", 0)
    await server.start()
    try:
        async with httpx.AsyncClient(base_url=f"http://127.0.0.1:{server.port}", timeout=5) as client:
            yield client, readiness, metrics
    finally:
        await server.stop()


def samples(text: str) -> dict[tuple[str, tuple[tuple[str, str], ...]], float]:
    found = {}
    for family in text_string_to_metric_families(text):
        for sample in family.samples:
            found[(sample.name, tuple(sorted(sample.labels.items())))] = sample.value
    return found


async def test_livez(served: tuple[httpx.AsyncClient, Readiness, DaemonMetrics]) -> None:
    client, _, _ = served
    response = await client.get("/livez")
    assert (response.status_code, response.text) == (200, "ok\n")


async def test_healthz_follows_the_runs(served: tuple[httpx.AsyncClient, Readiness, DaemonMetrics]) -> None:
    client, readiness, _ = served
    response = await client.get("/healthz")
    assert response.status_code == 503
    assert response.json()["status"] == "starting"

    readiness.failing("invalid content", ["pages/about.yaml:3:7: name: field required"], {"run_id": "r1"})
    response = await client.get("/healthz")
    assert response.status_code == 503
    assert response.json()["problems"] == ["pages/about.yaml:3:7: name: field required"]

    readiness.ready({"run_id": "r2"})
    response = await client.get("/healthz")
    assert response.status_code == 200
    assert response.json() == {
        "status": "ready",
        "reason": "the last run succeeded",
        "last_run": {"run_id": "r2"},
        "serving": True,
    }


async def test_readyz_stays_ready_while_the_process_serves(
    served: tuple[httpx.AsyncClient, Readiness, DaemonMetrics],
) -> None:
    """Readiness is not the run status (issue 27 item 8): failing runs used to make /readyz 503, and Kubernetes
    took the pod out of its Service exactly when someone needed its metrics. Only a stop makes it 503."""
    client, readiness, _ = served
    assert (await client.get("/readyz")).status_code == 200  # starting: serving already
    readiness.failing("site unreachable", [], {"run_id": "r1"})
    response = await client.get("/readyz")
    assert (response.status_code, response.json()["status"]) == (200, "failing")  # the run status, in the body
    assert (await client.get("/healthz")).status_code == 503  # the separate signal for alerts
    readiness.stopping = True
    response = await client.get("/readyz")
    assert (response.status_code, response.json()["serving"]) == (503, False)
    assert (await client.get("/livez")).status_code == 200


async def test_metrics_parse_and_count(served: tuple[httpx.AsyncClient, Readiness, DaemonMetrics]) -> None:
    client, _, metrics = served
    requests = {RequestKey("GET", "/pages/{page_id}", "200"): 5, RequestKey("PUT", "/pages/{cID}", "500"): 1}
    metrics.record_run(
        trigger="startup",
        result="success",
        duration=1.5,
        requests=requests,
        finished_at=1_700_000_000.0,
        pending=0,
    )
    metrics.record_drift(["page:/a", "page:/b"], None, ONE_TREE)
    metrics.record_run(trigger="file", result="failure", duration=0.2, requests={}, finished_at=0.0, latency=0.4)
    response = await client.get("/metrics")
    assert response.status_code == 200
    assert response.headers["content-type"].startswith("text/plain")
    found = samples(response.text)
    assert found[("cmssync_sync_runs_total", (("result", "success"), ("trigger", "startup")))] == 1
    assert found[("cmssync_sync_runs_total", (("result", "failure"), ("trigger", "file")))] == 1
    assert found[("cmssync_sync_duration_seconds_count", ())] == 2
    assert found[("cmssync_change_latency_seconds_count", ())] == 1
    assert found[("cmssync_api_requests_total", (("method", "GET"), ("status", "200")))] == 5
    assert found[("cmssync_api_requests_total", (("method", "PUT"), ("status", "500")))] == 1
    assert found[("cmssync_drift_resources", (("kind", "page"),))] == 2
    assert found[("cmssync_drift_resources", (("kind", "user"),))] == 0
    assert found[("cmssync_pending_changes", ())] == 0
    assert found[("cmssync_last_success_timestamp_seconds", ())] == 1_700_000_000.0


def test_the_drift_gauge_follows_every_run_that_read_the_objects() -> None:
    """``cmssync_drift_resources`` moved only on full runs (issue 36): a drift-feed run of one page now updates what
    it read, and leaves what it did not read as the last run found it."""
    metrics = DaemonMetrics(CollectorRegistry())

    def gauge(kind: str) -> float | None:
        return metrics.registry.get_sample_value("cmssync_drift_resources", {"kind": kind})

    metrics.record_drift(["page:/a", "page:/b", "user:jane"], None, ONE_TREE)  # a full run
    assert (gauge("page"), gauge("user")) == (2, 1)
    metrics.record_drift(
        [], BUILT_IN_KINDS.scope_of(["page:/a"]), ONE_TREE
    )  # a feed run that read /a: no longer drifted
    assert (gauge("page"), gauge("user")) == (1, 1)
    metrics.record_drift(
        ["page:/c"], BUILT_IN_KINDS.scope_of(["page:/c"]), ONE_TREE
    )  # a feed run that found /c changed
    assert gauge("page") == 2
    metrics.record_drift([], None, ONE_TREE)
    assert (gauge("page"), gauge("user")) == (0, 0)


def _held(plan: Plan, *objects: tuple[str, str, str]) -> Plan:
    held = tuple(HeldObject(kind=kind, key=key, reason=reason, message="held") for kind, key, reason in objects)  # type: ignore[arg-type]
    return plan.model_copy(update={"held": held})


OBJECT_COUNTS = ("cmssync_drift_resources", "cmssync_conflict_resources", "cmssync_held_objects")


def _exposition(registry: CollectorRegistry) -> list[str]:
    return [
        line
        for line in generate_latest(registry).decode().splitlines()
        if line.split()[2 if line.startswith("#") else 0].split("{")[0] in OBJECT_COUNTS
    ]


def test_a_single_tree_sites_object_counts_are_exposed_as_before() -> None:
    """The tree label (issue 35) leaves a single-tree site's series as the plain gauges gave them, line for line."""
    metrics = DaemonMetrics(CollectorRegistry())
    plan = _held(ONE_TREE, ("page", "/a", "conflict"), ("page", "/b", "foreign_draft"))
    metrics.record_drift(["page:/a", "page:/c", "user:jane"], None, plan)
    metrics.set_plan_objects(plan, ["page:/a"])

    before = CollectorRegistry()  # what DaemonMetrics registered before the tree label
    drift = Gauge(
        "cmssync_drift_resources",
        "Objects changed outside cmssync as the runs last saw them (a full run: the whole site; a drift-feed or "
        "file-change run: the objects it read), by kind.",
        ["kind"],
        registry=before,
    )
    for kind, count in {"group": 0, "file": 0, "page": 2, "stack": 0, "user": 1}.items():
        drift.labels(kind=kind).set(count)
    conflicts = "Objects changed both in the content and on the site, in the last plan."
    Gauge("cmssync_conflict_resources", conflicts, registry=before).set(1)
    held = Gauge(
        "cmssync_held_objects",
        "Objects the last plan held back (nothing written to them), by reason.",
        ["reason"],
        registry=before,
    )
    for reason, count in {"conflict": 1, "foreign_draft": 1, "unreadable": 0}.items():
        held.labels(reason=reason).set(count)
    assert _exposition(metrics.registry) == _exposition(before)


def test_a_multilingual_sites_object_counts_carry_the_tree() -> None:
    """On a site with several locale trees, drifted, conflicted and held objects are counted by tree as well: a
    page's tree by its path, "" for objects in no tree (a user; a localized stack when the site has two other trees:
    the API does not say which it is for). A series once shown stays, at 0."""
    metrics = DaemonMetrics(CollectorRegistry())
    plan = _held(TREES, ("page", "/de/about", "unreadable"))
    metrics.record_drift(["page:/about", "page:/de/about", "page:/de", "stack:footer/footer", "user:jane"], None, plan)
    metrics.set_plan_objects(plan, ["page:/fr/contact"])
    found = samples(generate_latest(metrics.registry).decode())

    def count(name: str, **labels: str) -> float | None:
        return found.get((name, tuple(sorted(labels.items()))))

    assert count("cmssync_drift_resources", kind="page", tree="en_US") == 1
    assert count("cmssync_drift_resources", kind="page", tree="de_DE") == 2
    assert count("cmssync_drift_resources", kind="stack", tree="") == 1
    assert count("cmssync_drift_resources", kind="user", tree="") == 1
    assert count("cmssync_drift_resources", kind="file", tree="") == 0
    assert count("cmssync_drift_resources", kind="page") is None  # no series without the tree label
    assert count("cmssync_conflict_resources", tree="fr_FR") == 1
    assert count("cmssync_held_objects", reason="unreadable", tree="de_DE") == 1
    assert count("cmssync_held_objects", reason="conflict", tree="") == 0

    metrics.record_drift([], None, plan)  # the next full run finds nothing drifted
    found = samples(generate_latest(metrics.registry).decode())
    assert count("cmssync_drift_resources", kind="page", tree="de_DE") == 0


async def test_metrics_speak_openmetrics_when_asked(
    served: tuple[httpx.AsyncClient, Readiness, DaemonMetrics],
) -> None:
    client, _, _ = served
    response = await client.get("/metrics", headers={"Accept": "application/openmetrics-text; version=1.0.0"})
    assert response.headers["content-type"].startswith("application/openmetrics-text")
    assert response.text.endswith("# EOF\n")


def test_each_daemon_has_its_own_registry() -> None:
    DaemonMetrics()
    DaemonMetrics()  # no "Duplicated timeseries"


@pytest.mark.parametrize(
    ("text", "expected"),
    [("127.0.0.1:9090", ("127.0.0.1", 9090)), ("0.0.0.0:0", ("0.0.0.0", 0)), ("[::1]:9090", ("::1", 9090))],
)
def test_parse_address(text: str, expected: tuple[str, int]) -> None:
    assert parse_address(text) == expected


@pytest.mark.parametrize("text", ["9090", "localhost", ":9090", "host:99999", "host:http"])
def test_bad_addresses_are_config_errors(text: str) -> None:
    with pytest.raises(ConfigError, match=r"daemon\.health"):
        parse_address(text)


async def test_a_port_in_use_is_a_config_error() -> None:
    first = HealthServer(build_app(Readiness(), DaemonMetrics()), "127.0.0.1", 0)
    try:
        import socket

        with socket.socket() as probe:
            probe.bind(("127.0.0.1", 0))
            probe.listen()
            with pytest.raises(ConfigError, match="cannot listen"):
                HealthServer(build_app(Readiness(), DaemonMetrics()), "127.0.0.1", probe.getsockname()[1])
    finally:
        await first.stop()


async def test_healthz_shows_a_run_in_progress_and_since_when(
    served: tuple[httpx.AsyncClient, Readiness, DaemonMetrics],
) -> None:
    """Issue 37 item 7: a run that hangs shows as one running for a long time, beside the last run's status."""
    client, readiness, _ = served
    release, started = asyncio.Event(), asyncio.Event()

    async def hanging(batch: Batch) -> bool:
        started.set()
        await release.wait()
        return True

    reconciler = Reconciler(hanging, debounce=0.0)
    readiness.in_progress = reconciler.in_progress
    serving = asyncio.create_task(reconciler.serve())
    assert "running" not in (await client.get("/healthz")).json()
    reconciler.request("schedule")
    await started.wait()
    assert reconciler.running is not None
    before = dt.datetime.now(dt.UTC).replace(microsecond=0)
    running = (await client.get("/healthz")).json()["running"]
    assert running["trigger"] == "schedule"
    assert running["run_id"] == reconciler.running.run_id
    assert before - dt.timedelta(seconds=2) <= dt.datetime.fromisoformat(running["since"]) <= before
    assert running["seconds"] >= 0
    release.set()
    await reconciler.idle.wait()
    assert "running" not in (await client.get("/healthz")).json()
    reconciler.stop()
    await serving
