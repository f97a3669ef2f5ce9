"""Record what an editor's edit of a page in a second locale tree changes in the reads the drift feed makes of that
tree: ``python -m tests.realsite.record_tree_feed ENV_FILE OUT`` (OUT:
``tests/conformance/concrete-9.3.1/tree-feed.jsonl``).

Opt-in, against a freshly reset real multilingual Concrete 9.3.1 site of ``../shared/realsite/`` (``LOCALES=de_DE``).
``GET /pages`` lists the default tree only (``locales.jsonl``), so the feed watches another tree's managed pages
through the children list of their parent and the tree's home read on its own (``cmssync.daemon.tree_feed``).
Scenario ``tree-feed``: the second tree found through ``GET /sites/default?includes=locales``; its home's children
list (no includes) and the home read by id before anything, after a block update of the home's first child (a
draft), after that version is approved, and after a block update of the home itself and its approval, one second
apart so that dates differ. Only HTTP.
"""

from __future__ import annotations

import sys
import time
from pathlib import Path
from typing import Any
from urllib.parse import quote

from bench.realsite_bench import read_env
from tests.realsite.record_lists import PREFIX, Recorder, items_of


class TreeRecorder(Recorder):
    def reads(self, home: int, what: str) -> None:
        time.sleep(0.2)
        self.call(f"children.after_{what}", "GET", f"{PREFIX}/pages/{home}/children", note=f"after {what}")
        self.call(f"home.after_{what}", "GET", f"{PREFIX}/pages/{home}", note=f"after {what}")
        time.sleep(1.1)  # the next change gets a later second

    def edit(self, page_id: int, what: str) -> None:
        page = self.call("", "GET", f"{PREFIX}/pages/{page_id}", params={"includes": "areas"}).json()["data"]
        area = next(
            a for a in items_of(page.get("areas")) if any(b.get("type") == "content" for b in items_of(a["blocks"]))
        )
        block = next(b for b in items_of(area["blocks"]) if b.get("type") == "content")
        route = f"{PREFIX}/pages/{page_id}/{quote(area['name'], safe='')}/{block['id']}"
        value: dict[str, Any] = {"content": f"<p>edited by an editor ({what})</p>"}
        self.call(f"edit.{what}.update_block", "PUT", route, json={"value": value})

    def approve(self, page_id: int, what: str) -> None:
        versions = self.call("", "GET", f"{PREFIX}/page_versions/{page_id}").json()["data"]
        newest = max(int(v["id"]) for v in versions)
        self.call(
            f"edit.{what}.approve", "PUT", f"{PREFIX}/page_versions/{page_id}/{newest}", json={"is_approved": True}
        )

    def tree_feed(self) -> None:
        self.scenario = "tree-feed"
        site = self.call("site", "GET", f"{PREFIX}/sites/default", params={"includes": "locales"}).json()["data"]
        home = next(
            int(locale["home_page_id"])
            for locale in items_of(site["locales"])
            if int(locale["home_page_id"]) != int(site["home_page_id"])
        )
        self.reads(home, "nothing")
        children = self.call("", "GET", f"{PREFIX}/pages/{home}/children").json()["data"]
        child = next(int(c["id"]) for c in children if self._has_content(int(c["id"])))
        self.edit(child, "child")
        self.reads(home, "child_block_update")
        self.approve(child, "child")
        self.reads(home, "child_approval")
        self.edit(home, "home")
        self.reads(home, "home_block_update")
        self.approve(home, "home")
        self.reads(home, "home_approval")

    def _has_content(self, page_id: int) -> bool:
        page = self.call("", "GET", f"{PREFIX}/pages/{page_id}", params={"includes": "areas"}).json()["data"]
        return any(b.get("type") == "content" for a in items_of(page.get("areas")) for b in items_of(a["blocks"]))


def main(argv: list[str]) -> int:
    recorder = TreeRecorder(read_env(Path(argv[0])), Path(argv[1]))
    recorder.login()
    recorder.tree_feed()
    recorder.out.close()
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
