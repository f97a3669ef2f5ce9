"""Fault injection, statistics and the control endpoints."""

from __future__ import annotations

import time

import httpx
import pytest

from cmssync.emulator.embedded import Sandbox
from cmssync.emulator.faults import FaultRuleError, parse_rule
from tests.emulator.helpers import client, http_request, token

NEW_PAGE = {"parent": 1, "name": "Fault Page", "type": "page", "template": "full"}


@pytest.mark.parametrize(
    ("rule", "status", "header"),
    [("500:1", 500, None), ("503:1:retry-after=3", 503, "3"), ("429:1:retry-after=1", 429, "1"), ("429:1", 429, "1")],
)
def test_status_faults(sandbox: Sandbox, api: httpx.Client, rule: str, status: int, header: str | None) -> None:
    sandbox.set_faults([rule])
    response = api.get("/system/info")
    assert response.status_code == status
    assert response.headers.get("retry-after") == header
    stats = sandbox.stats()  # control endpoints are never faulted nor counted
    assert stats["by_route"] == {"POST /oauth/2.0/token": 1, "GET /system/info": 1}


def test_drop_closes_the_connection_without_an_answer(sandbox: Sandbox, api: httpx.Client) -> None:
    sandbox.set_faults(["drop:1"])
    with pytest.raises(httpx.RemoteProtocolError):
        api.get("/system/info")
    sandbox.clear_faults()
    assert api.get("/system/info").status_code == 200


def test_commit_then_500_does_the_change(sandbox: Sandbox, api: httpx.Client) -> None:
    sandbox.set_faults(["commit-then-500:1:method=POST"])
    response = api.post("/pages", json=NEW_PAGE)
    assert response.status_code == 500
    sandbox.clear_faults()
    names = [p["name"] for p in api.get("/pages/1/children").json()["data"]]
    assert "Fault Page" in names


def test_revoke_token(sandbox: Sandbox, api: httpx.Client) -> None:
    sandbox.set_faults(["revoke-token:1:times=1"])
    first = api.get("/system/info")
    assert first.status_code == 401
    assert first.json()["hint"] == "Access token has been revoked"
    second = api.get("/system/info")  # the fault is spent, the token stays revoked
    assert second.status_code == 401
    with client(sandbox, token(sandbox)) as fresh:
        assert fresh.get("/system/info").status_code == 200


def test_latency(sandbox: Sandbox, api: httpx.Client) -> None:
    sandbox.set_faults(["latency:1:ms=120"])
    started = time.perf_counter()
    assert api.get("/system/info").status_code == 200
    assert time.perf_counter() - started >= 0.12


def test_filters_by_method_and_path(sandbox: Sandbox, api: httpx.Client) -> None:
    sandbox.set_faults(["500:1:method=PUT", "503:1:path=*/users*"])
    assert api.get("/pages/1").status_code == 200
    assert api.put("/pages/2", json={}).status_code == 500
    assert api.get("/users").status_code == 503


def test_filters_by_query(sandbox: Sandbox, api: httpx.Client) -> None:
    # a read that renders the page fails; the same read without the render answers
    sandbox.set_faults(["500:1:path=/ccm/api/1.0/pages/1$:query=areas\\.content"])
    assert api.get("/pages/1", params={"includes": "areas,areas.content"}).status_code == 500
    assert api.get("/pages/1", params={"includes": "areas"}).status_code == 200
    with pytest.raises(FaultRuleError, match="query"):
        parse_rule("500:1:query=(")


def test_times_makes_a_one_shot_fault(sandbox: Sandbox, api: httpx.Client) -> None:
    sandbox.set_faults(["500:1:times=2"])
    assert [api.get("/system/info").status_code for _ in range(3)] == [500, 500, 200]


def test_seeded_faults_repeat(sandbox: Sandbox, api: httpx.Client) -> None:
    runs = []
    for _ in range(2):
        sandbox.set_faults(["500:0.5"], seed=42)
        runs.append([api.get("/system/info").status_code for _ in range(12)])
    assert runs[0] == runs[1]
    assert set(runs[0]) == {200, 500}


def test_faults_apply_to_the_token_endpoint(sandbox: Sandbox) -> None:
    sandbox.set_faults(["503:1:path=/oauth/2.0/token"])
    response = http_request("POST", sandbox.token_url, data={"grant_type": "client_credentials"})
    assert response.status_code == 503


def test_bad_rules_are_refused(sandbox: Sandbox) -> None:
    with pytest.raises(ValueError, match="unknown kind"):
        sandbox.set_faults(["explode:1"])
    for rule in ("500", "500:2", "500:x", "500:1:colour=red", "429:1:retry-after=soon", "500:1:path=("):
        with pytest.raises(FaultRuleError):
            parse_rule(rule)


def test_startup_faults_and_global_latency() -> None:
    with (
        Sandbox(seed="empty", faults=["503:1:method=DELETE"], latency_ms=30) as sandbox,
        client(sandbox, token(sandbox)) as api,
    ):
        started = time.perf_counter()
        assert api.get("/system/info").status_code == 200
        assert time.perf_counter() - started >= 0.03
        assert api.delete("/users/1").status_code == 503


def test_stats_count_by_method_route_and_status(sandbox: Sandbox, api: httpx.Client) -> None:
    api.get("/pages/1")
    api.get("/pages/2")
    api.get("/pages/999999")
    api.get("/nope")
    stats = sandbox.stats()
    assert stats["by_route"]["GET /pages/{pageID}"] == 3
    assert stats["by_route"]["POST /oauth/2.0/token"] == 1
    assert stats["by_route"]["GET (unrouted)"] == 1
    assert {"method": "GET", "route": "/pages/{pageID}", "status": 404, "count": 1} in stats["requests"]
    sandbox.clear_stats()
    assert sandbox.stats()["total"] == 0


def test_reset_reseeds_and_forgets_tokens(sandbox: Sandbox, api: httpx.Client) -> None:
    api.post("/pages", json=NEW_PAGE)
    sandbox.set_faults(["500:0.1"])
    sandbox.reset(seed="empty")
    with client(sandbox, token(sandbox)) as fresh:
        assert fresh.get("/pages/1/children").json()["data"] == []
    assert api.get("/system/info").status_code == 401  # tokens are gone with the old database
    info = http_request("GET", sandbox.url + "/__emulator/faults").json()
    assert info["rules"] == []


def test_reset_refuses_unknown_seeds_and_dialects(sandbox: Sandbox) -> None:
    with pytest.raises(ValueError, match="seed"):
        sandbox.reset(seed="/no/such/seed.json")
    with pytest.raises(ValueError, match="dialect"):
        sandbox.reset(dialect="klingon")


def test_revoke_token_leaves_requests_without_a_bearer_alone(sandbox: Sandbox) -> None:
    sandbox.set_faults(["revoke-token:1"])
    response = http_request(
        "POST",
        sandbox.token_url,
        data={
            "grant_type": "client_credentials",
            "client_id": sandbox.client_id,
            "client_secret": sandbox.client_secret,
        },
    )
    assert response.status_code == 200
