"""The drift policy (issue 34 items 1 and 4) against the sandbox: an editor's approved change to what the content did
not change is never written over by default (``propose``), listed as a site change to bring back; ``adopt`` writes
it into the content; ``revert`` is the behaviour before (``test_editor_safety``); and the loop closes: once the
content takes the site's words the plan is empty, and the site's version becomes the base."""

from __future__ import annotations

import io
import json
from pathlib import Path
from typing import Any

from cmssync.commands.plan import run_plan
from cmssync.emulator.embedded import Sandbox
from cmssync.plan.request import PlanRequest
from cmssync.render.html import render_html
from cmssync.render.markdown import render_markdown
from cmssync.render.text import render_json, render_text
from tests.support.editors import Editor
from tests.support.sites import Site

ABOUT = "pages/about.yaml"
HOME = "pages/index.yaml"
FOUNDED = "Example Co. was founded in 2014 by two web developers who were tired of sites nobody could update."
EDITOR_WORDS = "<p>Founded in 2014, said the editor.</p>"


def settings(site: Site, text: str) -> None:
    site.edit("cmssync.yaml", "publish: approve", f"publish: approve\n{text}")


def live_block(editor: Editor, path: str, area: str, index: int) -> str:
    page = editor.reader.get(f"/pages/{editor.page(path)['id']}", includes="areas")
    areas = page["areas"]["data"] if isinstance(page["areas"], dict) else page["areas"]
    blocks = next(a["blocks"] for a in areas if a["name"] == area)
    return str((blocks["data"] if isinstance(blocks, dict) else blocks)[index]["value"]["content"])


async def detailed_exit(site: Site) -> int:
    return await run_plan(site.workspace(), PlanRequest(), out=io.StringIO(), detailed_exitcode=True)


async def test_an_editors_change_survives_apply_and_is_listed_as_a_site_change(example: Site, editor: Editor) -> None:
    assert not (await example.apply()).failed
    editor.edit_block("/about", "Main", 1, EDITOR_WORDS)
    editor.edit("/about", description="Described by the editor.")
    example.edit(ABOUT, "name: About us", "name: About us and our team")  # the content changes another field

    plan = await example.plan()
    action = plan.by_id()["page:/about"]
    assert [c.field for c in action.changes] == ["name"]  # the content's own change still applies
    assert action.blocks == ()
    assert not action.drift
    assert not plan.conflicts
    [change] = plan.site_changes
    assert (change.id, change.action, change.reason) == ("page:/about", "propose", "changed_on_site")
    assert change.fields == ("description", "area:Main")
    description = change.changes[0]
    assert (description.before, description.after) == ("Who we are and how we work.", "Described by the editor.")
    [block] = change.blocks
    assert (block.area, block.op, block.position) == ("Main", "update", 1)
    assert block.after == {"content": EDITOR_WORDS}
    assert FOUNDED in (block.before or {})["content"]

    document = json.loads(render_json(plan))
    [entry] = document["site_changes"]
    assert (entry["id"], entry["action"], entry["reason"]) == ("page:/about", "propose", "changed_on_site")
    assert entry["changes"][0]["after"] == "Described by the editor."
    assert document["has_changes"] is True
    text = render_text(plan)
    assert "= site change (propose): page /about: description, area:Main changed on the site" in text
    assert '    description: "Who we are and how we work." → "Described by the editor."' in text
    assert "Site changes not reverted: 1 to bring back into the content (drift: propose)." in text
    markdown = render_markdown(plan)
    assert "**Site change (propose):**" in markdown
    assert '+ description: "Described by the editor."' in markdown
    html = render_html(plan)
    assert 'id="site-changes">Site changes to bring back: 1</h3>' in html
    assert "content Who we are and how we work. → site Described by the editor." in html

    assert await detailed_exit(example) == 2
    report = await example.apply()
    assert report.exit_code == 0
    assert editor.live("/about")["description"] == "Described by the editor."
    assert editor.live("/about")["name"] == "About us and our team"
    assert live_block(editor, "/about", "Main", 1) == EDITOR_WORDS
    again = await example.plan()  # listed on every run until the content takes it
    assert again.actions == ()
    assert [c.fields for c in again.site_changes] == [("description", "area:Main")]


