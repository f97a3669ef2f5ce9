"""What a reviewer reads (issue 36 item 6): folders by path, files by name, never an export token; the PR comment
renders as GitHub shows it (tests/sync/test_markdown.py checks the markdown itself)."""

from __future__ import annotations

from pathlib import Path

from cmssync.emulator.embedded import Sandbox
from cmssync.plan.actions import Action, Plan
from cmssync.render.markdown import render_markdown
from cmssync.render.text import readable, render_text
from tests.support.file_seeds import content, home_seed
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
    assert readable('<a href="{ccm:file-link:brochure.pdf}">x</a>') == '<a href="[download link brochure.pdf]">x</a>'
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


BROCHURE = "ab12cd34-0000-4000-8000-000000000002"  # letter-led: reads back as an empty href
LINKED = home_seed(
    content(f'<p>Get <a href="{{CCM:FID_DL_{BROCHURE}}}">the brochure</a>.</p>'),
    files=[
        {"filename": "brochure.png", "png": [4, 4], "uuid": BROCHURE, "id": 3},
        {"filename": "price-list.png", "png": [4, 4], "uuid": "cd34ef56-0000-4000-8000-000000000003", "id": 4},
    ],
)


async def test_a_download_link_is_shown_by_the_name_of_its_file(sandbox_server: Sandbox, tmp_path: Path) -> None:
    site = Site.seeded(sandbox_server, tmp_path, LINKED)
    await site.pull()
    site.edit(
        "pages/index.yaml",
        "the brochure</a>.</p>",
        'the brochure</a>, now with <a href="${file-link:price-list.png}">our prices</a>.</p>',
    )
    added = "{type: content, value: {content: '<p><a href=\"${file-link:brochure.png}\">Brochure</a></p>'}}"
    page = site.root / "pages" / "index.yaml"
    page.write_text(page.read_text(encoding="utf-8") + f"    - {added}\n", encoding="utf-8")
    plan = await site.plan()
    assert [(b.op, b.position) for b in plan.actions[0].blocks] == [("update", 0), ("add", 1)]
    text, markdown = render_text(plan), render_markdown(plan)
    for rendered in (text, markdown):
        assert "[download link brochure.png]" in rendered  # the added block's link (was: [download link])
        assert "[download link price-list.png]" in rendered  # the link the update adds
        assert "file-link" not in rendered
    # the update's unchanged link to the brochure is no change: the site's read does not name its file
    assert text.count("[download link") == 2, text
    assert "[download link]" not in markdown, markdown
