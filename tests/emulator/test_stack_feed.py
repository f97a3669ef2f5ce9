"""The sandbox answers a stack's own read as the real 9.3.1 site did in ``tests/conformance/concrete-9.3.1/
stack-feed.jsonl`` (recorded with ``tests/realsite/record_stack_feed.py``): no list shows a stack, and after each
edit the stack's ``GET /pages/{id}`` and ``GET /pages/{id}?version=recent`` show the same facts — the version each
names (relative to the first), whether it is approved, whether ``date_last_updated`` moved and the name. What the
daemon's drift feed reads of a managed stack on its turn."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import httpx

from cmssync.emulator.embedded import Sandbox
from tests.emulator.helpers import Clock
from tests.support.tokens import sandbox_token

RECORDING = Path(__file__).resolve().parents[1] / "conformance" / "concrete-9.3.1" / "stack-feed.jsonl"
SCOPES = "pages:read pages:update pages:areas:add_block pages:areas:update_block pages:versions:read "
SCOPES += "pages:versions:update"
STAGES = ("nothing", "block_update", "approval", "block_add_unapproved", "page_put", "page_put_again")
SEED: dict[str, Any] = {
    "pages": [
        {"path": "/", "name": "Home"},
        {"path": "/about", "name": "About"},
        {"path": "/!stacks", "name": "Stacks", "type": False, "template": False, "id": 6},
        {
            "path": "/!stacks/footer-column-1",
            "name": "Footer Column 1",
            "type": "core_stack",
            "template": False,
            "id": 7,
            "areas": {"Main": [{"type": "content", "value": {"content": "<p>Footer</p>"}}]},
        },
    ],
    "global_areas": ["Footer Column 1"],
}


def _exchanges() -> dict[str, dict[str, Any]]:
    lines = RECORDING.read_text(encoding="utf-8").splitlines()
    return {exchange["step"]: exchange for exchange in map(json.loads, lines)}


def _facts(reads: list[dict[str, Any]]) -> list[tuple[Any, ...]]:
    """Per read: the version it names relative to the first read's, approved, date moved since the first, name."""
    first = reads[0]
    return [
        (
            int(page["version"]["data"]["id"]) - int(first["version"]["data"]["id"]),
            bool(page["version"]["data"]["is_approved"]),
            page["date_last_updated"] != first["date_last_updated"],
            page["name"].replace(first["name"], "<name>"),
        )
        for page in reads
    ]


def _versions(versions: list[dict[str, Any]]) -> list[tuple[int, bool]]:
    return [(int(v["id"]), bool(v["is_approved"])) for v in versions]


def _recorded() -> tuple[list[tuple[Any, ...]], list[tuple[Any, ...]], list[str]]:
    steps = _exchanges()
    live = [steps[f"read.after_{stage}"]["response"]["body"]["data"] for stage in STAGES]
    recent = [steps[f"read_recent.after_{stage}"]["response"]["body"]["data"] for stage in STAGES]
    listed = [
        str(page["path"]) for stage in STAGES for page in steps[f"list.after_{stage}"]["response"]["body"]["data"]
    ]
    return _facts(live), _facts(recent), listed


def test_a_stack_edit_shows_in_its_own_reads_as_recorded(sandbox: Sandbox, tmp_path: Path, clock: Clock) -> None:
    live_facts, recent_facts, listed = _recorded()
    assert not any(path.startswith("/!stacks") for path in listed)  # recorded: no list shows a stack
    seed = tmp_path / "seed.json"
    seed.write_text(json.dumps(SEED), encoding="utf-8")
    sandbox.reset(seed=str(seed), dialect="concrete")
    token = sandbox_token(sandbox, SCOPES)
    with httpx.Client(base_url=sandbox.api_url, headers={"Authorization": f"Bearer {token}"}) as http:
        live, recent, shown = _replay(http, clock)
        versions = http.get("/page_versions/7").json()["data"]
    assert _facts(live) == live_facts
    assert _facts(recent) == recent_facts
    assert not any(path.startswith("/!stacks") for path in shown)
    # recorded: every write to a stack made a version of its own (a page's writes share one draft)
    assert _versions(versions) == _versions(_exchanges()["versions.end"]["response"]["body"]["data"])


def _replay(http: httpx.Client, clock: Clock) -> tuple[list[dict[str, Any]], ...]:
    live: list[dict[str, Any]] = []
    recent: list[dict[str, Any]] = []
    shown: list[str] = []

    def read() -> None:
        live.append(http.get("/pages/7").json()["data"])
        recent.append(http.get("/pages/7", params={"version": "recent"}).json()["data"])
        shown.extend(str(page["path"]) for page in http.get("/pages", params={"limit": "5"}).json()["data"])
        clock.next_second()  # the recording waited a second between edits

    read()
    areas = http.get("/pages/7", params={"includes": "areas"}).json()["data"]["areas"]["data"]
    block = areas[0]["blocks"]["data"][0]
    http.put(f"/pages/7/Main/{block['id']}", json={"value": {"content": "<p>edited</p>"}}).raise_for_status()
    read()
    draft = max(int(v["id"]) for v in http.get("/page_versions/7").json()["data"])
    http.put(f"/page_versions/7/{draft}", json={"is_approved": True}).raise_for_status()
    read()
    http.post("/pages/7/Main", json={"type": "content", "value": {"content": "<p>added</p>"}}).raise_for_status()
    read()
    http.put("/pages/7", json={"name": "Footer Column 1 (edited)"}).raise_for_status()
    read()
    http.put("/pages/7", json={"name": "Footer Column 1 (again)"}).raise_for_status()
    read()
    return live, recent, shown
