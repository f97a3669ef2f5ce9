"""``cmssync daemon`` as a real process against the sandbox: edits reach the site, bursts coalesce, drift is undone,
invalid content keeps it alive, SIGTERM is clean, and /metrics counts it all."""

from __future__ import annotations

import re
import shutil
import signal
import time
from pathlib import PurePosixPath

import pytest

from cmssync.sync.applying import ApplyRequest, apply_site
from cmssync.sync.planning import make_plan
from cmssync.sync.workspace import open_workspace
from tests.support.daemon import DaemonProcess, DaemonSite, DriftMaker
from tests.support.rawsite import RawSite
from tests.support.sites import requests_by_route

pytestmark = pytest.mark.slow

FOUNDED = "Example Co. was founded in 2014"


def about_text(raw: RawSite) -> str:
    return str(raw.blocks("/about", "Main")[1][1]["content"])


def started(site: DaemonSite, **daemon: object) -> DaemonProcess:
    process = site.start(**daemon)
    process.wait_for("run finished", trigger="startup", result="success")
    return process


@pytest.mark.parametrize("watch", ["inotify", "poll"])
def test_a_file_edit_reaches_the_site(daemon_site: DaemonSite, raw: RawSite, watch: str) -> None:
    daemon = daemon_site.start("--watch", watch)
    daemon.wait_for("run finished", trigger="startup", result="success")
    assert daemon.wait_for("watching the content")["mode"] == watch
    assert FOUNDED in about_text(raw)
    assert daemon.get("/healthz").status_code == 200

    mark = daemon.mark()
    saved = time.monotonic()
    daemon_site.edit("pages/about.yaml", FOUNDED, "Example Co. was founded in 2015")
    run = daemon.wait_for("run finished", after=mark, trigger="file")
    seen = time.monotonic() - saved

    assert run["result"] == "success"
    assert run["full"] is False
    assert "Example Co. was founded in 2015" in about_text(raw)
    assert run["outcomes"] == {"ok": 1, "failed": 0, "skipped": 0}
    assert 0.2 <= run["save_to_applied_s"] <= seen  # at least the debounce, at most what the test saw
    assert run["requests"] < 20
    assert isinstance(run["run_id"], str)
    print(f"{watch}: save-to-applied {run['save_to_applied_s']:.3f}s, {run['requests']} requests")

    code, seconds = daemon.terminate()  # while idle
    assert code == 0
    assert seconds < 3
    daemon.wait_for("stopped")


def test_an_edit_to_an_index_page_file_is_applied_by_the_incremental_run(daemon_site: DaemonSite, raw: RawSite) -> None:
    """``pages/about/index.yaml`` is the page ``/about``, in the watch scope as in the loader (it once scoped
    ``/about/index``, planned nothing and reported success)."""
    (daemon_site.root / "pages" / "about.yaml").rename(daemon_site.root / "pages" / "about" / "index.yaml")
    daemon = started(daemon_site)
    mark = daemon.mark()
    daemon_site.edit("pages/about/index.yaml", FOUNDED, "Example Co. was founded in 2016")
    run = daemon.wait_for("run finished", after=mark, trigger="file")
    assert run["result"] == "success"
    assert run["full"] is False
    assert run["outcomes"] == {"ok": 1, "failed": 0, "skipped": 0}
    assert "Example Co. was founded in 2016" in about_text(raw)


def test_a_saved_page_with_a_page_link_is_applied_within_the_debounce_and_a_second(
    daemon_site: DaemonSite, raw: RawSite
) -> None:
    """Issue 26 item 3: an incremental run resolves ``${page-link:…}`` to a page outside the changed files (it
    failed as "does not exist on the site" and waited for the next full run)."""
    daemon = started(daemon_site)
    mark = daemon.mark()
    link = '<p>Meet <a href="${page-link:/about/team}">the team</a>.</p>'
    daemon_site.edit("pages/about.yaml", f"<p>{FOUNDED}", f"{link}\n          <p>{FOUNDED}")
    run = daemon.wait_for("run finished", after=mark, trigger="file")
    assert run["result"] == "success", run
    assert run["full"] is False
    assert run["outcomes"] == {"ok": 1, "failed": 0, "skipped": 0}
    assert run["save_to_applied_s"] <= 0.2 + 1.0, run  # the debounce (0.2 s) + 1 s
    assert "{ccm:export:page:/about/team}" in about_text(raw)


