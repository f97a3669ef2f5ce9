"""Naming the stack each stack display of an area shows from the area's rendering (``cmssync.plan.stack_displays``),
on renderings shaped like the recorded ones (stack-displays.jsonl: a stack's ``Main`` rendered byte for byte inside
the page's area, between the page's own blocks)."""

from __future__ import annotations

from cmssync.plan.stack_displays import name_stacks, neutral

FOOTER = '\n\n    \n<div class="ccm-block-content">\n    <p>Footer</p></div>\n\n'
SIDEBAR = '\n\n    \n<div class="ccm-block-topic-list">Topics</div>\n\n'
OWN = '\n\n    \n<div class="ccm-block-content">\n    <p>The page</p></div>\n\n'
STACKS = {"/!stacks/footer": FOOTER, "/!stacks/sidebar": SIDEBAR, "/!stacks/empty": "\n\n"}


def test_each_display_is_the_stack_found_at_its_place_in_order() -> None:
    area = OWN + SIDEBAR + OWN + FOOTER + SIDEBAR
    assert name_stacks(area, 3, STACKS) == ["/!stacks/sidebar", "/!stacks/footer", "/!stacks/sidebar"]


def test_a_stack_whose_rendering_begins_another_counts_only_where_it_is_alone() -> None:
    longer = {**STACKS, "/!stacks/footer-and-more": FOOTER + "<p>more</p>"}
    assert name_stacks(OWN + FOOTER + "<p>more</p>" + FOOTER, 2, longer) == [
        "/!stacks/footer-and-more",
        "/!stacks/footer",
    ]


def test_what_cannot_be_told_names_no_display_of_the_area_and_says_why() -> None:
    same = name_stacks(OWN + FOOTER, 1, {**STACKS, "/!stacks/copy": FOOTER})
    assert same == "stack copy and stack footer render the same, so the page's rendering cannot tell them"
    missing = name_stacks(OWN + FOOTER, 2, STACKS)  # the second display shows an empty stack, or one not read
    assert isinstance(missing, str)
    assert "shows 1 of the 2 stacks read where the area has 2 stack display(s)" in missing
    assert name_stacks(OWN + FOOTER + OWN, 1, {}) == (
        "the page's rendering shows 0 of the 0 stacks read where the area has 1 stack display(s): a stack shown "
        "renders nothing, renders differently inside the page, or was not read"
    )
    assert name_stacks(None, 1, STACKS) == "the page was read without its rendering, which alone names the stack"


def test_a_localized_version_names_its_neutral_stack() -> None:
    localized = {"/!stacks/footer": FOOTER, "/!stacks/footer/footer": "<p>Fußzeile</p>"}
    assert name_stacks(OWN + "<p>Fußzeile</p>", 1, localized) == ["/!stacks/footer"]
    assert neutral("/!stacks/footer") == "/!stacks/footer"


def test_a_stack_is_told_although_a_form_in_it_names_the_page_it_is_shown_on() -> None:
    """Recorded on the real site (instance 8090): the sample footer's form posts to ``/!stacks/…/submit/41`` in the
    stack's own rendering, and to the page's ``/about/submit/41`` with a token inside the page."""
    lines = [f"<p>line {n}</p>" for n in range(20)]
    head = '<div class="ccm-block-express-form">'
    alone = "\n".join([head, '<form action="/!stacks/form/submit/41">', *lines])
    shown = "\n".join([head, '<form action="/about/submit/41"><input name="t">', *lines])
    assert name_stacks(OWN + shown + "\n" + SIDEBAR, 2, {**STACKS, "/!stacks/form": alone}) == [
        "/!stacks/form",
        "/!stacks/sidebar",
    ]
    one_more = alone.replace("<p>line 1<", "<p>edited 1<")  # 2 of 22 lines differ: still the stack
    assert name_stacks(OWN + shown, 1, {"/!stacks/form": one_more}) == ["/!stacks/form"]
    different = alone.replace("<p>line", "<p>other")  # most lines differ: another stack
    assert isinstance(name_stacks(OWN + shown, 1, {"/!stacks/form": different}), str)
