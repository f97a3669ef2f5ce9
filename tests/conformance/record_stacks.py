"""Recording how the REST API shows and edits global areas (stacks) (``stacks.jsonl``).

A theme's global areas (the ``atomik`` header navigation and four footer columns) are stacks: pages under the
system page ``/!stacks`` whose ``Main`` area holds the blocks every page renders there. Discovery: the page list
(``GET /pages``), the home page's ``includes=areas`` and ``includes=content``, the children of ``/!stacks``, and a
read of every page id from 1 to a little past the highest the list shows (``discover.probe.<id>``). Then on a
footer column: the reads (live, recent, versions, ``areas.content``), the public pages before; a block update, the
draft seen from the public pages, approval, the public pages after; a block added (the public page seen before
approval) and deleted again, each approved; a block read with ``includes=pages``; a page create under ``/!stacks``.
Step names: ``setup.*``, ``discover.*``, ``read.*``, ``public.*``, ``edit.*``, ``approve.*``, ``add.*``,
``delete.*``, ``create.*``.

Run against a freshly reset site: ``python -m tests.conformance.record_stacks --env /tmp/site-areas.env``.
"""

from __future__ import annotations

import secrets
from typing import Any

from tests.conformance.recorder import Recorder, area_path, areas_of, arguments, data, read_env

COLUMN = "/!stacks/footer-column-2"
"""The stack edited: a footer column holding one content block."""
PUBLIC_PAGES = ("/", "/about", "/about/services")


def main() -> None:
    args = arguments(__doc__ or "", "stacks.jsonl")
    rec = Recorder(read_env(args.env), args.out, "stacks")
    rid = secrets.token_hex(3)
    try:
        rec.login("setup.token")
        home = data(rec.api("setup.site", "GET", "/sites/default"))["home_page_id"]
        listed = data(rec.api("discover.list", "GET", "/pages", query={"limit": "100"}))
        rec.api("discover.home_areas", "GET", f"/pages/{home}", query={"includes": "areas"})
        rec.api("discover.home_content", "GET", f"/pages/{home}", query={"includes": "content"})
        highest = max(int(p["id"]) for p in listed)
        found: dict[str, dict[str, Any]] = {}
        for page_id in range(1, highest + 6):
            answer = data(rec.api(f"discover.probe.{page_id}", "GET", f"/pages/{page_id}"))
            if isinstance(answer, dict) and isinstance(answer.get("path"), str):
                found[answer["path"]] = answer
        stacks_root = found["/!stacks"]["id"]
        rec.api("discover.children_of_stacks", "GET", f"/pages/{stacks_root}/children")
        stack_id = found[COLUMN]["id"]

        stack = data(rec.api("read.live", "GET", f"/pages/{stack_id}", query={"includes": "areas,custom_attributes"}))
        rec.api("read.recent", "GET", f"/pages/{stack_id}", query={"includes": "areas", "version": "recent"})
        rec.api("read.areas_content", "GET", f"/pages/{stack_id}", query={"includes": "areas.content"})
        rec.api("read.versions", "GET", f"/page_versions/{stack_id}")
        block = areas_of(stack)["Main"][0]
        original = block["value"]["content"]
        markers = {
            "edited": f"stack-edit-{rid}",
            "added": f"stack-add-{rid}",
        }
        for path in PUBLIC_PAGES:
            rec.public(f"public.before.{path}", path, markers)

        edited = {"content": f"<p>{markers['edited']}</p>{original}"}
        new_block = data(
            rec.api("edit.update", "PUT", area_path(stack_id, "Main", block["id"]), json_body={"value": edited})
        )
        rec.api("edit.read_recent", "GET", f"/pages/{stack_id}", query={"includes": "areas", "version": "recent"})
        rec.api("edit.read_live", "GET", f"/pages/{stack_id}", query={"includes": "areas"})
        rec.public("public.draft./", "/", markers, note="the edit is in an unapproved version of the stack")
        rec.approve("approve.edit", stack_id)
        for path in PUBLIC_PAGES:
            rec.public(f"public.after_edit.{path}", path, markers)
        rec.api("read.block", "GET", f"/blocks/{new_block['id']}", query={"includes": "pages"})

        added = data(
            rec.api(
                "add.block",
                "POST",
                area_path(stack_id, "Main"),
                json_body={"type": "content", "value": {"content": f"<p>{markers['added']}</p>"}},
            )
        )
        rec.public("public.add_draft./", "/", markers, note="the added block is in an unapproved version of the stack")
        rec.approve("approve.add", stack_id)
        rec.public("public.after_add./", "/", markers)
        rec.api("delete.block", "DELETE", area_path(stack_id, "Main", added["id"]))
        rec.approve("approve.delete", stack_id)
        rec.api("read.live_after_delete", "GET", f"/pages/{stack_id}", query={"includes": "areas"})
        rec.public("public.after_delete./", "/", markers)

        rec.api(
            "create.under_stacks",
            "POST",
            "/pages",
            json_body={"parent": stacks_root, "name": f"Stack {rid}", "type": "core_stack", "template": ""},
        )
    finally:
        rec.close()


if __name__ == "__main__":
    main()