def test_a_burst_of_saves_gives_one_or_two_runs(daemon_site: DaemonSite, raw: RawSite) -> None:
    daemon = started(daemon_site)
    mark = daemon.mark()
    for index in range(20):
        daemon_site.edit("pages/about.yaml", f"founded in {2014 + index}", f"founded in {2015 + index}")
        time.sleep(0.05)  # 20 saves in one second
    daemon.wait_for("run finished", after=mark, trigger="file")
    time.sleep(1.0)  # nothing announces that no further run will come
    file_runs = daemon.runs_total(trigger="file")
    assert 1 <= file_runs <= 2
    assert len(daemon.runs(trigger="file")) == file_runs
    assert "founded in 2034" in about_text(raw)


def test_a_full_run_keeps_an_editors_change_under_the_default_drift_policy(
    daemon_site: DaemonSite, raw: RawSite, drift: DriftMaker
) -> None:
    """``drift: propose`` (the default): the daemon never writes over an editor's approved change; the run counts
    it as drift (a site change to bring back) and writes nothing."""
    daemon = started(daemon_site)
    drift.change_block("/about", "Main", 1, "<p>Changed on the site</p>")
    daemon_site.sandbox.clear_stats()
    mark = daemon.mark()
    daemon.signal(signal.SIGHUP)
    run = daemon.wait_for("run finished", after=mark, trigger="signal")
    assert run["result"] == "success"
    assert run["drift"] == {"page": 1}
    assert "Changed on the site" in about_text(raw)
    assert FOUNDED not in about_text(raw)
    writes = [e for e in daemon_site.sandbox.stats()["requests"] if e["method"] not in ("GET", "HEAD", "POST")]
    assert writes == []
    assert daemon.metrics()[("cmssync_drift_resources", (("kind", "page"),))] == 1


def test_sighup_undoes_drift(daemon_site: DaemonSite, raw: RawSite, drift: DriftMaker) -> None:
    daemon = started(daemon_site.reverting())
    drift.change_block("/about", "Main", 1, "<p>Changed on the site</p>")
    assert "Changed on the site" in about_text(raw)

    mark = daemon.mark()
    daemon.signal(signal.SIGHUP)
    run = daemon.wait_for("run finished", after=mark, trigger="signal")
    assert run["result"] == "success"
    assert run["full"] is True
    assert run["drift"] == {"page": 1}
    assert FOUNDED in about_text(raw)

    metrics = daemon.metrics()  # Prometheus text, parsed
    assert metrics[("cmssync_drift_resources", (("kind", "page"),))] == 1
    assert metrics[("cmssync_sync_runs_total", (("result", "success"), ("trigger", "startup")))] == 1
    assert metrics[("cmssync_sync_runs_total", (("result", "success"), ("trigger", "signal")))] == 1
    assert metrics[("cmssync_sync_duration_seconds_count", ())] == 2
    assert metrics[("cmssync_pending_changes", ())] == 0
    assert metrics[("cmssync_last_success_timestamp_seconds", ())] > time.time() - 60
    requests = {labels: v for (name, labels), v in metrics.items() if name == "cmssync_api_requests_total"}
    assert requests[(("method", "GET"), ("status", "200"))] > 5
    assert requests[(("method", "PUT"), ("status", "200"))] >= 1


def test_the_schedule_undoes_drift(daemon_site: DaemonSite, raw: RawSite, drift: DriftMaker) -> None:
    daemon = started(daemon_site.reverting(), interval="1s")
    drift.change_block("/about", "Main", 1, "<p>Changed on the site</p>")
    mark = daemon.mark()
    run = daemon.wait_until(
        lambda lines: next(
            (ln for ln in lines[mark:] if ln.get("event") == "run finished" and ln.get("drift") == {"page": 1}), None
        ),
        10.0,
        "a scheduled run that found the drift",
    )
    assert run["trigger"] == "schedule"
    assert FOUNDED in about_text(raw)
    assert daemon.runs_total(trigger="schedule", result="success") >= 1


def test_invalid_content_keeps_the_daemon_alive_and_says_why(daemon_site: DaemonSite, raw: RawSite) -> None:
    daemon = started(daemon_site)
    mark = daemon.mark()
    daemon_site.edit("pages/about.yaml", "name: About us", "name: [About us")
    failed = daemon.wait_for("run finished", after=mark, trigger="file")
    assert failed["result"] == "failure"
    assert failed["requests"] == 0
    [problem] = failed["problems"]
    assert re.fullmatch(r"pages/about\.yaml:2:\d+: invalid YAML: .+", problem), problem

    ready = daemon.get("/healthz")
    assert ready.status_code == 503
    body = ready.json()
    assert body["status"] == "failing"
    assert body["reason"] == "invalid content"
    assert body["problems"] == [problem]
    assert daemon.get("/livez").status_code == 200

    mark = daemon.mark()
    daemon_site.edit("pages/about.yaml", "name: [About us", "name: About the company")
    fixed = daemon.wait_for("run finished", after=mark, result="success")
    assert fixed["trigger"] in ("file", "retry")
    assert daemon.get("/healthz").status_code == 200
    page = raw.page_by_path("/about")
    assert page is not None
    assert page["name"] == "About the company"
    assert daemon.process.poll() is None


