"""``cmssync daemon`` as a process against the sandbox: report mode writes nothing, suspend/resume, and a webhook
receiver on loopback that gets exactly one notification per change of state (signed) and none when nothing happens.

"Writes nothing" is measured on the sandbox's own request counters: every request that is not a GET, apart from the
token endpoint, is a write. Changes made on the site by :class:`DriftMaker` are cleared from the counters before the
daemon's run that is measured.
"""

from __future__ import annotations

import signal
import time
from collections.abc import Iterator
from typing import Any

import httpx
import pytest

from cmssync.emulator.embedded import Sandbox
from tests.daemon.receiver import WebhookReceiver, black_hole, receiver
from tests.support.daemon import DaemonProcess, DaemonSite, DriftMaker
from tests.support.editors import Editor
from tests.support.rawsite import RawSite

pytestmark = pytest.mark.slow

SECRET = "webhook-signing-secret"
FOUNDED = "Example Co. was founded in 2014"
TOKEN_ROUTE = "/oauth/2.0/token"


def writes(sandbox: Sandbox) -> list[dict[str, Any]]:
    """Requests the sandbox answered that could change it (everything but GET, HEAD and the token endpoint)."""
    return [
        entry
        for entry in sandbox.stats()["requests"]
        if entry["method"] not in ("GET", "HEAD") and entry["route"] != TOKEN_ROUTE
    ]


def notify_settings(url: str, secret: bool = True) -> list[dict[str, Any]]:
    entry: dict[str, Any] = {"url": "${env:HOOK_URL}", "name": "ops"}
    if secret:
        entry["secret"] = "${env:HOOK_SECRET}"
    return [entry]


def start(site: DaemonSite, url: str, *args: str, **daemon: Any) -> DaemonProcess:
    site.env["HOOK_URL"] = url
    site.env["HOOK_SECRET"] = SECRET
    return site.start(*args, notify=notify_settings(url), **daemon)


def full_run(daemon: DaemonProcess, **fields: Any) -> dict[str, Any]:
    mark = daemon.mark()
    daemon.signal(signal.SIGHUP)
    return daemon.wait_for("run finished", after=mark, trigger="signal", **fields)


def published(daemon: DaemonProcess) -> list[str]:
    """Events the daemon queued (its ``notification`` log lines), in order."""
    return [line["event_type"] for line in daemon.lines if line.get("event") == "notification"]


def settle(daemon: DaemonProcess, hook: WebhookReceiver) -> None:
    """Let queued deliveries arrive: every event the daemon published has reached the receiver."""
    hook.wait_for(len(published(daemon)), timeout=10)


@pytest.fixture
def hook() -> Iterator[WebhookReceiver]:
    with receiver(SECRET.encode()) as server:
        yield server


def applied_then_report_mode(daemon_site: DaemonSite, hook: WebhookReceiver) -> DaemonProcess:
    """The content applied once by an enforcing daemon, then a daemon in report mode on the synced site."""
    first = daemon_site.start()
    first.wait_for("run finished", trigger="startup", result="success")
    assert first.terminate()[0] == 0
    daemon_site.sandbox.clear_stats()
    daemon = start(daemon_site, hook.url, "--mode", "report")
    run = daemon.wait_for("run finished", trigger="startup")
    assert run["result"] == "success", run
    assert run["mode"] == "report"
    return daemon


def test_report_mode_observes_and_plans_but_never_writes(
    daemon_site: DaemonSite, hook: WebhookReceiver, raw: RawSite
) -> None:
    daemon = start(daemon_site, hook.url, "--mode", "report")
    startup = daemon.wait_for("run finished", trigger="startup")
    assert startup["result"] == "success", startup
    assert startup["mode"] == "report"
    assert startup["outcomes"] == {"ok": 0, "failed": 0, "skipped": 0}
    pending = daemon.metrics()[("cmssync_pending_changes", ())]
    assert pending > 0  # the whole content is still to be applied

    mark = daemon.mark()
    daemon_site.edit("pages/about.yaml", FOUNDED, "Example Co. was founded in 2015")
    assert daemon.wait_for("run finished", after=mark, trigger="file")["mode"] == "report"
    full_run(daemon, mode="report")
    full_run(daemon, mode="report")

    assert writes(daemon_site.sandbox) == []
    assert "founded in 2015" not in str(raw.blocks("/about", "Main"))  # the seed's own /about is untouched
    metrics = daemon.metrics()
    assert metrics[("cmssync_daemon_mode", (("mode", "report"),))] == 1
    assert metrics[("cmssync_daemon_suspended", ())] == 0
    assert metrics[("cmssync_pending_changes", ())] == pending
    ready = daemon.get("/healthz").json()
    assert (ready["status"], ready["mode"], ready["suspended"]) == ("ready", "report", False)

    # Four runs saw the same pending changes (the edit touched a page already pending): one notification.
    settle(daemon, hook)
    assert hook.events() == ["changes_pending"]
    document = hook.deliveries[0].document
    assert document["mode"] == "report"
    assert document["total"] == pending
    assert document["site"] == daemon_site.sandbox.url
    assert hook.deliveries[0].signed_ok is True
    body = hook.deliveries[0].body.decode()
    assert daemon_site.sandbox.admin_password not in body
    assert daemon_site.sandbox.client_secret not in body


