"""What a reviewer reads (issue 36 item 6): folders by path, files by name, never an export token; the PR comment
renders as GitHub shows it (tests/sync/test_markdown.py checks the markdown itself)."""

from __future__ import annotations

from cmssync.plan.actions import Action, Plan
from cmssync.render.markdown import render_markdown
from cmssync.render.text import readable, render_text
from tests.support.plans import content_update
from tests.support.sites import Site


async def test_a_new_files_folder_is_shown_by_its_path(example: Site) -> None:
    plan = await example.plan()
    logo = next(a for a in plan.actions if a.key == "images/logo.png")
    assert {c.field: c.after for c in logo.changes}["folder"] == "/images"  # was 10, the folder's id
    assert "/images" in render_text(plan)


def test_values_show_files_by_name_and_pages_by_path() -> None:
    assert readable('<img src="{ccm:export:file:123456789012:people-01.jpg}">') == '<img src="[file people-01.jpg]">'
    assert readable('<img src="${file-id:images/people-01.jpg}">') == '<img src="[file people-01.jpg]">'
    assert readable('<a href="{ccm:file-link}">x</a>') == '<a href="[download link]">x</a>'
    assert readable('<a href="{ccm:export:page:/about}">') == '<a href="[page /about]">'
    assert readable('<a href="{ccm:export:page:}">') == '<a href="[page /]">'


def test_a_re_pointed_file_is_no_garbled_token_in_the_comment() -> None:
    before = '<p><img src="{ccm:export:file:111122223333:people-01.jpg}" alt="People"></p>\n' + "<p>words</p>\n" * 3
    after = before.replace("{ccm:export:file:111122223333:people-01.jpg}", "${file-id:images/people-01.jpg}")
    block = content_update(7, {"content": before}, {"content": after})
    plan = Plan(
        site="https://x.test",
        content_digest="00",
        actions=(Action(kind="page", key="/team", op="update", blocks=(block,)),),
    )
    for rendered in (render_markdown(plan), render_text(plan)):
        assert "ccm:export" not in rendered
        assert "file-id" not in rendered
