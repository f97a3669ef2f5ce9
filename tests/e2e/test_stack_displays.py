"""Stack displays (a stack placed in a page's area) as typed blocks naming the stack by handle (issue 36 item 3):
pull writes ``- type: core_stack_display`` with ``value: {stack: <handle>}`` although the API reads every display
as ``value: []`` (the page's rendering names the stack, as recorded in stack-displays.jsonl), the next plan is
empty, pointing a display at another stack is one block update (``stID``), the public page then shows the other
stack, and the plan after is empty. A display whose stack cannot be told is kept as a placeholder, with why.
"""

from __future__ import annotations

import contextlib
import copy
import json
from typing import Any

import httpx
import pytest
from ruamel.yaml import YAML

from cmssync.emulator.embedded import Sandbox
from cmssync.errors import ContentError
from cmssync.render.text import render_text
from cmssync.sync.state_ops import import_object, parse_address, refresh, remove
from tests.support.editors import Editor
from tests.support.sites import Site
from tests.support.stacks import SEED, content_block

PAGE = "pages/about.yaml"


def _display(stack_id: int) -> dict[str, Any]:
    return {"type": "core_stack_display", "value": {"stID": stack_id}}


def _seed(*about: dict[str, Any], sidebar: str = "Sidebar text") -> dict[str, Any]:
    """The stacks site (footer 7, sidebar 8) with ``/about``'s Main holding ``about``."""
    seed = copy.deepcopy(SEED)
    pages = {page["path"]: page for page in seed["pages"]}
    pages["/about"]["areas"] = {"Main": [content_block("About us"), *about]}
    pages["/!stacks/sidebar"]["areas"] = {"Main": [content_block(sidebar)]}
    return seed


def _page(site: Site) -> dict[str, Any]:
    return dict(YAML(typ="safe").load((site.root / PAGE).read_text(encoding="utf-8")))


def _main(site: Site) -> list[Any]:
    return list(_page(site)["areas"]["Main"])


def _public(site: Site, path: str) -> str:
    """The page's own areas on its public page (the theme's global areas, which show the footer, left out)."""
    html = httpx.get(site.sandbox.url + path, timeout=30).text
    return html.split('<section class="ccm-global-area"', 1)[0]


async def test_a_display_is_pulled_by_stack_handle_pointed_at_another_stack_and_shown(
    sandbox_server: Sandbox, tmp_path: Any
) -> None:
    site = Site.seeded(sandbox_server, tmp_path, _seed(_display(8), _display(7)))
    summary = await site.pull()
    assert _main(site) == [
        content_block("About us"),
        {"type": "core_stack_display", "value": {"stack": "sidebar"}},
        {"type": "core_stack_display", "value": {"stack": "footer"}},
    ], summary
    assert not (await site.plan()).actions  # named again from the rendering: nothing to write

    site.edit(PAGE, "stack: footer", "stack: sidebar")
    plan = await site.plan()
    assert [(a.id, [b.op for b in a.blocks]) for a in plan.actions] == [("page:/about", ["update"])]
    assert 'stack: "[stack footer]" → "[stack sidebar]"' in render_text(plan)  # named as the content names it
    assert (await site.apply()).exit_code == 0, site.last_output
    shown = _public(site, "/about")
    assert shown.count("Sidebar text") == 2
    assert "Footer text" not in shown
    assert not (await site.plan()).actions


async def test_a_display_added_in_the_content_is_written_with_the_stacks_id(
    sandbox_server: Sandbox, tmp_path: Any
) -> None:
    site = Site.seeded(sandbox_server, tmp_path, _seed())
    await site.pull()
    page = _page(site)
    page["areas"]["Main"].append({"type": "core_stack_display", "value": {"stack": "sidebar"}})
    (site.root / PAGE).write_text(json.dumps(page), encoding="utf-8")  # JSON is YAML
    plan = await site.plan()
    assert [(a.id, [b.op for b in a.blocks]) for a in plan.actions] == [("page:/about", ["add"])]
    assert (await site.apply()).exit_code == 0, site.last_output
    assert "Sidebar text" in _public(site, "/about")
    assert not (await site.plan()).actions