def test_report_mode_sends_one_signed_notification_per_drift(
    daemon_site: DaemonSite, hook: WebhookReceiver, drift: DriftMaker
) -> None:
    daemon = applied_then_report_mode(daemon_site.reverting(), hook)
    full_run(daemon)
    assert published(daemon) == []  # nothing happened: nothing is sent

    drift.change_block("/about", "Main", 1, "<p>Changed on the site</p>")
    daemon_site.sandbox.clear_stats()
    run = full_run(daemon)
    assert run["drift"] == {"page": 1}
    for _ in range(3):
        full_run(daemon)  # the same drift, seen again
    settle(daemon, hook)
    assert hook.events() == ["drift_found"]
    first = hook.deliveries[0]
    assert first.signed_ok is True
    assert [o["id"] for o in first.document["objects"]] == ["page:/about"]
    assert daemon.metrics()[("cmssync_drift_resources", (("kind", "page"),))] == 1

    drift.change_block("/contact", "Main", 0, "<p>Contact changed on the site</p>")
    daemon_site.sandbox.clear_stats()
    full_run(daemon)
    full_run(daemon)
    settle(daemon, hook)
    assert hook.events() == ["drift_found", "drift_found"]
    second = hook.deliveries[1].document
    assert [o["id"] for o in second["objects"]] == ["page:/contact"]  # only the new one
    assert second["total"] == 2
    assert all(d.signed_ok for d in hook.deliveries)
    assert writes(daemon_site.sandbox) == []


def test_enforce_mode_notifies_revert_failure_and_recovery_once_each(
    daemon_site: DaemonSite, hook: WebhookReceiver, drift: DriftMaker, raw: RawSite
) -> None:
    daemon = start(daemon_site.reverting(), hook.url)
    daemon.wait_for("run finished", trigger="startup", result="success")
    full_run(daemon)
    assert published(daemon) == []

    drift.change_block("/about", "Main", 1, "<p>Changed on the site</p>")
    assert full_run(daemon)["drift"] == {"page": 1}
    full_run(daemon)
    settle(daemon, hook)
    assert hook.events() == ["drift_reverted"]

    good = (daemon_site.root / "pages" / "contact.yaml").read_text()
    mark = daemon.mark()
    (daemon_site.root / "pages" / "contact.yaml").write_text(good + "\n  bad: [unclosed\n")
    assert daemon.wait_for("run finished", after=mark, trigger="file")["result"] == "failure"
    mark = daemon.mark()
    daemon.signal(signal.SIGHUP)  # fails again, the same way
    assert daemon.wait_for("run finished", after=mark, trigger="signal")["result"] == "failure"
    mark = daemon.mark()
    (daemon_site.root / "pages" / "contact.yaml").write_text(good)
    daemon.wait_for("run finished", after=mark, result="success")
    # The run's notifications are queued just after its "run finished" line.
    daemon.wait_for("notification", after=mark, event_type="recovered")
    settle(daemon, hook)
    assert hook.events() == ["drift_reverted", "run_failed", "recovered"]
    failed = hook.deliveries[1].document
    assert failed["reason"] == "invalid content"
    assert any("pages/contact.yaml" in problem for problem in failed["problems"])
    assert all(d.signed_ok for d in hook.deliveries)


