"""Record what an editor's stack edit changes in the cheapest reads of that stack: ``python -m
tests.realsite.record_stack_feed ENV_FILE OUT`` (OUT: ``tests/conformance/concrete-9.3.1/stack-feed.jsonl``).

Opt-in, against a freshly reset real Concrete 9.3.1 site of ``../shared/realsite/``. Stacks are in no list
(``GET /pages`` leaves them out), so the drift feed can only read a managed stack by its id. Scenario
``stack-feed``: the stack ``footer-column-1`` read as ``GET /pages/{id}`` and ``GET /pages/{id}?version=recent``
(plus ``GET /pages?limit=5``) before anything, after a block update through the API (a new draft version, public at
once for a stack: ``stacks.jsonl``), after that version is approved, after a block added and left unapproved, and
after two page updates (``PUT /pages/{id}``), one second apart so that dates differ; then the stack's versions
(every write made a version of its own: a stack never reuses its draft as a page does). Only HTTP, plus ``mysql``
to find the stack's id (the env's ``CONCRETE_DB``).
"""

from __future__ import annotations

import sys
import time
from typing import Any
from urllib.parse import quote

from tests.realsite.record_lists import PREFIX, Recorder, items_of, record

HANDLE = "footer-column-1"


class StackRecorder(Recorder):
    def reads(self, stack: int, what: str) -> None:
        time.sleep(0.2)
        self.call(f"read.after_{what}", "GET", f"{PREFIX}/pages/{stack}", note=f"after {what}")
        self.call(
            f"read_recent.after_{what}",
            "GET",
            f"{PREFIX}/pages/{stack}",
            params={"version": "recent"},
            note=f"after {what}",
        )
        self.call(f"list.after_{what}", "GET", f"{PREFIX}/pages", params={"limit": "5"}, note=f"after {what}")
        time.sleep(1.1)  # the next change gets a later second

    def newest_version(self, stack: int) -> int:
        versions = self.call("", "GET", f"{PREFIX}/page_versions/{stack}").json()["data"]
        return max(int(v["id"]) for v in versions)

    def stack_feed(self) -> None:
        self.scenario = "stack-feed"
        stack = int(self.sql(f"SELECT cID FROM PagePaths WHERE cPath = '/!stacks/{HANDLE}'")[0][0])
        self.reads(stack, "nothing")
        page = self.call("", "GET", f"{PREFIX}/pages/{stack}", params={"includes": "areas"}).json()["data"]
        area = next(a for a in items_of(page.get("areas")) if items_of(a["blocks"]))
        block = items_of(area["blocks"])[0]
        route = f"{PREFIX}/pages/{stack}/{quote(area['name'], safe='')}"
        value: dict[str, Any] = {"content": "<p>edited by an editor</p>"} if block.get("type") == "content" else {}
        self.call("edit.update_block", "PUT", f"{route}/{block['id']}", json={"value": value or block.get("value")})
        self.reads(stack, "block_update")
        draft = self.newest_version(stack)
        self.call("edit.approve", "PUT", f"{PREFIX}/page_versions/{stack}/{draft}", json={"is_approved": True})
        self.reads(stack, "approval")
        self.call("edit.add_block", "POST", route, json={"type": "content", "value": {"content": "<p>added</p>"}})
        self.reads(stack, "block_add_unapproved")
        self.call("edit.put_page", "PUT", f"{PREFIX}/pages/{stack}", json={"name": "Footer Column 1 (edited)"})
        self.reads(stack, "page_put")
        self.call("edit.put_page_again", "PUT", f"{PREFIX}/pages/{stack}", json={"name": "Footer Column 1 (again)"})
        self.reads(stack, "page_put_again")
        self.call("versions.end", "GET", f"{PREFIX}/page_versions/{stack}", note="the stack's versions at the end")


if __name__ == "__main__":
    sys.exit(record(sys.argv[1:], StackRecorder, StackRecorder.stack_feed))
