"""Stacks (global areas) as content: found by pull although the API lists none, written as ``stacks/<handle>.yaml``,
edited, applied and published like pages; the edit shows on every public page; the next plan is empty. A stack is
its own kind in plans, targets and output (``stack:footer``), recorded in the state as its page ``/!stacks/footer``.

The sandbox site has the stacks a theme's global areas show on every page (``/!stacks/footer``, shown as the global
area "Footer") and one no page shows, as the recorded sample site has them
(tests/conformance/concrete-9.3.1/stacks.jsonl).
"""

from __future__ import annotations

import io
import json
import shutil
from pathlib import Path
from typing import Any

import httpx
import pytest
from ruamel.yaml import YAML

from cmssync.commands.pull import run_pull
from cmssync.emulator.embedded import Sandbox
from cmssync.errors import PlanError
from cmssync.plan.scope import scope_for_paths
from cmssync.plan.warnings import kind_of
from cmssync.sync.applying import ApplyRequest, apply_site
from cmssync.sync.plan_files import write_plan_file
from cmssync.sync.state_ops import refresh
from cmssync.sync.workspace import open_workspace
from tests.support.editors import Editor
from tests.support.sites import Site
from tests.support.stacks import SEED, content_block

FOOTER = "stacks/footer.yaml"


@pytest.fixture
def site(sandbox_server: Sandbox, tmp_path: Path) -> Site:
    return Site.seeded(sandbox_server, tmp_path, SEED)


def _public(site: Site, path: str) -> str:
    return httpx.get(site.sandbox.url + path, timeout=30).text


async def test_a_stack_is_pulled_edited_applied_and_shown_on_every_page(site: Site) -> None:
    summary = await site.pull()
    assert "stacks (global areas): 2 written new" in summary
    assert sorted(p.name for p in (site.root / "stacks").iterdir()) == ["footer.yaml", "sidebar.yaml"]
    written = YAML(typ="safe").load((site.root / FOOTER).read_text(encoding="utf-8"))
    assert written == {"id": 7, "name": "Footer", "areas": {"Main": [content_block("Footer text")]}}
    assert not (site.root / "pages" / "dashboard.yaml").exists()  # a system page, not a stack
    assert not (await site.plan()).actions

    # one block updated and three added, the edit whose writes each make a stack version (stack-writes.jsonl)
    written["areas"]["Main"] = [
        content_block("Footer text, edited"),
        *(content_block(f"Footer line {n}") for n in (1, 2, 3)),
    ]
    (site.root / FOOTER).write_text(json.dumps(written), encoding="utf-8")  # JSON is YAML
    plan = await site.plan()
    assert [(a.kind, a.key, a.op) for a in plan.actions] == [("stack", "footer", "update")]
    assert [b.op for b in plan.actions[0].blocks] == ["update", "add", "add", "add"]
    report = await site.apply()
    assert report.exit_code == 0, site.last_output
    for path in ("/", "/about"):
        shown = _public(site, path)
        assert all(text in shown for text in ("Footer text, edited", "Footer line 1", "Footer line 2", "Footer line 3"))
    assert not (await site.plan()).actions


async def test_what_a_stack_cannot_do_is_said(site: Site) -> None:
    await site.pull()
    site.write("stacks/gone.yaml", "id: 99\nname: Gone\nareas:\n  Main: []\n")
    (site.root / "stacks" / "sidebar.yaml").unlink()
    site.edit(FOOTER, "Footer text", "Footer text, edited")
    site.edit(FOOTER, "name: Footer", "name: Site footer")
    settings = (site.root / "cmssync.yaml").read_text(encoding="utf-8")
    site.write("cmssync.yaml", settings + "publish: draft\n")  # the starter file pull wrote sets no publish mode
    plan = await site.plan(prune=True)
    assert [(a.id, a.op) for a in plan.actions] == [("stack:footer", "update")]  # the sidebar is never deleted
    warned = "\n".join(plan.warnings)
    assert "stack gone: pinned id 99 does not exist on the site; a stack cannot be created" in warned
    assert "a stack's unapproved draft shows on the site's pages at once" in warned
    assert "the stack's name is 'Footer' on the site; name 'Site footer' is not written" in warned
    assert "stack sidebar is protected and will not be deleted" in warned