async def test_merged_into_the_content_the_plan_is_empty_and_the_site_becomes_the_base(
    example: Site, editor: Editor
) -> None:
    assert not (await example.apply()).failed
    editor.edit("/about", description="Described by the editor.")
    assert [c.id for c in (await example.plan()).site_changes] == ["page:/about"]

    example.edit(ABOUT, "Who we are and how we work.", "Described by the editor.")  # the proposal, merged
    plan = await example.plan()
    assert plan.is_empty
    assert await detailed_exit(example) == 0
    assert [r.id for r in plan.rebase] == ["page:/about"]
    assert not (await example.apply()).failed
    base = example.workspace().load_state().pages["/about"].base
    assert base is not None
    assert base.fields["description"] == "Described by the editor."

    editor.edit("/about", description="Described again.")  # the next editor change: a site change, no conflict
    plan = await example.plan()
    assert not plan.conflicts
    assert [(c.id, c.fields) for c in plan.site_changes] == [("page:/about", ("description",))]


async def test_the_conflict_advice_works_the_editors_words_merged_settle_it_without_force(
    example: Site, editor: Editor
) -> None:
    """Both changed one block (a conflict); the content also changed another block of the area. After the editor's
    words are merged into the content, as the conflict message says, the content's other change applies: the area
    is compared block by block."""
    assert not (await example.apply()).failed
    editor.edit_block("/", "Main", 3, "<p>Editor's call to action</p>")
    example.edit(HOME, '<div class="cta">', '<div class="cta">\n          <p>Content words</p>')
    example.edit(HOME, "Welcome to Example Co.", "Welcome to Example Co. (content)")

    plan = await example.plan()
    assert [h.id for h in plan.held] == ["page:/"]
    assert [c.field for c in plan.conflicts] == ["area:Main"]

    text = (example.root / HOME).read_text()
    start = text.index('      value:\n        content: |\n          <div class="cta">')
    end = text.index("  Sidebar:")
    example.write(HOME, text[:start] + '      value: {content: "<p>Editor\'s call to action</p>"}\n' + text[end:])
    plan = await example.plan()
    assert not plan.held
    assert not plan.conflicts
    [action] = plan.actions
    assert [(b.area, b.position) for b in action.blocks] == [("Main", 0)]  # the content's title change
    report = await example.apply()
    assert report.exit_code == 0
    assert live_block(editor, "/", "Main", 3) == "<p>Editor's call to action</p>"
    assert (await example.plan()).is_empty


async def test_an_editors_block_and_the_contents_block_in_one_area_are_no_conflict(
    example: Site, editor: Editor
) -> None:
    assert not (await example.apply()).failed
    editor.edit_block("/", "Main", 1, EDITOR_WORDS)
    example.edit(HOME, '<div class="cta">', '<div class="cta"><b>New</b>')
    plan = await example.plan()
    assert not plan.conflicts
    [action] = plan.actions
    assert [(b.area, b.position, b.op) for b in action.blocks] == [("Main", 3, "update")]
    assert [(c.id, [(b.area, b.position) for b in c.blocks]) for c in plan.site_changes] == [("page:/", [("Main", 1)])]
    assert not (await example.apply()).failed
    assert live_block(editor, "/", "Main", 1) == EDITOR_WORDS
    assert "<b>New</b>" in live_block(editor, "/", "Main", 3)


