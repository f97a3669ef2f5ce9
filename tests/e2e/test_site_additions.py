"""Blocks an editor adds to a managed area (issue 26 item 5): shown as additions on the site, counted, and kept in
place by default; deleted when the content owns its areas (``areas: owned``, or ``areas_owned: true`` in a page)."""

from __future__ import annotations

from cmssync.emulator.embedded import Sandbox
from cmssync.render.text import render_json, render_text
from tests.support.editors import Editor
from tests.support.rawsite import RawSite
from tests.support.sites import Site

ADDED = "<p>Added by an editor.</p>"


async def added_by_an_editor(example: Site, sandbox: Sandbox) -> None:
    assert not (await example.apply()).failed, example.last_output
    editor = Editor(sandbox)
    try:
        editor.add_block("/about", "Main", ADDED)
    finally:
        editor.close()


async def test_an_added_block_is_shown_counted_and_kept(example: Site, sandbox: Sandbox, raw: RawSite) -> None:
    await added_by_an_editor(example, sandbox)
    plan = await example.plan()
    assert plan.actions == ()
    [entry] = plan.site_additions
    assert (entry.key, entry.area, [kind for kind, _ in entry.blocks]) == ("/about", "Main", ["content"])
    text = render_text(plan)
    assert "= site addition: page /about, area Main: 1 block added on the site, kept" in text
    assert "1 block added on the site kept (areas not owned)" in text
    assert '"site_additions"' in render_json(plan)
    report = await example.apply()
    assert not report.failed, example.last_output
    assert ADDED in str(raw.blocks("/about", "Main")), "apply leaves the editor's block where it is"

    # the content changes a managed block: the update goes through, the addition stays
    example.edit("pages/about.yaml", "Example Co. was founded in 2014", "Example Co. was founded in 2013")
    report = await example.apply()
    assert [(o.action.key, o.status) for o in report.outcomes] == [("/about", "ok")], example.last_output
    blocks = str(raw.blocks("/about", "Main"))
    assert "founded in 2013" in blocks
    assert ADDED in blocks
    assert (await example.plan()).actions == ()


async def test_owned_areas_delete_the_addition_and_count_it(example: Site, sandbox: Sandbox, raw: RawSite) -> None:
    await added_by_an_editor(example, sandbox)
    example.edit("pages/about.yaml", "name: About us\n", "name: About us\nareas_owned: true\n")
    plan = await example.plan()
    assert plan.site_additions == ()
    [action] = plan.actions
    assert [block.op for block in action.blocks] == ["delete"]
    assert "1 block to delete" in render_text(plan)
    report = await example.apply()
    assert not report.failed, example.last_output
    assert ADDED not in str(raw.blocks("/about", "Main"))
    assert (await example.plan()).actions == ()