async def test_a_stack_edited_on_the_site_and_in_the_content_is_a_conflict(site: Site) -> None:
    await site.pull()
    editor = Editor(site.sandbox)
    editor.edit_block("/!stacks/footer", "Main", 0, "<p>Footer text, by an editor</p>", page_id=7)
    editor.close()
    plan = await site.plan()
    assert plan.actions == ()  # changed on the site only: kept there (drift: propose), to bring back
    assert [(c.id, c.fields) for c in plan.site_changes] == [("stack:footer", ("area:Main",))]
    site.edit(FOOTER, "Footer text", "Footer text, edited")
    plan = await site.plan()
    assert [(c.id, c.field) for c in plan.conflicts] == [("stack:footer", "area:Main")]
    assert [h.id for h in plan.held] == ["stack:footer"]  # refused by default: nothing is overwritten


async def test_an_editors_block_in_a_stack_after_a_refresh_is_kept(site: Site) -> None:
    """The real-site finding behind refresh's base (instance 8094): after ``cmssync refresh`` an editor's edit of a
    stack's block was planned as an update and written over; now it is a site change, kept on the site."""
    await site.pull()
    await refresh(site.workspace())
    editor = Editor(site.sandbox)
    editor.edit_block("/!stacks/footer", "Main", 0, "<p>Footer text, by an editor</p>", page_id=7)
    plan = await site.plan()
    assert plan.actions == ()
    assert [(c.id, c.fields) for c in plan.site_changes] == [("stack:footer", ("area:Main",))]
    assert (await site.apply()).exit_code == 0
    assert "Footer text, by an editor" in _public(site, "/about")
    editor.close()


async def test_a_page_id_the_search_cannot_read_is_named_and_the_pull_is_incomplete(site: Site) -> None:
    # the dashboard page: its reads always fail, and it might have been a stack
    code, summary = await _pull(site, "500:1:path=/ccm/api/1.0/pages/5$")
    assert code == 1, summary  # incomplete, as for any object pull cannot read (was: "skipped", exit 0)
    assert "not pulled: page id 5: cannot be read while looking for stacks (GET /ccm/api/1.0/pages/5 (500)" in summary
    assert "skipped:" not in summary
    assert summary.rstrip().endswith(
        "Pull incomplete: 1 object could not be read and was not pulled (named above); everything else was pulled"
    )
    assert "stacks (global areas): 2 written new" in summary
    assert (site.root / "pages" / "about.yaml").is_file()


async def _pull(site: Site, *faults: str, **options: Any) -> tuple[int, str]:
    """``cmssync pull`` while ``faults`` hold: its exit code and summary."""
    out = io.StringIO()
    site.sandbox.set_faults(list(faults))
    try:
        code = await run_pull(site.root, out=out, overrides=site.overrides(), **options)
    finally:
        site.sandbox.clear_faults()
    return code, out.getvalue()


async def test_a_stack_whose_render_fails_is_pulled_without_it(site: Site) -> None:
    # a theme template that breaks outside a page: the stack's read with its render answers 500, without it 200
    code, summary = await _pull(site, "500:1:path=/ccm/api/1.0/pages/7$:query=areas\\.content")
    assert code == 0, summary
    assert "note: stack footer (id 7): the rendered areas cannot be read (GET /ccm/api/1.0/pages/7 (500)" in summary
    assert "stacks (global areas): 2 written new" in summary
    written = YAML(typ="safe").load((site.root / FOOTER).read_text(encoding="utf-8"))
    assert written["areas"] == {"Main": [content_block("Footer text")]}  # no link needed the render
    assert not (await site.plan()).actions


async def test_a_stack_that_cannot_be_read_is_named_and_everything_else_is_pulled(site: Site) -> None:
    await site.pull()
    (site.root / FOOTER).unlink()
    editor = Editor(site.sandbox)
    editor.edit_block("/about", "Main", 0, "<p>About us, by an editor</p>")
    editor.edit_block("/!stacks/sidebar", "Main", 0, "<p>Sidebar, by an editor</p>", page_id=8)
    editor.close()
    for options in ({}, {"kinds": ("page",)}, {"kinds": ("stack",)}):
        code, summary = await _pull(site, "500:1:path=/ccm/api/1.0/pages/7$", **options)
        assert code == 1, summary  # incomplete
        assert "not pulled: stack footer (id 7): cannot be read (" in summary, summary
        assert summary.rstrip().endswith(
            "Pull incomplete: 1 object could not be read and was not pulled (named above); everything else was pulled"
        )
        assert "next plan is empty" not in summary
    assert "About us, by an editor" in (site.root / "pages" / "about.yaml").read_text(encoding="utf-8")
    assert "Sidebar, by an editor" in (site.root / "stacks" / "sidebar.yaml").read_text(encoding="utf-8")
    assert not (site.root / FOOTER).exists()  # not written from nothing
    assert "/!stacks/footer" in site.workspace().load_state().pages  # still managed: never forgotten