async def test_sigterm_during_a_long_apply_exits_0_and_the_next_run_completes(
    daemon_site: DaemonSite, raw: RawSite, monkeypatch: pytest.MonkeyPatch
) -> None:
    daemon_site.sandbox.set_faults(["latency:1:ms=150"])
    daemon = daemon_site.start(debug=True)
    daemon.wait_for("api.request", method="POST", status=200, route="/files")  # the first upload has been made
    code, seconds = daemon.terminate()
    assert code == 0
    assert seconds < 4, seconds
    interrupted = daemon.wait_for("run finished", trigger="startup")
    assert interrupted["result"] == "interrupted"
    assert interrupted["outcomes"]["ok"] >= 1
    print(f"SIGTERM to exit: {seconds:.2f}s, {interrupted['outcomes']} before stopping")

    daemon_site.sandbox.clear_faults()
    again = daemon_site.start()
    rerun = again.wait_for("run finished", trigger="startup")
    assert rerun["result"] == "success", rerun
    assert rerun["outcomes"]["ok"] >= 1  # what the first daemon did not get to

    monkeypatch.setenv("CMSSYNC_CLIENT_SECRET", daemon_site.sandbox.client_secret)
    monkeypatch.setenv("CMSSYNC_PASSWORD", daemon_site.sandbox.admin_password)
    plan = (await make_plan(open_workspace(daemon_site.root))).plan
    assert plan.actions == (), [(a.kind, a.key, a.op) for a in plan.actions]
    after_interruption = inventory(raw)

    # The same content applied without interruption to a fresh site and state must give the same site.
    again.terminate()
    daemon_site.sandbox.reset()
    shutil.rmtree(daemon_site.state_dir)
    report = await apply_site(open_workspace(daemon_site.root), ApplyRequest())
    assert report is not None
    assert not report.failed
    fresh = RawSite(daemon_site.sandbox)
    try:
        assert after_interruption == inventory(fresh)
    finally:
        fresh.close()


def inventory(raw: RawSite) -> dict[str, object]:
    """What a duplicate would show in: file names, group names, page paths under each parent, blocks of home."""
    pages: dict[str, list[str]] = {}
    for path in ("/", "/about", "/services"):
        page = raw.page_by_path(path)
        assert page is not None
        pages[path] = sorted(child["path"] for child in raw.get(f"/pages/{page['id']}/children"))
    return {
        "files": sorted(PurePosixPath(f["url"]).name for f in raw.all("/files")),
        "groups": sorted(g["name"] for g in raw.all("/groups")),
        "users": sorted(u["username"] for u in raw.all("/users")),
        "pages": pages,
        "home": [kind for kind, _ in raw.blocks("/", "Main")],
        "about": raw.blocks("/about", "Main"),
    }


def test_incremental_runs_reuse_the_default_site_a_full_run_read(daemon_site: DaemonSite, raw: RawSite) -> None:
    """The default site is read by full runs only: a one-block edit costs the page read and its writes."""
    daemon = started(daemon_site)
    sandbox = daemon_site.sandbox

    sandbox.clear_stats()
    mark = daemon.mark()
    daemon_site.edit("pages/about.yaml", FOUNDED, "Example Co. was founded in 2015")
    run = daemon.wait_for("run finished", after=mark, trigger="file")
    assert run["result"] == "success", run
    edit = requests_by_route(sandbox)  # before the test reads the page itself
    assert "GET /sites/default" not in edit, edit
    assert edit.get("PUT /page_versions/{pageID}/{versionID}") == 1, edit
    assert run["requests"] == sum(edit.values())
    assert "Example Co. was founded in 2015" in about_text(raw)

    sandbox.clear_stats()
    mark = daemon.mark()
    daemon.signal(signal.SIGHUP)
    full = daemon.wait_for("run finished", after=mark, trigger="signal")
    assert full["result"] == "success", full
    assert requests_by_route(sandbox).get("GET /sites/default") == 1
