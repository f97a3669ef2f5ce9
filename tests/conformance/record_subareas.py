"""Recording what the REST API does with the sub-areas of layouts and containers (``subareas.jsonl``).

On ``/about/services`` of a fresh ``atomik_full`` site (a container whose ``Title`` holds a content block and whose
``Body`` holds a nested container, a layout whose columns are ``Main : N`` sub-areas, a container of testimonials):
the live read and the ``areas.content`` read of the page; content blocks added into an existing container sub-area,
a nested one, a layout column and a sub-area no container has; an update of a sub-area block (and the same block
addressed through its parent area); a delete; approval; the reads and the public page after. Then the layout block
is deleted and a block is added into, and another updated in, the columns it leaves behind; approval; the reads and
the public page after. Step names: ``setup.*``, ``read.*``, ``add.*``, ``update.*``, ``delete.*``, ``approve.*``,
``public.*``, ``orphan.*``.

Run against a freshly reset site: ``python -m tests.conformance.record_subareas --env /tmp/site-areas.env``.
"""

from __future__ import annotations

import re
import secrets
from typing import Any

from tests.conformance.recorder import Recorder, area_path, areas_of, arguments, data, read_env

PAGE = "/about/services"
CONTAINERS = ("core_container", "core_area_layout")


def plain_text(html: str) -> str:
    """A run of words of a block's HTML as a visitor reads it (a marker for the public page)."""
    words = re.sub(r"<[^>]+>|\{[^}]*\}", " ", html).split()
    return " ".join(words[:3])


def _find(areas: dict[str, list[dict[str, Any]]], *, parts: int, block_type: str, last: bool = False) -> str:
    names = [
        n for n, blocks in areas.items() if n.count(" : ") == parts - 1 and any(b["type"] == block_type for b in blocks)
    ]
    if not names:
        raise SystemExit(f"{PAGE}: no sub-area of {parts} parts with a {block_type} block in {sorted(areas)}")
    return names[-1] if last else names[0]


def main() -> None:
    args = arguments(__doc__ or "", "subareas.jsonl")
    rec = Recorder(read_env(args.env), args.out, "subareas")
    rid = secrets.token_hex(3)
    try:
        rec.login("setup.token")
        home = data(rec.api("setup.site", "GET", "/sites/default"))["home_page_id"]
        about = next(
            p for p in data(rec.api("setup.children.home", "GET", f"/pages/{home}/children")) if p["path"] == "/about"
        )
        page_id = next(
            p["id"]
            for p in data(rec.api("setup.children.about", "GET", f"/pages/{about['id']}/children"))
            if p["path"] == PAGE
        )
        live = data(rec.api("read.live", "GET", f"/pages/{page_id}", query={"includes": "areas"}))
        rec.api("read.areas_content", "GET", f"/pages/{page_id}", query={"includes": "areas.content"})
        areas = areas_of(live)
        title = _find(areas, parts=3, block_type="content")
        column = _find(areas, parts=2, block_type="content")
        nested = next(n for n in sorted(areas) if n.count(" : ") >= 4)
        testimonials = _find(areas, parts=3, block_type="testimonial", last=True)
        title_block = next(b for b in areas[title] if b["type"] == "content")
        column_block = next(b for b in areas[column] if b["type"] == "content")
        layout = next(b for b in areas["Main"] if b["type"] == "core_area_layout")
        markers = {
            "added into container": f"added-into-container-{rid}",
            "added into nested": f"added-into-nested-{rid}",
            "added into column": f"added-into-column-{rid}",
            "added into unknown": f"added-into-unknown-{rid}",
            "updated title": f"updated-title-{rid}",
            "original title": plain_text(title_block["value"]["content"]),
            "original column": plain_text(column_block["value"]["content"]),
            "testimonials": 'class="ccm-block-testimonial-wrapper"',
        }
        rec.public("public.before", PAGE, markers)

        def add(step: str, area: str, marker: str) -> dict[str, Any]:
            value = {"content": f"<p>{markers[marker]}</p>"}
            answer = rec.api(step, "POST", area_path(page_id, area), json_body={"type": "content", "value": value})
            return dict(data(answer))

        add("add.container_subarea", title, "added into container")
        add("add.nested_subarea", nested, "added into nested")
        add("add.layout_column", column, "added into column")
        add("add.unknown_subarea", "Main : 999 : Item 1", "added into unknown")
        rec.api("read.recent_after_adds", "GET", f"/pages/{page_id}", query={"includes": "areas", "version": "recent"})
        updated = {"content": f"<h2>{markers['updated title']}</h2>"}
        rec.api(
            "update.through_parent_area",
            "PUT",
            area_path(page_id, "Main", title_block["id"]),
            json_body={"value": updated},
            note="the sub-area block addressed through its parent area 'Main'",
        )
        new_title = data(
            rec.api(
                "update.subarea_block",
                "PUT",
                area_path(page_id, title, title_block["id"]),
                json_body={"value": updated},
            )
        )
        gone = areas[testimonials][-1]
        rec.api("delete.subarea_block", "DELETE", area_path(page_id, testimonials, gone["id"]))
        rec.approve("approve", page_id)
        rec.api("read.live_after_approve", "GET", f"/pages/{page_id}", query={"includes": "areas"})
        rec.api("read.areas_content_after_approve", "GET", f"/pages/{page_id}", query={"includes": "areas.content"})
        rec.api("read.block_after_approve", "GET", f"/blocks/{new_title['id']}", query={"includes": "pages"})
        rec.public("public.after_approve", PAGE, markers)

        # The layout goes; its columns stay in the page (blocks.jsonl nested.*): can they still be written?
        rec.api("orphan.delete_layout", "DELETE", area_path(page_id, "Main", layout["id"]))
        orphan_markers = {
            **markers,
            "added into orphan": f"added-into-orphan-{rid}",
            "updated orphan": f"updated-orphan-{rid}",
        }
        rec.api(
            "orphan.add_into_column",
            "POST",
            area_path(page_id, column),
            json_body={"type": "content", "value": {"content": f"<p>{orphan_markers['added into orphan']}</p>"}},
        )
        recent = data(
            rec.api("orphan.read_recent", "GET", f"/pages/{page_id}", query={"includes": "areas", "version": "recent"})
        )
        orphan_block = next(b for b in areas_of(recent)[column] if b["type"] == "content")
        rec.api(
            "orphan.update_column_block",
            "PUT",
            area_path(page_id, column, orphan_block["id"]),
            json_body={"value": {"content": f"<p>{orphan_markers['updated orphan']}</p>"}},
        )
        rec.approve("orphan.approve", page_id)
        rec.api("orphan.read_live", "GET", f"/pages/{page_id}", query={"includes": "areas"})
        rec.api("orphan.read_areas_content", "GET", f"/pages/{page_id}", query={"includes": "areas.content"})
        rec.public("orphan.public", PAGE, orphan_markers)
    finally:
        rec.close()


if __name__ == "__main__":
    main()
