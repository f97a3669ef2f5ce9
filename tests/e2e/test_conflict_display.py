"""A conflicted area shows the site's blocks as the plan compares them: a raw block the content states with a few of
its columns shows only those columns on the site side too, so the conflict's diff is the editor's change alone and
not every column the content leaves out (seen on the real site: a raw image block with ``fID`` and ``altText`` showed
ten site-only columns as removed)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from cmssync.emulator.embedded import Sandbox
from cmssync.plan.actions import FieldConflict
from cmssync.render.text import conflict_lines, render_text
from tests.support.editors import Editor
from tests.support.sites import Site

FEATURE = {
    "icon": "fas fa-brain",
    "title": "Ideate",
    "paragraph": "<p>Think first.</p>",
    "externalLink": "",
    "internalLinkCID": "",
    "titleFormat": "h4",
    "fID": "",
}
SEED: dict[str, Any] = {
    "pages": [
        {"path": "/", "name": "Home", "areas": {"Main": [{"type": "content", "value": {"content": "<p>Welcome</p>"}}]}},
        {
            "path": "/about",
            "name": "About",
            "areas": {
                "Main": [
                    {"type": "feature", "value": FEATURE},
                    {"type": "content", "value": {"content": "<p>About us</p>"}},
                ]
            },
        },
    ]
}


@pytest.fixture
def site(sandbox_server: Sandbox, tmp_path: Path) -> Site:
    return Site.seeded(sandbox_server, tmp_path, SEED)


async def test_a_conflicted_area_shows_only_the_columns_the_content_states(site: Site) -> None:
    await site.pull()
    page = site.root / "pages" / "about.yaml"
    lines = page.read_text(encoding="utf-8").splitlines(keepends=True)
    left_out = ("icon:", "paragraph:", "titleFormat:")  # the raw block states its title and a few columns only
    site.write("pages/about.yaml", "".join(line for line in lines if not line.strip().startswith(left_out)))
    assert not (await site.plan()).actions  # the columns left out are not compared
    editor = Editor(site.sandbox)
    editor.edit_block("/about", "Main", 1, "<p>About us, by an editor</p>")
    editor.close()
    site.edit("pages/about.yaml", "About us", "About us, in the content")
    plan = await site.plan()
    assert [(c.key, c.field) for c in plan.conflicts] == [("/about", "area:Main")]
    shown = render_text(plan, width=400)
    assert "editor-]" in shown  # the word diff of the editor's change
    assert "content+}" in shown
    for column in ("icon", "paragraph", "titleFormat"):
        assert column not in shown, shown


def test_a_conflicted_areas_html_and_stacks_read_as_written() -> None:
    """An area's blocks word-diffed when the base is not known: an HTML string's attributes stay whole (the JSON
    escaping of its quotes broke them apart: class="\\&quot;display-2\\&quot;", seen on the real site 8090) and a
    stack display names its stack as the content does, not as an export token."""
    words = "<p>Lorem ipsum dolor sit amet, consectetur adipiscing elit, and enough words to make it long.</p>"
    site = [
        ["content", {"content": "<p>An editor wrote this.</p>" + words}],
        ["core_stack_display", {"stack": "{ccm:export:page:/!stacks/footer}"}],
    ]
    content = [
        ["content", {"content": '<h2 class="display-2">What We Do</h2>' + words}],
        ["core_stack_display", {"stack": "{ccm:export:page:/!stacks/sidebar}"}],
    ]
    conflict = FieldConflict(
        kind="page", key="/about", field="area:Main", content=content, site=site, resolution="fail"
    )
    shown = "\n".join(str(line) for line in conflict_lines(conflict))
    assert '{+<h2 class="display-2">What+}' in shown, shown
    assert "[stack [-footer-]{+sidebar+}]" in shown, shown
    assert "ccm:export" not in shown, shown
    assert "&quot;" not in shown, shown
