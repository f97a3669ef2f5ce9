"""Sub-areas of layouts and containers are areas: pulled under the API's names, edited, applied, shown on the public
page; the next plan is empty; a sub-area that cannot be shown is said in the plan, never written.

The sandbox page ``/services`` holds, in ``Main``, a container (its areas ``Main : 3 : Title`` and ``Main : 3 :
Body``, which holds a nested container with ``Main : 3 : Body : 4 : Item 1``) and a two-column layout
(``Main : 7``, ``Main : 8``), as the recorded sample site has them (tests/conformance/concrete-9.3.1/subareas.jsonl).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import httpx
import pytest
from ruamel.yaml import YAML

from cmssync.emulator.embedded import Sandbox
from tests.support.editors import Editor
from tests.support.sites import Site

PAGE_FILE = "pages/services.yaml"


def _content(text: str) -> dict[str, Any]:
    return {"type": "content", "value": {"content": f"<p>{text}</p>"}}


SEED: dict[str, Any] = {
    "pages": [
        {"path": "/", "name": "Home"},
        {
            "path": "/services",
            "name": "Services",
            "areas": {
                "Main": [
                    {"id": 903, "type": "core_container", "instances": [3]},
                    {"id": 902, "type": "core_area_layout", "instances": [7, 8]},
                    _content("Main text"),
                ],
                "Main : 3 : Title": [_content("Container title")],
                "Main : 3 : Body": [{"id": 901, "type": "core_container", "instances": [4]}],
                "Main : 3 : Body : 4 : Item 1": [_content("Nested item")],
                "Main : 7": [_content("Column one")],
                "Main : 8": [_content("Column two")],
            },
        },
    ]
}


@pytest.fixture
def site(sandbox_server: Sandbox, tmp_path: Path) -> Site:
    return Site.seeded(sandbox_server, tmp_path, SEED)


def _public(site: Site) -> str:
    return httpx.get(site.sandbox.url + "/services", timeout=30).text


async def test_sub_area_blocks_are_pulled_edited_applied_and_shown(site: Site) -> None:
    summary = await site.pull()
    areas = YAML(typ="safe").load((site.root / PAGE_FILE).read_text(encoding="utf-8"))["areas"]
    assert list(areas) == [
        "Main",
        "Main : 3 : Body",
        "Main : 3 : Body : 4 : Item 1",
        "Main : 3 : Title",
        "Main : 7",
        "Main : 8",
    ]
    assert [next(iter(b)) for b in areas["Main"]] == ["keep", "keep", "type"]  # the container and layout are kept
    assert areas["Main : 7"] == [{"type": "content", "value": {"content": "<p>Column one</p>"}}]
    assert "sub-areas of layouts and containers: 5 (5 blocks)" in summary
    assert not (await site.plan()).actions

    site.edit(PAGE_FILE, "Column one", "Column one, edited")
    site.edit(PAGE_FILE, "Nested item", "Nested item, edited")
    report = await site.apply()
    assert report.exit_code == 0, site.last_output
    public = _public(site)
    for shown in ("Column one, edited", "Nested item, edited", "Column two", "Container title"):
        assert shown in public
    assert not (await site.plan()).actions


async def test_a_sub_area_that_cannot_be_shown_is_said_and_not_written(site: Site) -> None:
    await site.pull()
    editor = Editor(site.sandbox)
    editor.remove_block("/services", "Main", 902)  # the layout goes: its columns stay, never shown again
    editor.close()
    site.edit(PAGE_FILE, "Column one", "Column one, edited")
    site.edit(PAGE_FILE, "Container title", "Container title, edited")
    text = (site.root / PAGE_FILE).read_text(encoding="utf-8")
    site.write(PAGE_FILE, text + '  "Main : 99 : Item 1":\n  - type: content\n    value: {content: <p>Nowhere</p>}\n')
    plan = await site.plan()
    assert [b.area for a in plan.actions for b in a.blocks] == ["Main : 3 : Title"]
    warned = "\n".join(plan.warnings)
    assert "the layout that showed sub-area 'Main : 7' is no longer in area 'Main'" in warned
    assert "no layout or container on the page has the sub-area 'Main : 99 : Item 1'" in warned
    assert "sub-area 'Main : 8' is no longer" in warned  # unchanged, but the content holds blocks never shown


async def test_pull_leaves_out_the_sub_areas_of_a_deleted_layout_and_says_so(site: Site) -> None:
    editor = Editor(site.sandbox)
    editor.remove_block("/services", "Main", 902)
    editor.close()
    summary = await site.pull()
    areas = YAML(typ="safe").load((site.root / PAGE_FILE).read_text(encoding="utf-8"))["areas"]
    assert "Main : 7" not in areas
    assert "Main : 8" not in areas
    assert "Main : 3 : Title" in areas
    assert "not pulled: the layout that showed sub-area 'Main : 7' is no longer in area 'Main'" in summary
    assert not (await site.plan()).actions


async def test_a_pull_after_the_layout_went_drops_its_sub_areas_from_the_file(site: Site) -> None:
    await site.pull()
    editor = Editor(site.sandbox)
    editor.remove_block("/services", "Main", 902)  # its columns' blocks stay in the page (still read), never shown
    editor.close()
    summary = await site.pull()
    areas = YAML(typ="safe").load((site.root / PAGE_FILE).read_text(encoding="utf-8"))["areas"]
    assert "Main : 7" not in areas  # the site's change, not a local edit "apply sends" (it never could)
    assert "Main : 8" not in areas
    assert "Main : 3 : Title" in areas
    assert "local edits" not in summary
    plan = await site.plan()
    assert not plan.actions
    assert not plan.warnings
