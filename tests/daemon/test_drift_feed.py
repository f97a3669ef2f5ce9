"""The drift feed (``daemon.feed``, issue 28 item 4) against the sandbox: one request a poll while nothing changes,
an editor's approved change to a managed page run for (reverted in enforce mode, notified in report mode) within a
few polls, and a change to an unmanaged page costing nothing beyond the poll. Counts, not timings."""

from __future__ import annotations

import time

import httpx
import pytest

from tests.daemon.receiver import receiver
from tests.support.daemon import POLL, TOKEN_ROUTE, DaemonProcess, DaemonSite, DriftMaker, idle, polls, wait_for_poll
from tests.support.rawsite import RawSite
from tests.support.tokens import sandbox_token

pytestmark = pytest.mark.slow


def test_a_managed_page_changed_on_the_site_is_run_for_and_reverted(
    daemon_site: DaemonSite, drift: DriftMaker, monkeypatch: pytest.MonkeyPatch
) -> None:
    # The sandbox's clock two seconds on from here: its seed is older than the startup run (the first poll takes
    # a page changed in the second that run began as moved, and asks for one more run).
    monkeypatch.setattr("cmssync.emulator.routing.now", lambda: int(time.time()) + 2)
    daemon = daemon_site.reverting().start(feed=POLL)
    daemon.wait_for("run finished", trigger="startup", result="success")
    wait_for_poll(daemon, "page")  # the first poll reads on while all it reads moved since the startup run began
    made, requests = idle(daemon, daemon_site.sandbox)
    assert made >= 3
    assert requests <= made + 1  # one request a poll (a poll may be in flight at either end)

    mark = daemon.mark()
    drift.change_block("/about", "Main", 1, "<p>Changed on the site</p>")
    started = daemon.wait_for("run started", after=mark, trigger="drift", timeout=10)
    assert started["scope"] == {"pages": ["/about"]}
    run = daemon.wait_for("run finished", after=mark, trigger="drift")
    assert run["result"] == "success"
    assert run["outcomes"]["ok"] == 1
    site = RawSite(daemon_site.sandbox)
    texts = [value.get("content") for _, value in site.blocks("/about", "Main")]
    site.close()
    assert "<p>Changed on the site</p>" not in texts  # reverted
    # its own revert moved the page again: not taken for drift
    time.sleep(1.0)
    assert daemon.runs(trigger="drift")[-1] == run
    daemon.terminate()


def test_an_unmanaged_page_changed_on_the_site_costs_only_the_poll(daemon_site: DaemonSite) -> None:
    daemon = daemon_site.start(feed=POLL, mode="report")
    daemon.wait_for("run finished", trigger="startup", result="success")
    wait_for_poll(daemon, "page")  # the page list's first poll (it counts what moved since the startup run began)
    key = ("cmssync_drift_feed_objects_total", (("kind", "page"), ("managed", "no")))
    before = daemon.metrics().get(key, 0)
    sandbox = daemon_site.sandbox
    token = sandbox_token(sandbox, "pages:read pages:add")
    with httpx.Client(base_url=sandbox.api_url, headers={"Authorization": f"Bearer {token}"}) as http:
        body = {"parent": 1, "name": "Not managed", "type": "page", "template": "full"}
        http.post("/pages", json=body).raise_for_status()
    made, requests = idle(daemon, sandbox)
    assert requests <= made + 1
    assert daemon.runs(trigger="drift") == []
    assert daemon.metrics()[key] - before == 1
    daemon.terminate()


def test_report_mode_notifies_the_drift_the_feed_found_and_writes_nothing(
    daemon_site: DaemonSite, drift: DriftMaker
) -> None:
    first = daemon_site.start()
    first.wait_for("run finished", trigger="startup", result="success")
    assert first.terminate()[0] == 0
    with receiver() as hook:
        daemon_site.env["HOOK_URL"] = hook.url
        daemon = daemon_site.start("--mode", "report", feed=POLL, notify=[{"url": "${env:HOOK_URL}"}])
        daemon.wait_for("run finished", trigger="startup", result="success")
        wait_for_poll(daemon)
        mark = daemon.mark()
        drift.change_block("/about", "Main", 1, "<p>Changed on the site</p>")
        daemon_site.sandbox.clear_stats()  # the editor's writes: what follows is the daemon's
        run = daemon.wait_for("run finished", after=mark, trigger="drift", timeout=10)
        assert run["mode"] == "report"
        hook.wait_for(1, timeout=10)
        assert hook.events() == ["drift_found"]
        assert [o["id"] for o in hook.deliveries[0].document["objects"]] == ["page:/about"]
        writes = [e for e in daemon_site.sandbox.stats()["requests"] if e["method"] not in ("GET", "HEAD")]
        assert [e["route"] for e in writes] in ([], [TOKEN_ROUTE])
        daemon.terminate()


def test_a_file_uploaded_on_the_site_is_seen_on_the_file_lists_turn(daemon_site: DaemonSite) -> None:
    """Every third poll reads the file list (the state manages files; and the poll after a run that wrote files): a
    file uploaded on the site moves there, and as cmssync does not manage it no run is requested."""
    daemon = daemon_site.start(feed=POLL)  # its startup run records the content's files
    daemon.wait_for("run finished", trigger="startup", result="success")
    deadline = time.monotonic() + 10
    # the file list is read right after the startup run, which wrote files (setting where it starts), then on its turn
    while file_polls(daemon) < 2:
        assert time.monotonic() < deadline, "the drift feed never read the file list"
        time.sleep(0.05)
    assert polls(daemon) >= 3
    token = sandbox_token(daemon_site.sandbox, "files:read files:add")
    with httpx.Client(base_url=daemon_site.sandbox.api_url, headers={"Authorization": f"Bearer {token}"}) as http:
        http.post("/files", files={"file": ("uploaded.txt", b"not managed", "text/plain")}).raise_for_status()
    key = ("cmssync_drift_feed_objects_total", (("kind", "file"), ("managed", "no")))
    while daemon.metrics().get(key, 0) < 1:
        assert time.monotonic() < deadline + 5, "the upload was never seen on the file list"
        time.sleep(0.05)
    assert daemon.runs(trigger="drift") == []
    daemon.terminate()


def file_polls(daemon: DaemonProcess) -> float:
    return sum(
        v for (name, labels), v in daemon.metrics().items()
        if name == "cmssync_drift_feed_polls_total" and ("list", "file") in labels
    )  # fmt: skip
