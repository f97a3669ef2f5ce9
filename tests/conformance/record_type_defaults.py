"""Recording what a page type's default blocks do to a page created through the REST API (``type-defaults.jsonl``).

Concrete places the blocks of a page type's defaults page (one per type and template: a system page without a
path) on every page created with that type and template. Discovery: the page list and a read of every page id from
1 to a little past the highest the list shows (``discover.probe.<id>``), then the ``blog_entry`` defaults pages with
their areas (``discover.defaults.<id>``). Then a blog entry created under ``/about/blog`` with the ``right_sidebar``
template (which has default blocks) and read (``create.sidebar``, ``read.sidebar``); its page title updated (the
block is the defaults page's too: the update answers a new id) and both pages read again (``update.*``); a blog
entry with the ``full`` template (no defaults) created and read (``create.full``, ``read.full``); both deleted.

Run against a freshly reset site: ``python -m tests.conformance.record_type_defaults --env /tmp/site-trust.env``.
"""

from __future__ import annotations

from typing import Any

from tests.conformance.recorder import Recorder, area_path, areas_of, arguments, data, read_env


def main() -> None:
    args = arguments(__doc__ or "", "type-defaults.jsonl")
    rec = Recorder(read_env(args.env), args.out, "type-defaults")
    try:
        rec.login("setup.token")
        listed = data(rec.api("discover.list", "GET", "/pages", query={"limit": "100"}))
        highest = max(int(p["id"]) for p in listed)
        found: dict[int, dict[str, Any]] = {}
        for page_id in range(1, highest + 6):
            answer = data(rec.api(f"discover.probe.{page_id}", "GET", f"/pages/{page_id}"))
            if isinstance(answer, dict) and "type" in answer:
                found[page_id] = answer
        blog = next(p["id"] for p in found.values() if p.get("path") == "/about/blog")
        for page_id, page in sorted(found.items()):
            if page.get("path") is None and page.get("type") == "blog_entry":
                rec.api(f"discover.defaults.{page_id}", "GET", f"/pages/{page_id}", query={"includes": "areas"})

        created = data(
            rec.api(
                "create.sidebar",
                "POST",
                "/pages",
                json_body={"parent": blog, "name": "Type defaults", "type": "blog_entry", "template": "right_sidebar"},
            )
        )
        page = data(rec.api("read.sidebar", "GET", f"/pages/{created['id']}", query={"includes": "areas"}))
        title = next(b for b in areas_of(page)["Page Header"] if b["type"] == "page_title")
        value = {"useCustomTitle": "1", "titleText": "Written by the API", "formatting": "h1"}
        rec.api(
            "update.title",
            "PUT",
            area_path(created["id"], "Page Header", title["id"]),
            json_body={"value": value},
            note="the block is also the defaults page's: the update answers a new id",
        )
        rec.api(
            "update.read_recent", "GET", f"/pages/{created['id']}", query={"includes": "areas", "version": "recent"}
        )
        defaults = [p for p, v in sorted(found.items()) if v.get("path") is None and v.get("type") == "blog_entry"]
        for page_id in defaults:
            rec.api(f"update.read_defaults.{page_id}", "GET", f"/pages/{page_id}", query={"includes": "areas"})

        full = data(
            rec.api(
                "create.full",
                "POST",
                "/pages",
                json_body={"parent": blog, "name": "No defaults", "type": "blog_entry", "template": "full"},
            )
        )
        rec.api("read.full", "GET", f"/pages/{full['id']}", query={"includes": "areas"})
        rec.api("delete.sidebar", "DELETE", f"/pages/{created['id']}")
        rec.api("delete.full", "DELETE", f"/pages/{full['id']}")
    finally:
        rec.close()


if __name__ == "__main__":
    main()
