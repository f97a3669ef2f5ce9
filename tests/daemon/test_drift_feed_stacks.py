"""The drift feed and stacks (global areas), against the sandbox: a stack is in no list, so on its turn (every
second poll) one managed stack is read by its id (``GET /pages/{id}?version=recent``, what
``tests/conformance/concrete-9.3.1/stack-feed.jsonl`` shows an edit moves); an editor's edit of it is run for —
reverted in enforce mode, notified in report mode — and the feed still makes one request a poll. Counts, not
timings."""

from __future__ import annotations

import copy
import json
import time
from typing import Any

import httpx
import pytest

from cmssync.emulator.embedded import Sandbox
from cmssync.emulator.seeds import DEFAULT_SEED
from tests.daemon.receiver import receiver
from tests.support.daemon import POLL, TOKEN_ROUTE, DaemonProcess, DaemonSite, idle
from tests.support.tokens import sandbox_token

pytestmark = pytest.mark.slow

FOOTER = 901
EDITED = "<p>Footer changed on the site</p>"


def _content(text: str) -> dict[str, Any]:
    return {"type": "content", "value": {"content": f"<p>{text}</p>"}}


@pytest.fixture
def stack_site(daemon_site: DaemonSite) -> DaemonSite:
    """The daemon's site with two stacks on the sandbox (the footer every page shows, and a sidebar) that its content
    changes: the startup run writes both, so the state manages them."""
    seed = copy.deepcopy(DEFAULT_SEED)
    seed["pages"] += [
        {"path": "/!stacks", "name": "Stacks", "type": False, "template": False, "id": 900},
        {"path": "/!stacks/footer", "name": "Footer", "type": "core_stack", "template": False, "id": FOOTER,
         "areas": {"Main": [_content("Old footer")]}},
        {"path": "/!stacks/sidebar", "name": "Sidebar", "type": "core_stack", "template": False, "id": FOOTER + 1,
         "areas": {"Main": [_content("Old sidebar")]}},
    ]  # fmt: skip
    seed["global_areas"] = ["Footer"]
    seed_file = daemon_site.root.parent / "seed.json"
    seed_file.write_text(json.dumps(seed), encoding="utf-8")
    daemon_site.sandbox.reset(seed=str(seed_file))
    stacks = daemon_site.root / "stacks"
    stacks.mkdir()
    for number, name, text in ((FOOTER, "Footer", "Footer text"), (FOOTER + 1, "Sidebar", "Sidebar text")):
        area = f"areas:\n  Main:\n    - type: content\n      value: {{content: '<p>{text}</p>'}}\n"
        (stacks / f"{name.lower()}.yaml").write_text(f"id: {number}\nname: {name}\n{area}", encoding="utf-8")
    return daemon_site


class Editor:
    """Someone editing the footer stack through the sandbox's API: a block updated (a new version) and approved."""

    def __init__(self, sandbox: Sandbox) -> None:
        scopes = "pages:read pages:areas:update_block pages:versions:read pages:versions:update"
        token = sandbox_token(sandbox, scopes)
        self.http = httpx.Client(base_url=sandbox.api_url, headers={"Authorization": f"Bearer {token}"}, timeout=10)

    def blocks(self) -> list[str]:
        page = self.http.get(f"/pages/{FOOTER}", params={"includes": "areas", "version": "recent"}).json()["data"]
        return [b["value"].get("content") for a in page["areas"]["data"] for b in a["blocks"]["data"]]

    def edit_footer(self) -> None:
        page = self.http.get(f"/pages/{FOOTER}", params={"includes": "areas"}).json()["data"]
        block = page["areas"]["data"][0]["blocks"]["data"][0]
        answer = self.http.put(f"/pages/{FOOTER}/Main/{block['id']}", json={"value": {"content": EDITED}})
        answer.raise_for_status()
        version = answer.json()["data"]["page"]["data"]["version"]["data"]["id"]
        self.http.put(f"/page_versions/{FOOTER}/{version}", json={"is_approved": True}).raise_for_status()


def stack_polls(daemon: DaemonProcess) -> float:
    return sum(
        v for (name, labels), v in daemon.metrics().items()
        if name == "cmssync_drift_feed_polls_total" and ("list", "stack") in labels
    )  # fmt: skip


def wait_for_stack_polls(daemon: DaemonProcess, count: int) -> None:
    """Each managed stack read once at least: their first reads set where the feed starts."""
    deadline = time.monotonic() + 10
    while stack_polls(daemon) < count:
        assert time.monotonic() < deadline, "the drift feed never read the stacks"
        time.sleep(0.05)


def test_an_editors_stack_edit_is_run_for_and_reverted(stack_site: DaemonSite) -> None:
    daemon = stack_site.reverting().start(feed=POLL)
    daemon.wait_for("run finished", trigger="startup", result="success")
    wait_for_stack_polls(daemon, 2)
    made, requests = idle(daemon, stack_site.sandbox)
    assert made >= 3
    assert requests <= made + 1  # one request a poll, a stack's read included
    editor = Editor(stack_site.sandbox)
    mark = daemon.mark()
    editor.edit_footer()
    started = daemon.wait_for("run started", after=mark, trigger="drift", timeout=10)
    assert started["scope"] == {"pages": ["/!stacks/footer"]}
    run = daemon.wait_for("run finished", after=mark, trigger="drift")
    assert run["result"] == "success"
    assert run["outcomes"]["ok"] == 1
    assert editor.blocks() == ["<p>Footer text</p>"]  # reverted
    time.sleep(1.5)  # its own revert moved the stack again: not taken for drift
    assert daemon.runs(trigger="drift")[-1] == run
    editor.http.close()
    daemon.terminate()


def test_report_mode_notifies_an_editors_stack_edit_and_writes_nothing(stack_site: DaemonSite) -> None:
    first = stack_site.start()  # applies the stacks: the state manages them
    first.wait_for("run finished", trigger="startup", result="success")
    assert first.terminate()[0] == 0
    with receiver() as hook:
        stack_site.env["HOOK_URL"] = hook.url
        daemon = stack_site.start("--mode", "report", feed=POLL, notify=[{"url": "${env:HOOK_URL}"}])
        daemon.wait_for("run finished", trigger="startup", result="success")
        wait_for_stack_polls(daemon, 2)
        editor = Editor(stack_site.sandbox)
        mark = daemon.mark()
        editor.edit_footer()
        stack_site.sandbox.clear_stats()  # the editor's writes: what follows is the daemon's
        run = daemon.wait_for("run finished", after=mark, trigger="drift", timeout=10)
        assert run["mode"] == "report"
        hook.wait_for(1, timeout=10)
        assert hook.events() == ["drift_found"]
        assert [o["id"] for o in hook.deliveries[0].document["objects"]] == ["stack:footer"]
        writes = [e for e in stack_site.sandbox.stats()["requests"] if e["method"] not in ("GET", "HEAD")]
        assert [e["route"] for e in writes] in ([], [TOKEN_ROUTE])
        assert editor.blocks() == [EDITED]
        editor.http.close()
        daemon.terminate()