async def test_adopt_writes_the_site_change_into_the_content(example: Site, editor: Editor) -> None:
    settings(example, "drift: adopt")
    assert not (await example.apply()).failed
    editor.edit_block("/about", "Main", 1, EDITOR_WORDS)
    plan = await example.plan()
    assert [(c.id, c.action) for c in plan.site_changes] == [("page:/about", "adopt")]
    report = await example.apply()
    assert report.exit_code == 0, report.problems
    assert report.adopted is not None
    assert [str(path) for path in report.adopted.files] == [ABOUT]
    text = (example.root / ABOUT).read_text()
    assert EDITOR_WORDS in text
    assert "Sidebar: []   # managed, and kept empty" in text  # the file's own text stays
    assert live_block(editor, "/about", "Main", 1) == EDITOR_WORDS
    assert (await example.plan()).is_empty


async def test_rules_and_the_page_file_choose_the_policy_per_object(example: Site, editor: Editor) -> None:
    settings(example, 'drift:\n  policy: propose\n  rules:\n    - {match: "page:/about", policy: revert}')
    example.edit("pages/contact.yaml", "name: Contact", "on_drift: {description: revert}\nname: Contact")
    assert not (await example.apply()).failed
    editor.edit("/about", description="Described by the editor.")
    editor.edit("/services", description="Services, by the editor.")
    editor.edit("/contact", description="Contact, by the editor.", name="Contact us (editor)")
    plan = await example.plan()
    reverted = {a.id: sorted(c.field for c in a.changes) for a in plan.actions}
    assert reverted == {"page:/about": ["description"], "page:/contact": ["description"]}
    assert all(a.drift for a in plan.actions)
    assert {c.id: c.fields for c in plan.site_changes} == {
        "page:/services": ("description",),
        "page:/contact": ("name",),
    }


PLAIN: dict[str, Any] = {
    "pages": [
        {"path": "/", "name": "Home", "areas": {"Main": [{"type": "content", "value": {"content": "<p>Home</p>"}}]}},
        {
            "path": "/plain",
            "name": "Plain",
            "areas": {"Main": [{"type": "content", "value": {"content": "<p>A page of its own.</p>"}}]},
        },
    ]
}


async def test_a_description_the_page_never_had_is_the_contents_change_after_an_editors_edit(
    sandbox_server: Sandbox, tmp_path: Path
) -> None:
    """Pull leaves an empty description out of the file; once an editor publishes a block edit, the content
    setting a description is its own change, not a conflict of unknown base (seen on the real elemental site)."""
    site = Site.seeded(sandbox_server, tmp_path, PLAIN)
    await site.pull()
    assert "description:" not in (site.root / "pages" / "plain.yaml").read_text(encoding="utf-8")
    editor = Editor(site.sandbox)
    editor.edit_block("/plain", "Main", 0, EDITOR_WORDS)
    site.edit("pages/plain.yaml", "name: Plain\n", "name: Plain\ndescription: Written in the content.\n")

    plan = await site.plan()
    assert not plan.conflicts, render_text(plan)  # was: conflict description (fail), base not known
    assert [c.field for c in plan.by_id()["page:/plain"].changes] == ["description"]
    assert [(c.id, c.fields) for c in plan.site_changes] == [("page:/plain", ("area:Main",))]
    assert (await site.apply()).exit_code == 0, site.last_output

    # an apply records the same: a base without the page's description (a state written before) gets it back
    state = json.loads(site.state_path.read_text(encoding="utf-8"))
    del state["pages"]["/plain"]["base"]["fields"]["description"]
    site.state_path.write_text(json.dumps(state), encoding="utf-8")
    site.edit("pages/plain.yaml", "description: Written in the content.\n", "")
    site.edit("pages/plain.yaml", "name: Plain\n", "name: Plain and simple\n")
    assert (await site.apply()).exit_code == 0, site.last_output
    editor.edit_block("/plain", "Main", 0, "<p>A second edit by the editor.</p>")
    editor.close()
    site.edit("pages/plain.yaml", "name: Plain and simple\n", "name: Plain and simple\ndescription: Written again.\n")
    plan = await site.plan()
    assert not plan.conflicts, render_text(plan)
    assert [c.field for c in plan.by_id()["page:/plain"].changes] == ["description"]