def test_suspend_and_resume_over_http_and_signals(daemon_site: DaemonSite, raw: RawSite) -> None:
    daemon = daemon_site.start()
    daemon.wait_for("run finished", trigger="startup", result="success")
    assert httpx.post(daemon.url + "/suspend", headers={"Origin": "http://evil.example"}).status_code == 403
    answer = httpx.post(daemon.url + "/suspend", timeout=5)
    assert answer.status_code == 200
    assert answer.json()["suspended"] is True
    assert answer.json()["changed"] is True
    ready = daemon.get("/healthz")
    assert ready.status_code == 200
    assert ready.json()["suspended"] is True
    assert ready.json()["effective_mode"] == "report"
    assert daemon.metrics()[("cmssync_daemon_suspended", ())] == 1
    status = daemon.get("/status").json()
    assert status["suspended"] is True
    assert status["suspended_by"].startswith("POST /suspend")

    daemon_site.sandbox.clear_stats()
    mark = daemon.mark()
    daemon_site.edit("pages/about.yaml", FOUNDED, "Example Co. was founded in 2017")
    run = daemon.wait_for("run finished", after=mark, trigger="file")
    assert run["mode"] == "report"
    assert run["result"] == "success"
    assert writes(daemon_site.sandbox) == []
    assert "founded in 2017" not in str(raw.blocks("/about", "Main"))
    assert daemon.metrics()[("cmssync_pending_changes", ())] == 1

    mark = daemon.mark()
    assert httpx.post(daemon.url + "/resume", timeout=5).json()["suspended"] is False
    run = daemon.wait_for("run finished", after=mark, trigger="resume")
    assert (run["mode"], run["full"], run["outcomes"]["ok"]) == ("enforce", True, 1)
    assert "founded in 2017" in str(raw.blocks("/about", "Main"))

    daemon.signal(signal.SIGUSR1)
    daemon.wait_for("daemon suspended: runs observe and report, nothing is written", by="SIGUSR1")
    assert daemon.get("/healthz").json()["suspended"] is True
    mark = daemon.mark()
    daemon.signal(signal.SIGUSR2)
    daemon.wait_for("run finished", after=mark, trigger="resume", mode="enforce")
    assert daemon.metrics()[("cmssync_daemon_suspended", ())] == 0


def test_a_receiver_that_never_answers_does_not_slow_the_runs(daemon_site: DaemonSite) -> None:
    with black_hole() as url:
        daemon = start(daemon_site, url)
        daemon.wait_for("run finished", trigger="startup", result="success")
        good = (daemon_site.root / "pages" / "contact.yaml").read_text()
        timings = []
        for text in (good + "\n  bad: [unclosed\n", good, good + "\n  worse: [x\n", good):
            mark = daemon.mark()
            saved = time.monotonic()
            (daemon_site.root / "pages" / "contact.yaml").write_text(text)
            run = daemon.wait_for("run finished", after=mark, trigger="file")
            timings.append((time.monotonic() - saved, run["duration_s"]))
            # A run's notification is queued just after its "run finished" line.
            daemon.wait_for("notification", after=mark)
        # Each state change was published while the receiver held every delivery (10 s timeout per attempt).
        assert published(daemon) == ["run_failed", "recovered", "run_failed", "recovered"]
        assert max(seen for seen, _ in timings) < 3.0, timings
        print("save-to-run-finished with a dead receiver:", [f"{seen:.2f}s" for seen, _ in timings])
        code, seconds = daemon.terminate()
        assert code == 0
        assert seconds < 8.0  # the 3 s flush grace, not the receiver's timeouts


def test_a_page_held_by_a_foreign_draft_is_logged_counted_and_notified_once(
    daemon_site: DaemonSite, hook: WebhookReceiver
) -> None:
    """Nothing is skipped silently (issue 26 item 4): the daemon skips a page with an editor's draft (its default),
    and says so in a warning line, the run summary, ``/metrics`` and one ``objects_held`` notification."""
    daemon = start(daemon_site, hook.url)
    daemon.wait_for("run finished", trigger="startup", result="success")
    editor = Editor(daemon_site.sandbox)
    try:
        editor.edit("/about", approve=False, name="About us (draft)")
    finally:
        editor.close()
    for before, year in (("2014", "2016"), ("2016", "2017")):  # two saves, two runs holding the page: one message
        mark = daemon.mark()
        daemon_site.edit("pages/about.yaml", f"founded in {before}", f"founded in {year}")
        run = daemon.wait_for("run finished", after=mark, trigger="file")
        assert run["held"] == 1, run
        held = daemon.wait_for("object held", after=mark, key="/about")
        assert held["reason"] == "foreign_draft"
    assert daemon.metrics()[("cmssync_held_objects", (("reason", "foreign_draft"),))] == 1
    settle(daemon, hook)
    assert hook.events().count("objects_held") == 1, hook.events()
    assert daemon.terminate()[0] == 0
