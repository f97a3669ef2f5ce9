"""The HTML-aware word diff: tokens give the text back, segments give both sides back, output is escaped."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from cmssync.render.html.worddiff import counts, diff_html, diff_tokens, tokens, visible_text

FRAGMENTS = st.text(alphabet=st.sampled_from(list("ab <>/p=\"'&;#x1 \n\té")), max_size=60) | st.sampled_from(
    ["<p>Hello <b>world</b></p>", "<p>Hello <i>world</i> &amp; more</p>", "", "<br>", "a < b &lt; c"]
)


@given(FRAGMENTS)
def test_tokens_give_the_text_back(text: str) -> None:
    assert "".join(tokens(text)) == text


@given(FRAGMENTS, FRAGMENTS)
def test_segments_give_both_sides_back(before: str, after: str) -> None:
    segments = diff_tokens(before, after)
    assert "".join("".join(s.tokens) for s in segments if s.op != "+") == before
    assert "".join("".join(s.tokens) for s in segments if s.op != "-") == after


def test_a_changed_word_is_marked_and_the_rest_is_not() -> None:
    shown = diff_html("<p>We build sites for clubs.</p>", "<p>We build sites for charities.</p>")
    assert "<del>clubs</del><ins>charities</ins>" in shown
    assert "We build sites for" in shown
    assert counts(diff_tokens("<p>a b c</p>", "<p>a x c d</p>")) == (2, 1)


def test_a_changed_tag_is_shown_as_escaped_source() -> None:
    shown = diff_html('<a href="/old">link</a>', '<a href="/new">link</a>')
    assert '<del><span class="tag">&lt;a href=&quot;/old&quot;&gt;</span></del>' in shown
    assert '<ins><span class="tag">&lt;a href=&quot;/new&quot;&gt;</span></ins>' in shown


def test_unchanged_markup_is_hidden_and_block_ends_break_lines() -> None:
    shown = diff_html("<p>one</p><p><b>two</b></p>", "<p>one</p><p><b>three</b></p>")
    assert "<b>" not in shown
    assert "&lt;b&gt;" not in shown
    assert shown.startswith("one<br>")


def test_script_in_content_never_reaches_the_markup() -> None:
    shown = diff_html("<p>x</p>", '<p>x</p><script>alert(1)</script><img src=x onerror="alert(2)">')
    assert "<script" not in shown
    assert "<img" not in shown
    assert "&lt;script&gt;" in shown
    assert "onerror=&quot;alert(2)&quot;" in shown


def test_entities_are_decoded_for_reading_and_escaped_again() -> None:
    assert "Fish &amp; chips" in diff_html("<p>Fish &amp; chips</p>", "<p>Fish &amp; chips!</p>")
    assert visible_text("<p>Fish &amp;\n <b>chips</b></p>") == "Fish & chips"


def test_long_unchanged_runs_are_cut_around_the_change() -> None:
    words = " ".join(f"w{i}" for i in range(300))
    shown = diff_html(f"<p>{words} end</p>", f"<p>{words} END</p>")
    assert '<span class="cut">…</span>' in shown
    assert "w0 " not in shown
    assert "w299" in shown
    assert len(shown) < 400


def test_huge_pairs_are_diffed_line_by_line_first() -> None:
    lines = [f"<p>line {i} with some words</p>" for i in range(3000)]
    after = list(lines)
    after[1500] = "<p>line 1500 with other words</p>"
    segments = diff_tokens("\n".join(lines), "\n".join(after))
    changed = [s for s in segments if s.op != "="]
    assert ["".join(s.tokens) for s in changed] == ["some", "other"]