async def test_pages_whose_list_cannot_be_read_are_named_and_the_others_are_pulled(site: Site) -> None:
    code, summary = await _pull(site, "500:1:path=/ccm/api/1.0/pages/1/children")
    assert code == 1, summary
    assert "not pulled: the pages below page / (children of id 1): cannot be read (" in summary
    assert (site.root / "pages" / "index.yaml").is_file()
    assert (site.root / "stacks" / "footer.yaml").is_file()
    assert not (site.root / "pages" / "about.yaml").exists()
    code, summary = await _pull(site, "500:1:path=/ccm/api/1.0/pages/1/children:query=areas\\.content", take_all=True)
    assert code == 0, summary
    assert "note: the pages below page / (children of id 1): the rendered areas cannot be read" in summary
    assert (site.root / "pages" / "about.yaml").is_file()


async def test_a_changed_stack_file_plans_in_an_incremental_run(site: Site) -> None:
    await site.pull()
    site.edit(FOOTER, "Footer text", "Footer text, edited")
    scope = scope_for_paths([FOOTER])
    assert scope is not None
    site.sandbox.clear_stats()
    plan = await site.plan(scope=scope)
    assert [(a.id, a.op) for a in plan.actions] == [("stack:footer", "update")]
    assert site.sandbox.stats()["total"] < 10, site.sandbox.stats()["by_route"]


async def test_a_stack_is_targeted_applied_and_recorded_by_its_handle(site: Site) -> None:
    await site.pull()
    site.edit(FOOTER, "Footer text", "Footer text, edited")
    plan = await site.plan(targets=("stack:footer",))
    assert [(a.id, a.op) for a in plan.actions] == [("stack:footer", "update")]
    assert not (await site.plan(targets=("page:/*",))).actions  # pages only: a stack is not a page of the plan
    with pytest.raises(PlanError, match="'stack:nowhere' matches no stack"):
        await site.plan(targets=("stack:nowhere",))
    report = await site.apply(targets=("stack:footer",))
    assert report.exit_code == 0, site.last_output
    assert "~ stack footer: update" in site.last_output
    assert "/!stacks/footer" in site.workspace().load_state().pages  # as states of earlier versions hold it
    assert not (await site.plan()).actions


async def test_a_saved_plan_of_a_stack_is_refused_once_the_stack_was_published(site: Site, tmp_path: Path) -> None:
    await site.pull()
    site.edit(FOOTER, "Footer text", "Footer text, edited")
    plan_file = tmp_path / "plan.json"
    write_plan_file(await site.plan(), plan_file)
    editor = Editor(site.sandbox)
    editor.edit_block("/!stacks/footer", "Main", 0, "<p>Footer text, by an editor</p>", page_id=7)
    editor.close()
    with pytest.raises(PlanError, match="stale: stack footer was published since"):
        await site.apply(plan_file)


async def test_a_saved_plan_of_a_stack_applies_without_the_content_directory(site: Site, tmp_path: Path) -> None:
    await site.pull()
    site.edit(FOOTER, "Footer text", "Footer text, edited")
    plan_file = tmp_path / "plan.json"
    write_plan_file(await site.plan(), plan_file)
    kept = tmp_path / "content-kept"
    shutil.move(site.root, kept)
    workspace = open_workspace(site.root, overrides=site.overrides(), missing_ok=True)
    report = await apply_site(workspace, ApplyRequest(plan_file=plan_file))
    assert report.exit_code == 0, report.problems
    assert [(o.action.id, o.status) for o in report.outcomes] == [("stack:footer", "ok")]
    assert "Footer text, edited" in _public(site, "/about")
    shutil.move(kept, site.root)
    assert not (await site.plan()).actions


async def test_every_message_about_a_stack_names_it_by_its_handle(site: Site) -> None:
    await site.pull()
    editor = Editor(site.sandbox)
    editor.edit_block("/!stacks/footer", "Main", 0, "<p>Footer text, a draft</p>", approve=False, page_id=7)
    editor.close()
    settings = (site.root / "cmssync.yaml").read_text(encoding="utf-8")
    site.write("cmssync.yaml", settings + "on_foreign_draft: merge\n")
    site.edit(FOOTER, "Footer text", "Footer text, edited")
    plan = await site.plan()
    assert "stack footer: changes go into its pending draft (on_foreign_draft: merge)" in plan.warnings
    assert kind_of("stack footer: changes go into its pending draft (on_foreign_draft: merge)") == "foreign_draft_merge"
    assert not [w for w in plan.warnings if "/!stacks" in w]
