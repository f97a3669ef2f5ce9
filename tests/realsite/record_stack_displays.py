"""Record what the REST API shows of a stack display (``core_stack_display``, a stack placed in a page's area) and
how one is written: ``python -m tests.realsite.record_stack_displays ENV_FILE OUT`` (OUT:
``tests/conformance/concrete-9.3.1/stack-displays.jsonl``).

Opt-in, against a freshly reset real Concrete 9.3.1 site of ``../shared/realsite/`` (``atomik_full``: six stacks,
no stack display anywhere). One scenario, ``stack-displays``, in order (the site's state carries over):

* ``setup.*``: the stacks' pages (``GET /pages/{id}?includes=areas,areas.content`` of each, ids from ``PagePaths``);
  a content block with a marker (``stack-display-marker-sidebar``, ``-column1``, ``-column2``) added to ``Blog
  Sidebar``, ``Footer Column 1`` and ``Footer Column 2`` and approved, so each one's render is told apart (the
  footer columns are also global areas: every public page shows their markers).
* ``add.*``: a page under home; a content block, a display of ``Blog Sidebar`` and one of ``Footer Column 1`` added
  with ``{"stID": <the stack's page id>}``; approval.
* ``read.*``: the page with ``areas``, ``areas,areas.content``, ``content``, ``files``; ``GET /blocks/{display}``
  with and without ``includes=pages``; the public page.
* ``update.*``: ``PUT`` of the second display with ``{"stID": <Footer Column 2>}``; the page's recent and live reads
  with the render; approval; live read; public page.
* ``draft.*``: a content block with a second marker added to ``Blog Sidebar`` without approving it; the page's
  render and public page (does a display show a stack's draft?); the draft approved again afterwards.
* ``odd.*``: adds with ``{}`` (no ``stID``), ``{"stID": "<the stack's handle>"}``, ``{"stID": 999999}``,
  ``{"stID": <a page that is no stack>}``; each followed by the page's recent render.
* ``delete.*``: a display deleted from the page.

Only HTTP, plus ``mysql`` to find the stacks' ids (the env's ``CONCRETE_DB``).
"""

from __future__ import annotations

import re
import sys
from typing import Any

from tests.realsite.record_lists import PREFIX, Recorder, items_of, record

MARKER = "stack-display-marker"


class StackDisplayRecorder(Recorder):
    def stacks(self) -> dict[str, int]:
        rows = self.sql("SELECT cPath, cID FROM PagePaths WHERE cPath LIKE '/!stacks/%' ORDER BY cID")
        return {path.removeprefix("/!stacks/"): int(cid) for path, cid in rows}

    def rendered(self, step: str, page: int, note: str, **params: str) -> str:
        """The page read with its areas rendered; the note says which stack markers each area's render holds."""
        answer = self.call(step, "GET", f"{PREFIX}/pages/{page}", params={"includes": "areas,areas.content", **params})
        body = answer.json().get("data", {})
        found = []
        for area in items_of(body.get("areas")):
            raw = (area.get("content") or {}).get("data", {}).get("raw", "")
            blocks = [(b["id"], b["type"]) for b in items_of(area.get("blocks"))]
            markers = sorted(set(re.findall(MARKER + r"-\w+", raw)))
            found.append(f"{area['name']}: blocks {blocks}, markers {markers}")
        self.patch_note(f"{note} | {'; '.join(found)}")
        return str(body)

    def public(self, step: str, path: str) -> None:
        self.guest_page(step, path, MARKER + r"-\w+")

    def add(self, step: str, page: int, value: Any, kind: str = "core_stack_display") -> Any:
        return self.call(step, "POST", f"{PREFIX}/pages/{page}/Main", json={"type": kind, "value": value}).json()

    def run(self) -> None:
        self.scenario = "stack-displays"
        stacks = self.stacks()
        sidebar, column1, column2 = stacks["blog-sidebar"], stacks["footer-column-1"], stacks["footer-column-2"]
        for handle, stack in stacks.items():
            self.rendered(f"setup.stack.{handle}", stack, f"stack {handle} ({stack})")
        for name, stack in (("sidebar", sidebar), ("column1", column1), ("column2", column2)):
            self.add(f"setup.marker.{name}", stack, {"content": f"<p>{MARKER}-{name}</p>"}, "content")
            self.approve_recent(f"setup.approve.{name}", stack)
            self.rendered(f"setup.marked.{name}", stack, f"stack {stack} with its marker")
        page_id, path = self.new_page("add.page", "Stack Displays")
        self.add("add.content", page_id, {"content": f"<p>{MARKER}-page</p>"}, "content")
        first = self.add("add.display.blog-sidebar", page_id, {"stID": sidebar})["data"]["id"]
        second = self.add("add.display.footer-column-1", page_id, {"stID": column1})["data"]["id"]
        self.approve_recent("add.approve", page_id)
        self.call("read.areas", "GET", f"{PREFIX}/pages/{page_id}", params={"includes": "areas"})
        self.rendered("read.areas_content", page_id, "live")
        self.call("read.content", "GET", f"{PREFIX}/pages/{page_id}", params={"includes": "content"})
        self.call("read.files", "GET", f"{PREFIX}/pages/{page_id}", params={"includes": "files"})
        self.call("read.block", "GET", f"{PREFIX}/blocks/{first}")
        self.call("read.block.pages", "GET", f"{PREFIX}/blocks/{first}", params={"includes": "pages"})
        self.public("read.public", path)
        updated = self.call(
            "update.put", "PUT", f"{PREFIX}/pages/{page_id}/Main/{second}", json={"value": {"stID": column2}}
        ).json()
        after_put = f"recent after the PUT (block {second} -> stack {column2})"
        self.rendered("update.recent", page_id, after_put, version="recent")
        self.rendered("update.live_before_approve", page_id, "live before approval")
        self.approve_recent("update.approve", page_id)
        self.rendered("update.live", page_id, "live after approval")
        self.public("update.public", path)
        self.call("update.block", "GET", f"{PREFIX}/blocks/{updated['data']['id']}")
        self.add("draft.sidebar_marker", sidebar, {"content": f"<p>{MARKER}-draft</p>"}, "content")
        self.rendered("draft.stack_recent", sidebar, "Blog Sidebar, recent", version="recent")
        self.rendered("draft.stack_live", sidebar, "Blog Sidebar, live")
        self.rendered("draft.page_live", page_id, "the page while Blog Sidebar has a draft")
        self.public("draft.public", path)
        self.approve_recent("draft.sidebar_approve", sidebar)
        self.rendered("draft.page_after_approve", page_id, "the page after Blog Sidebar's draft was approved")
        odd = {
            "no_stid": {},
            "handle": {"stID": "blog-sidebar"},
            "missing": {"stID": 999999},
            "not_a_stack": {"stID": 234},
        }
        for name, value in odd.items():
            body = {"type": "core_stack_display", "value": value}
            self.call(f"odd.{name}", "POST", f"{PREFIX}/pages/{page_id}/Main", json=body)
            self.rendered(f"odd.{name}.recent", page_id, f"recent after adding {value}", version="recent")
        self.call("delete.display", "DELETE", f"{PREFIX}/pages/{page_id}/Main/{first}")
        self.rendered("delete.recent", page_id, "recent after the delete", version="recent")


if __name__ == "__main__":
    sys.exit(record(sys.argv[1:], StackDisplayRecorder, StackDisplayRecorder.run))