async def test_a_display_whose_stack_cannot_be_told_is_kept_with_why(sandbox_server: Sandbox, tmp_path: Any) -> None:
    """Two stacks that render the same cannot be told apart by the page's rendering: pull keeps the display."""
    site = Site.seeded(sandbox_server, tmp_path, _seed(_display(8), sidebar="Footer text"))
    summary = await site.pull()
    assert _main(site)[1] == {"keep": {"type": "core_stack_display", "id": _main(site)[1]["keep"]["id"]}}
    assert "stack footer and stack sidebar render the same" in summary
    assert not (await site.plan()).actions


async def test_a_display_of_a_stack_the_content_has_no_file_for_is_refused_where_it_is_written(
    sandbox_server: Sandbox, tmp_path: Any
) -> None:
    site = Site.seeded(sandbox_server, tmp_path, _seed(_display(8)))
    await site.pull()
    site.edit(PAGE, "stack: sidebar", "stack: no-such-stack")
    with pytest.raises(ContentError) as raised:
        await site.plan()
    problem = raised.value.problems[0]
    lines = (site.root / PAGE).read_text(encoding="utf-8").splitlines()
    written = next(number for number, line in enumerate(lines, start=1) if "no-such-stack" in line)
    assert (problem.file.endswith("about.yaml"), problem.line) == (True, written)
    assert "no stack 'no-such-stack' in the content" in problem.message


async def test_a_page_whose_rendering_cannot_be_read_is_held_with_the_servers_reason(
    sandbox_server: Sandbox, tmp_path: Any
) -> None:
    """A read with the rendering that fails (a theme template breaking outside a page: HTTP 500) leaves the page's
    displays unnamed: the page is held and named with the server's reason (they would look changed on the site)."""
    site = Site.seeded(sandbox_server, tmp_path, _seed(_display(8)))
    await site.pull()
    site.edit(PAGE, "<p>About us</p>", "<p>About us, edited</p>")
    about = site.workspace().load_state().pages["/about"].id
    site.sandbox.set_faults([f"500:1:path=/ccm/api/1.0/pages/{about}$:query=areas.content"])
    plan = await site.plan()
    assert plan.actions == ()
    assert not plan.site_changes
    [held] = plan.held
    assert held.id == "page:/about"
    assert "its rendering, which alone names its stack displays, could not be read" in held.message
    assert "500" in held.message
    site.sandbox.clear_faults()
    assert [a.id for a in (await site.plan()).actions] == ["page:/about"]


@pytest.mark.parametrize("rebind", ["refresh", "import"])
async def test_an_editors_change_after_a_refresh_or_import_of_a_page_with_a_display_is_a_site_change(
    sandbox_server: Sandbox, tmp_path: Any, rebind: str
) -> None:
    """``refresh`` and ``import`` record a page's base as pull does, its displays named from its rendering: an
    editor's block edit published after either is a site change kept under ``drift: propose`` (the displays read
    as ``value: []`` made the base differ from the content: a 'base not known' conflict, seen on the real site)."""
    site = Site.seeded(sandbox_server, tmp_path, _seed(_display(8), _display(7)))
    await site.pull()
    about = parse_address("page:/about")
    if rebind == "refresh":
        assert "page:/about (live version 1)" in (await refresh(site.workspace())).rebased
    else:
        page_id = site.workspace().load_state().pages["/about"].id
        remove(site.workspace().store, about)
        await import_object(site.workspace(), about, str(page_id))
    with contextlib.closing(Editor(site.sandbox)) as editor:
        editor.edit_block("/about", "Main", 0, "<p>An editor's words.</p>")
    plan = await site.plan()
    assert (plan.actions, plan.conflicts, plan.held) == ((), (), ()), plan.conflicts
    assert [(c.id, c.action, c.fields) for c in plan.site_changes] == [("page:/about", "propose", ("area:Main",))]
