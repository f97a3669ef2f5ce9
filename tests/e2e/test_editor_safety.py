"""Editor safety against the sandbox (issue 16): three-way conflicts, foreign drafts, ignore rules, protection,
word-level diffs. An "editor" changes the live site through the REST API, as the dashboard would."""

from __future__ import annotations

import io
import json

from cmssync.commands.plan import run_plan
from cmssync.plan.request import PlanRequest
from cmssync.render.text import render_json, render_text
from cmssync.sync.applying import ApplyRequest
from tests.support.editors import Editor
from tests.support.sites import Site

ABOUT = "pages/about.yaml"


async def test_a_site_edit_and_a_content_edit_of_one_page_are_a_conflict_and_nothing_is_overwritten(
    example: Site, editor: Editor
) -> None:
    assert not (await example.apply()).failed
    editor.edit("/about", description="Written by the editor.")
    example.edit(ABOUT, "Who we are and how we work.", "Who we are, from the content.")

    plan = await example.plan()
    assert [h.id for h in plan.held] == ["page:/about"]
    assert plan.refused
    conflict = next(c for c in plan.conflicts if c.field == "description")
    assert (conflict.base, conflict.content, conflict.site) == (
        "Who we are and how we work.",
        "Who we are, from the content.",
        "Written by the editor.",
    )
    assert "page:/about" not in {a.id for a in plan.actions}
    text = render_text(plan)
    assert "! page /about: refused" in text
    assert "conflict description (fail)" in text
    assert json.loads(render_json(plan))["refused"] == 1

    out = io.StringIO()
    code = await run_plan(example.workspace(), PlanRequest(), out=out, detailed_exitcode=True)
    assert code == 2

    report = await example.apply()
    assert report.exit_code == 1
    assert editor.live("/about")["description"] == "Written by the editor."

    report = await example.apply(force=True)
    assert report.exit_code == 0
    assert editor.live("/about")["description"] == "Who we are, from the content."
    assert (await example.plan()).is_empty


async def test_site_only_changes_are_drift_and_other_fields_are_not_conflicts(example: Site, editor: Editor) -> None:
    """``drift: revert`` (the behaviour before issue 34): the editor's change is written over, the content wins."""
    example.edit("cmssync.yaml", "publish: approve", "publish: approve\ndrift: revert")
    assert not (await example.apply()).failed
    editor.edit("/about", name="Renamed by the editor")
    example.edit(ABOUT, "Who we are and how we work.", "Who we are, from the content.")
    plan = await example.plan()
    assert not plan.held
    assert not plan.conflicts
    assert not plan.site_changes
    action = plan.by_id()["page:/about"]
    assert {c.field for c in action.changes} == {"name", "description"}
    assert action.drift
    assert not (await example.apply()).failed
    assert editor.live("/about")["name"] == "About us"


async def test_site_wins_policy_keeps_the_editor_value_and_applies_the_rest(example: Site, editor: Editor) -> None:
    assert not (await example.apply()).failed
    editor.edit("/about", description="Written by the editor.")
    text = (example.root / ABOUT).read_text()
    text = text.replace("Who we are and how we work.", "Who we are, from the content.")
    text = text.replace("name: About us", "name: About the company") + "on_conflict:\n  description: site_wins\n"
    example.write(ABOUT, text)
    plan = await example.plan()
    assert not plan.held
    assert [(c.field, c.resolution) for c in plan.conflicts] == [("description", "site_wins")]
    assert {c.field for c in plan.by_id()["page:/about"].changes} == {"name"}
    assert (await example.apply()).exit_code == 0
    live = editor.live("/about")
    assert (live["name"], live["description"]) == ("About the company", "Written by the editor.")
    again = await example.plan()  # the same conflict, settled the same way: nothing to write
    assert not again.actions
    assert [c.resolution for c in again.conflicts] == ["site_wins"]


