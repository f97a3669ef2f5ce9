"""The sandbox's modification-ordered lists do what the real 9.3.1 site did in ``tests/conformance/concrete-9.3.1/
lists.jsonl`` (recorded with ``tests/realsite/record_lists.py``): the cursor of a tied group, and which edits move a
page or a file to the top of its list (what the daemon's drift feed relies on)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import httpx

from cmssync.emulator.embedded import Sandbox
from tests.emulator.helpers import Clock, connected

RECORDING = Path(__file__).resolve().parents[1] / "conformance" / "concrete-9.3.1" / "lists.jsonl"


def recorded(step: str) -> dict[str, object]:
    for line in RECORDING.read_text(encoding="utf-8").splitlines():
        exchange = json.loads(line)
        if exchange["step"] == step:
            return dict(exchange)
    raise AssertionError(f"{step} is not in {RECORDING.name}")


def _items(value: Any) -> list[dict[str, Any]]:
    return list(value["data"] if isinstance(value, dict) else value)


def ids(http: httpx.Client, route: str, **params: str) -> list[str]:
    return [str(item["id"]) for item in http.get(route, params=params).json()["data"]]


def test_the_cursor_of_the_highest_tied_id_returns_the_rest_of_the_group(sandbox: Sandbox) -> None:
    # recorded: 80 users tied in one second; after=<the highest uID> answered the 79 others (then the older admin)
    note = str(recorded("users.ties.after_highest_uid")["note"])
    assert "Cursor: the tied user with the highest uID" in note
    with connected(sandbox, "empty", "users=80") as http:
        _highest_tied_cursor(http)


def _highest_tied_cursor(http: httpx.Client) -> None:
    group = sorted(int(i) for i in ids(http, "/users", limit="100") if i != "1")
    assert len(group) == 80
    rest = [int(i) for i in ids(http, "/users", limit="100", after=str(group[-1]))]
    assert sorted(i for i in rest if i in group) == group[:-1]


def test_page_edits_and_approvals_move_a_page_to_the_top_block_edits_only_once_approved(
    sandbox: Sandbox, clock: Clock
) -> None:
    assert recorded("feed.pages.after_page_put_unapproved")["response"]["status"] == 200  # type: ignore[index]
    with connected(sandbox, "default") as http:
        _page_moves(http, clock)


def _page_moves(http: httpx.Client, clock: Clock) -> None:
    children = http.get("/pages/1/children", params={"includes": "areas"}).json()["data"]
    page, other = children[0], children[1]
    clock.next_second()  # the lists are dated to the second
    http.put(f"/pages/{page['id']}", json={"name": "Edited"}).raise_for_status()
    assert ids(http, "/pages", limit="1") == [str(page["id"])]  # recorded: feed.pages.after_page_put_unapproved
    clock.next_second()
    areas = _items(http.get(f"/pages/{other['id']}", params={"includes": "areas"}).json()["data"]["areas"])
    area = next(a for a in areas if _items(a["blocks"]))
    block = _items(area["blocks"])[0]
    http.put(f"/pages/{other['id']}/{area['name']}/{block['id']}", json={"value": block["value"]})
    assert ids(http, "/pages", limit="1") == [str(page["id"])]  # recorded: feed.pages.after_block_update_unapproved
    versions = http.get(f"/page_versions/{other['id']}").json()["data"]
    http.put(f"/page_versions/{other['id']}/{versions[0]['id']}", json={"is_approved": True}).raise_for_status()
    assert ids(http, "/pages", limit="1") == [str(other["id"])]  # recorded: feed.pages.after_block_approval


def test_a_file_update_moves_the_file_to_the_top_a_user_update_moves_nothing(sandbox: Sandbox, clock: Clock) -> None:
    with connected(sandbox, "empty", "files=5,users=5,rate=1") as http:
        _file_and_user_moves(http, clock)


def _file_and_user_moves(http: httpx.Client, clock: Clock) -> None:
    oldest_file = ids(http, "/files", limit="10")[-1]
    oldest_user = ids(http, "/users", limit="10")[-1]
    users_before = ids(http, "/users", limit="10")
    clock.next_second()
    http.put(f"/files/{oldest_file}", json={"title": "Retitled"}).raise_for_status()
    assert ids(http, "/files", limit="1") == [oldest_file]  # recorded: feed.files.after_file_update
    http.put(f"/users/{oldest_user}", json={"email": "changed@example.com"}).raise_for_status()
    assert ids(http, "/users", limit="10") == users_before  # recorded: feed.users.after_user_update
