"""The PR-comment markdown: always within its budget, summary first, fences that cannot be closed by content."""

from __future__ import annotations

import re

from markdown_it import MarkdownIt

from cmssync.plan.actions import Action, BlockedDeletes, FieldConflict, HeldObject, KeptObjects, Plan
from cmssync.render.markdown import DEFAULT_BUDGET, fence_for, render_markdown
from tests.support.plans import content_update, sample_plan


def big_plan(pages: int, html: str = "<p>" + "word " * 60 + "</p>") -> Plan:
    actions = tuple(
        Action(
            kind="page",
            key=f"/section-{n // 100}/page-{n}",
            op="update",
            blocks=(content_update(n, {"content": html}, {"content": html.replace("word", "WORD", 3)}),),
        )
        for n in range(pages)
    )
    return Plan(site="https://www.example.com", content_digest="00", actions=actions)


def test_a_thousand_page_plan_fits_the_budget_with_the_summary_first() -> None:
    text = render_markdown(big_plan(1000))
    assert len(text) <= DEFAULT_BUDGET
    assert text.index("| create | update | delete | move |") < text.index("<details>")
    assert "| 0 | 1000 | 0 | 0 |" in text
    shown = text.count("<details>")
    assert 0 < shown < 1000
    assert f"**{1000 - shown} more object(s) not shown here**" in text
    assert text.rstrip().endswith("_Plan: 0 to create, 1000 to update, 0 to delete._")


def test_a_small_budget_still_shows_the_summary() -> None:
    text = render_markdown(big_plan(50), budget=3000)
    assert len(text) <= 3000
    assert "| 0 | 50 | 0 | 0 |" in text
    assert "more object(s) not shown here" in text


def test_fences_outlast_backtick_runs_in_content() -> None:
    text = render_markdown(big_plan(2, html="<pre>\n```\nnot a fence, word\n````\n</pre>"))
    fences = re.findall(r"^(`{3,})diff$", text, flags=re.M)
    assert fences
    assert all(len(fence) == 5 for fence in fences)
    # every opened fence is closed by the same run, after the content's own backticks
    for fence in fences:
        assert text.count(f"\n{fence}\n") >= 1
    assert fence_for("no ticks") == "```"
    assert fence_for("a `` b") == "```"
    assert fence_for("``````") == "```````"


def test_blocked_deletes_are_shown_and_the_plan_is_not_empty() -> None:
    plan = Plan(
        site="https://www.example.com",
        content_digest="00",
        blocked=(
            BlockedDeletes(kind="page", keys=("/a", "/b"), managed=4, guard="max_fraction", limit="max_fraction=0.25"),
        ),
    )
    text = render_markdown(plan)
    assert "No changes" not in text
    assert "**Deletes blocked:** refusing to delete 2 of 4 managed pages (guard max_fraction=0.25)" in text
    assert "2 deletes held back by the prune guards" in text


def test_every_diff_line_starts_with_a_sign_github_colours() -> None:
    """GitHub colours a ```diff line by its first character: every changed value must be a - line and a + line
    (the word-diff lines used to start with the text itself, so nothing was coloured; issue 27 item 7)."""
    rendered = render_markdown(sample_plan())
    fences = re.findall(r"```diff\n(.*?)\n```", rendered, flags=re.DOTALL)
    assert fences
    lines = [line for fence in fences for line in fence.splitlines()]
    assert all(line[:1] in {"+", "-", " ", "#", "~", ">"} for line in lines), lines
    assert "- About We build sites. Since 2014." in lines
    assert "+ About {+us+} We build sites. Since 2014." in lines
    assert '- name: "About"' in lines
    assert '+ name: "About us"' in lines


def _rendered(markdown: str) -> str:
    """The comment as GitHub renders it: CommonMark with GFM tables."""
    return MarkdownIt("commonmark").enable("table").render(markdown)


def test_notes_render_as_paragraphs_of_their_own_after_a_conflict_list() -> None:
    """A warning right after ``</details>`` was part of the HTML block (shown as a literal ``> **Warning:**``), and
    adjacent notes ran into one paragraph (issue 36 item 6)."""
    conflict = FieldConflict(kind="page", key="/about", field="name", content="About us", site="About them")
    plan = Plan(
        site="https://www.example.com",
        content_digest="00",
        kept=(KeptObjects(kind="page", keys=("/old",)),),
        held=(HeldObject(kind="page", key="/about", reason="conflict", message="changed on both sides"),),
        conflicts=(conflict,),
        warnings=("first warning", "second warning"),
    )
    html = _rendered(render_markdown(plan))
    assert "**Warning:**" not in html  # never literal markdown
    assert "&gt; " not in html
    paragraphs = re.findall(r"<p>(.*?)</p>", html, flags=re.DOTALL)
    notes = [p for p in paragraphs if p.startswith("<strong>")]
    assert [p.split("</strong>")[0].removeprefix("<strong>") for p in notes] == [
        "Kept:",
        "Refused:",
        "Warning:",
        "Warning:",
    ], html
    assert all(p.count("<strong>") == 1 for p in notes), notes  # one note per paragraph
    assert "<details><summary>1 conflict(s)</summary>" in html


def test_a_plan_with_sections_renders_every_details_block_closed() -> None:
    html = _rendered(render_markdown(sample_plan()))
    assert html.count("<details>") == html.count("</details>")
    assert "<table>" in html
    assert "```" not in html  # every fence was taken as a fence
