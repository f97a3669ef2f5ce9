"""The sandbox versions a stack edit as the real 9.3.1 site did in ``tests/conformance/concrete-9.3.1/
stack-writes.jsonl`` (recorded with ``tests/realsite/record_stack_writes.py``, issue 37 item 6): cmssync's edit of a
stack that updates one block and adds three, approved at the version the last write answered, and the same edit
killed after the update and the first add, then finished by the next run.

Recorded: every write to a stack makes a version of its own, and each is copied from the stack's *recent* version
(the previous write's), so the last version holds every write and approving it publishes them all. The sandbox used
to copy a stack's block add from the live version: an update and three adds published only the last add.

Compared per read: the versions (id relative to the first, approved), and of the recent or live version its id
and the Main area's blocks as the writes left them (a seeded block ``seed``, cmssync's by their content).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import httpx
import pytest

from cmssync.emulator.embedded import Sandbox
from tests.support.tokens import sandbox_token

RECORDING = Path(__file__).resolve().parents[1] / "conformance" / "concrete-9.3.1" / "stack-writes.jsonl"
SCOPES = "pages:read pages:update pages:areas:add_block pages:areas:update_block pages:versions:read "
SCOPES += "pages:versions:update"
STACK_IDS = {"stack-writes": 7, "stack-writes-killed": 8}
WRITES = ("update_block", "add_block_1", "add_block_2", "add_block_3")
KILLED_AFTER = 2


def _stack(path: str, page_id: int, blocks: int) -> dict[str, Any]:
    content = [{"type": "content", "value": {"content": f"<div>seeded {n}</div>"}} for n in range(blocks)]
    return {
        "path": path,
        "name": path,
        "type": "core_stack",
        "template": False,
        "id": page_id,
        "areas": {"Main": content},
    }


SEED: dict[str, Any] = {
    "pages": [
        {"path": "/", "name": "Home"},
        {"path": "/!stacks", "name": "Stacks", "type": False, "template": False, "id": 6},
        _stack("/!stacks/footer-column-1", 7, 2),  # recorded: a content and a social_links block
        _stack("/!stacks/footer-column-2", 8, 1),
    ],
    "global_areas": ["Footer Column 1", "Footer Column 2"],
}


def _items(value: Any) -> list[dict[str, Any]]:
    return list(value.get("data", [])) if isinstance(value, dict) else list(value or [])


def _blocks(page: dict[str, Any]) -> tuple[Any, ...]:
    """The version's id and its Main blocks: cmssync's by content, any other as ``seed``."""
    main = next((a for a in _items(page.get("areas")) if a["name"] == "Main"), {"blocks": []})
    shown = tuple(_content(block) if _content(block).startswith("<p>") else "seed" for block in _items(main["blocks"]))
    return int(page["version"]["data"]["id"]), shown


def _content(block: dict[str, Any]) -> str:
    value = block.get("value")
    return str(value.get("content", "")) if isinstance(value, dict) else ""


def _versions(body: Any) -> tuple[tuple[int, bool], ...]:
    return tuple((int(v["id"]), bool(v["is_approved"])) for v in _items(body))


def _recorded(scenario: str) -> list[tuple[str, Any]]:
    facts: list[tuple[str, Any]] = []
    for line in RECORDING.read_text(encoding="utf-8").splitlines():
        exchange = json.loads(line)
        if not exchange["scenario"].startswith(scenario) or exchange["scenario"].split(".")[0] != scenario:
            continue
        step, body = exchange["step"], exchange["response"]["body"]
        if step.startswith("versions."):
            facts.append((step, _versions(body)))
        elif step.startswith(("recent.", "live.")):
            facts.append((step, _blocks(body["data"])))
    return facts


def _replay(http: httpx.Client, scenario: str) -> list[tuple[str, Any]]:
    """cmssync's writes to the scenario's stack, read after each as the recorder did."""
    stack = STACK_IDS[scenario]
    facts: list[tuple[str, Any]] = []

    def reads(what: str) -> None:
        facts.append((f"versions.after_{what}", _versions(http.get(f"/page_versions/{stack}").json())))
        recent = http.get(f"/pages/{stack}", params={"version": "recent", "includes": "areas"}).json()["data"]
        facts.append((f"recent.after_{what}", _blocks(recent)))

    def live(what: str) -> None:
        facts.append(
            (f"live.after_{what}", _blocks(http.get(f"/pages/{stack}", params={"includes": "areas"}).json()["data"]))
        )

    live("nothing")
    reads("nothing")
    first = _items(
        _items(http.get(f"/pages/{stack}", params={"includes": "areas"}).json()["data"]["areas"])[0]["blocks"]
    )
    answered = 0
    for number, step in enumerate(WRITES, start=1):
        if step == "update_block":
            answer = http.put(
                f"/pages/{stack}/Main/{first[0]['id']}", json={"value": {"content": "<p>updated by cmssync</p>"}}
            )
        else:
            content = f"<p>added {step.rsplit('_', 1)[1]}</p>"
            answer = http.post(f"/pages/{stack}/Main", json={"type": "content", "value": {"content": content}})
        answer.raise_for_status()
        answered = int(answer.json()["data"]["page"]["data"]["version"]["data"]["id"])
        reads(step)
        if scenario == "stack-writes-killed" and number == KILLED_AFTER:
            live("kill")
    http.put(f"/page_versions/{stack}/{answered}", json={"is_approved": True}).raise_for_status()
    reads("approve")
    live("approve")
    return facts


@pytest.mark.parametrize("scenario", sorted(STACK_IDS))
def test_a_stack_edit_of_an_update_and_three_adds_is_versioned_as_recorded(
    scenario: str, sandbox: Sandbox, tmp_path: Path
) -> None:
    recorded = _recorded(scenario)
    assert recorded, f"{scenario} is not in {RECORDING.name}"
    seed = tmp_path / "seed.json"
    seed.write_text(json.dumps(SEED), encoding="utf-8")
    sandbox.reset(seed=str(seed), dialect="concrete")
    token = sandbox_token(sandbox, SCOPES)
    with httpx.Client(base_url=sandbox.api_url, headers={"Authorization": f"Bearer {token}"}) as http:
        replayed = _replay(http, scenario)
    assert replayed == recorded
    approved = dict(recorded)["live.after_approve"]
    assert approved[1][-3:] == ("<p>added 1</p>", "<p>added 2</p>", "<p>added 3</p>")  # every write published
