"""Suspend and resume: the mode a run takes, and control endpoints that answer loopback connections only."""

from __future__ import annotations

import httpx
import pytest
from prometheus_client import CollectorRegistry

from cmssync.config import DaemonSettings
from cmssync.daemon.health import build_app
from cmssync.daemon.main import DaemonConfig
from cmssync.daemon.metrics import DaemonMetrics
from cmssync.daemon.modes import ModeControl, ModeReadiness, control_routes, is_loopback
from cmssync.errors import ConfigError


def gauge(metrics: DaemonMetrics, name: str, **labels: str) -> float:
    value = metrics.registry.get_sample_value(name, labels or None)
    assert value is not None, name
    return value


def test_suspend_makes_runs_report_only_and_resume_asks_for_a_full_run() -> None:
    metrics = DaemonMetrics(CollectorRegistry())
    resumed: list[str] = []
    control = ModeControl("enforce", metrics, on_resume=lambda: resumed.append("run"))
    assert control.effective == "enforce"
    assert control.suspend("SIGUSR1") is True
    assert control.suspend("SIGUSR1") is False  # already suspended: nothing changes
    assert control.effective == "report"
    assert gauge(metrics, "cmssync_daemon_suspended") == 1
    assert gauge(metrics, "cmssync_daemon_mode", mode="report") == 1
    assert control.document()["suspended_by"] == "SIGUSR1"
    assert control.resume("SIGUSR2") is True
    assert control.resume("SIGUSR2") is False
    assert resumed == ["run"]
    assert control.effective == "enforce"
    assert gauge(metrics, "cmssync_daemon_mode", mode="enforce") == 1
    assert "suspended_since" not in control.document()


def test_a_report_mode_daemon_stays_report_when_resumed() -> None:
    control = ModeControl("report", DaemonMetrics(CollectorRegistry()))
    control.suspend("test")
    control.resume("test")
    assert control.effective == "report"


def app_and_control() -> tuple[ModeControl, httpx.AsyncClient, httpx.AsyncClient]:
    metrics = DaemonMetrics(CollectorRegistry())
    control = ModeControl("enforce", metrics)
    readiness = ModeReadiness(control=control)
    app = build_app(readiness, metrics)
    for route in control_routes(control, lambda: {"status": "ok", **control.document()}):
        app.router.routes.append(route)
    local = httpx.AsyncClient(transport=httpx.ASGITransport(app=app, client=("127.0.0.1", 5000)), base_url="http://d")
    remote = httpx.AsyncClient(transport=httpx.ASGITransport(app=app, client=("10.1.2.3", 5000)), base_url="http://d")
    return control, local, remote


async def test_control_endpoints_refuse_other_hosts_and_browsers() -> None:
    control, local, remote = app_and_control()
    async with local, remote:
        refused = await remote.post("/suspend")
        assert refused.status_code == 403
        assert "loopback" in refused.json()["error"]
        assert control.suspended is False
        assert (await local.post("/suspend", headers={"Origin": "http://page.example"})).status_code == 403
        assert control.suspended is False
        assert (await local.get("/suspend")).status_code == 405  # a link or an <img> cannot suspend it
        answer = await local.post("/suspend", headers={"User-Agent": "curl/8"})
        assert answer.json() == {
            "changed": True,
            **control.document(),
        }
        assert control.suspended_by == "POST /suspend (curl/8)"
        ready = await local.get("/healthz")  # 503: no run finished yet, but the mode is shown
        assert ready.json()["suspended"] is True
        assert (await remote.get("/status")).json()["suspended"] is True  # reading is allowed from anywhere
        assert (await remote.post("/resume")).status_code == 403
        assert (await local.post("/resume")).json()["suspended"] is False


@pytest.mark.parametrize(
    ("host", "expected"), [("127.0.0.1", True), ("127.8.0.2", True), ("::1", True), ("10.0.0.1", False), ("", False)]
)
def test_is_loopback(host: str, expected: bool) -> None:
    assert is_loopback(host) is expected


def test_mode_option_wins_over_the_setting() -> None:
    settings = DaemonSettings(mode="report")
    assert DaemonConfig.from_settings(settings, None).mode == "report"
    assert DaemonConfig.from_settings(settings, None, mode="enforce").mode == "enforce"
    with pytest.raises(ConfigError, match="unknown daemon mode"):
        DaemonConfig.from_settings(settings, None, mode="observe")


def test_the_site_address_for_notifications_has_no_credentials() -> None:
    config = DaemonConfig.from_settings(DaemonSettings(), None, site="https://bot:pw@cms.example.com:8443/")
    assert config.site == "https://cms.example.com:8443"