async def test_a_foreign_draft_is_never_written_into_or_approved_by_default(example: Site, editor: Editor) -> None:
    assert not (await example.apply()).failed
    draft = editor.edit("/about", approve=False, name="Editor's unfinished rename")
    example.edit(ABOUT, "Who we are and how we work.", "Who we are, from the content.")
    plan = await example.plan()
    held = plan.by_id().get("page:/about")
    assert held is None
    entry = next(h for h in plan.held if h.id == "page:/about")
    assert entry.reason == "foreign_draft"
    assert entry.fails
    assert entry.draft is not None
    assert entry.draft.version_id == draft
    assert entry.draft.created
    assert f"unapproved draft version {draft}" in render_text(plan)
    report = await example.apply()
    assert report.exit_code == 1
    versions = editor.reader.get(f"/page_versions/{editor.page('/about')['id']}")
    assert versions[0]["id"] == draft
    assert not versions[0]["is_approved"]
    assert editor.live("/about")["description"] == "Who we are and how we work."  # the live version is untouched

    example.write("cmssync.yaml", (example.root / "cmssync.yaml").read_text() + "on_foreign_draft: skip\n")
    plan = await example.plan()
    assert plan.held
    assert not plan.refused
    assert (await example.apply()).exit_code == 0


async def test_ignored_fields_and_blocks_are_neither_drift_nor_reverted(example: Site, editor: Editor) -> None:
    assert not (await example.apply()).failed
    example.write(
        ABOUT,
        (example.root / ABOUT).read_text()
        + "ignore:\n  fields: [description]\n  blocks:\n    - {area: Main, type: content}\n",
    )
    editor.edit("/about", description="The editors own this.")
    editor.edit_block("/about", "Main", 1, "<p>The editors own this block too.</p>")
    plan = await example.plan()
    assert "page:/about" not in plan.by_id(), render_text(plan)
    assert (await example.apply()).exit_code == 0
    assert editor.live("/about")["description"] == "The editors own this."
    content = [v["content"] for t, v in editor.reader.blocks("/about", "Main") if t == "content"]
    assert content == ["<p>The editors own this block too.</p>"]


async def test_global_ignore_rules_from_the_settings(example: Site, editor: Editor) -> None:
    assert not (await example.apply()).failed
    settings = (example.root / "cmssync.yaml").read_text()
    example.write("cmssync.yaml", settings + "ignore:\n  - pages: ['/ab*']\n    fields: [name]\n")
    editor.edit("/about", name="Editor's title")
    assert "page:/about" not in (await example.plan()).by_id()


async def test_a_protected_page_is_not_deleted_once_its_file_is_gone(example: Site, editor: Editor) -> None:
    example.write("pages/contact.yaml", (example.root / "pages/contact.yaml").read_text() + "protect: true\n")
    assert not (await example.apply()).failed
    (example.root / "pages/contact.yaml").unlink()
    plan = await example.plan(prune=True)
    assert "page:/contact" not in plan.by_id()
    assert any("/contact is protected" in w for w in plan.warnings)


async def test_a_three_word_change_in_a_long_paragraph_shows_as_three_words(example: Site) -> None:
    words = " ".join(f"word{i}" for i in range(150))
    text = (example.root / ABOUT).read_text()
    text = text.replace('Meet <a href="/about/team">the team</a>.', words)
    example.write(ABOUT, text)
    assert not (await example.apply()).failed
    changed = words.replace("word70 word71 word72", "alpha beta gamma")
    example.write(ABOUT, text.replace(words, changed))
    rendered = render_text(await example.plan(), width=400)
    assert "(+3 −3 words)" in rendered
    assert "[-word70-]{+alpha+} [-word71-]{+beta+} [-word72-]{+gamma+}" in rendered
    assert "word10 " not in rendered  # the long unchanged stretch is cut


async def test_an_editor_reserialising_html_is_not_drift(example: Site, editor: Editor) -> None:
    assert not (await example.apply()).failed
    block = next(v["content"] for t, v in editor.reader.blocks("/about", "Main") if t == "content")
    reserialised = block.replace('<a href="/about/team">', "<A  HREF='/about/team'>").replace("</p>\n<p>", "</p><p>")
    assert reserialised != block
    editor.edit_block("/about", "Main", 1, reserialised)
    assert "page:/about" not in (await example.plan()).by_id()


def test_apply_request_carries_force() -> None:
    assert ApplyRequest(PlanRequest(force=True)).plan.force
