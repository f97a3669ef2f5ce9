"""Two daemon replicas of one site on one PostgreSQL state (issue 38): exactly one leads and writes, the other stands
by (``/readyz`` and ``/status`` say which), and when the leader is killed the standby takes over and applies the
next change within 30 s. Each replica has its own copy of the content, as two pods with git-sync would."""

from __future__ import annotations

import shutil
import signal
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from cmssync.emulator.embedded import Sandbox
from tests.support.daemon import EXAMPLE, PASSWORDS, DaemonProcess, DaemonSite
from tests.support.postgres import PostgresCluster
from tests.support.rawsite import RawSite

pytestmark = pytest.mark.slow

FOUNDED = "Example Co. was founded in 2014"
TAKEOVER = 30.0


@pytest.fixture
def replicas(
    tmp_path: Path, sandbox: Sandbox, postgres_cluster: PostgresCluster, monkeypatch: pytest.MonkeyPatch
) -> Iterator[tuple[DaemonSite, DaemonSite]]:
    for name, value in PASSWORDS.items():
        monkeypatch.setenv(name, value)
    state = postgres_cluster.state_url()
    sites = []
    for name in ("replica-a", "replica-b"):
        root = tmp_path / name / "site"
        shutil.copytree(EXAMPLE, root, ignore=shutil.ignore_patterns(".cmssync"))
        site = DaemonSite(root, sandbox)
        site.env.update(postgres_cluster.environment())
        site.env["CMSSYNC_STATE"] = state  # the environment wins over the file's local state
        site.env["CMSSYNC_STATE_KEY"] = "5e" * 32  # one password key for both, as one secret in both pods
        sites.append(site)
    try:
        yield sites[0], sites[1]
    finally:
        for site in sites:
            for process in site.processes:
                process.kill()


def about_text(raw: RawSite) -> str:
    return str(raw.blocks("/about", "Main")[1][1]["content"])


def requests(process: DaemonProcess, *, writes_only: bool = True) -> float:
    """Requests this replica sent to the site (its /metrics): those other than GET, or all of them."""
    return sum(
        value
        for (name, labels), value in process.metrics().items()
        if name == "cmssync_api_requests_total" and not (writes_only and dict(labels).get("method") == "GET")
    )


def edit_both(sites: tuple[DaemonSite, DaemonSite], old: str, new: str) -> None:
    for site in sites:
        site.edit("pages/about.yaml", old, new)


def test_one_replica_writes_and_the_other_takes_over_when_it_dies(
    replicas: tuple[DaemonSite, DaemonSite], raw: RawSite
) -> None:
    site_a, site_b = replicas
    first = site_a.start()
    first.wait_for("leading: this replica writes")
    first.wait_for("run finished", trigger="startup", result="success")
    second = site_b.start()
    waiting = second.wait_for("standing by: another replica leads")
    assert f"pid {first.process.pid} " in waiting["leader"]

    ready_a, ready_b = first.get("/readyz"), second.get("/readyz")
    assert (ready_a.status_code, ready_b.status_code) == (200, 200)  # a standby is ready to take over
    assert ready_a.json()["role"] == "leader"
    assert ready_b.json()["role"] == "standby"
    assert ready_b.json()["leader"]["pid"] == first.process.pid
    status = second.get("/status").json()
    assert status["readiness"]["role"] == "standby"
    assert status["readiness"]["leader"]["pid"] == first.process.pid

    mark = first.mark()
    edit_both(replicas, FOUNDED, "Example Co. was founded in 2015")
    run = first.wait_for("run finished", after=mark, trigger="file")
    assert run["result"] == "success"
    assert "founded in 2015" in about_text(raw)
    assert requests(first) > 0
    assert requests(second, writes_only=False) == 0  # counted: the standby sent no request at all
    assert second.runs() == []

    first.signal(signal.SIGKILL)
    killed = time.monotonic()
    edit_both(replicas, "founded in 2015", "founded in 2016")
    second.wait_for("leading: this replica writes", timeout=TAKEOVER)
    second.wait_for("run finished", trigger="startup", result="success", timeout=TAKEOVER)
    took = time.monotonic() - killed
    assert "founded in 2016" in about_text(raw)
    assert took < TAKEOVER
    assert second.get("/readyz").json()["role"] == "leader"
    assert requests(second) > 0
    print(f"takeover: the standby applied the next change {took:.1f} s after the leader was killed")

    code, _ = second.terminate()
    assert code == 0
