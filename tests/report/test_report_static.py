"""The HTML report where scripts do not run (print, PDF, viewers that block scripts) and on a narrow screen
(issue 27 item 7): every preview pane holds the block's text instead of being empty, and long values such as
SHA-256 digests wrap instead of widening the page."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from cmssync.emulator.embedded import Sandbox
from cmssync.plan.actions import Action, FieldChange, Plan
from cmssync.render.html import render_html
from tests.report.browser import Browser
from tests.report.scenario import edit_scenario_report
from tests.support.plans import content_update

pytestmark = pytest.mark.slow


@pytest.fixture
def no_scripts(browser: Browser) -> Iterator[Browser]:
    browser.send("Emulation.setScriptExecutionDisabled", value=True)
    try:
        yield browser
    finally:
        browser.send("Emulation.setScriptExecutionDisabled", value=False)


def test_previews_show_the_blocks_text_without_scripts(
    no_scripts: Browser, example_root: Path, sandbox: Sandbox, tmp_path: Path
) -> None:
    path = edit_scenario_report(example_root, sandbox, tmp_path / "report.html")
    no_scripts.open(path.as_uri())
    panes = no_scripts.evaluate(
        "Array.from(document.querySelectorAll('.pv')).map(p => [p.getAttribute('data-title'), p.textContent,"
        " p.querySelectorAll('iframe').length, p.getBoundingClientRect().height])"
    )
    assert len(panes) == 6
    assert all(text.strip() and frames == 0 and height >= 70 for _, text, frames, height in panes), panes
    by_title = {title: text for title, text, _, _ in panes}
    assert any("We now look after forty sites." in text for title, text in by_title.items() if "content" in title)


def test_long_values_wrap_on_a_narrow_screen(browser: Browser, tmp_path: Path) -> None:
    digest_before, digest_after = "sha256:" + "a" * 64, "sha256:" + "b" * 64
    plan = Plan(
        site="https://www.example.org",
        content_digest="00",
        actions=(
            Action(
                kind="file",
                key="documents/" + "very-long-file-name-" * 6 + ".pdf",
                op="replace",
                changes=(FieldChange(field="sha256", before=digest_before, after=digest_after),),
            ),
            Action(
                kind="page",
                key="/about",
                op="update",
                blocks=(
                    content_update(
                        3,
                        {"content": "<p>x</p>", "link": "https://example.org/" + "z" * 150},
                        {"content": "<p>y</p>", "link": "https://example.org/" + "w" * 150},
                    ),
                ),
            ),
        ),
    )
    path = tmp_path / "narrow.html"
    path.write_text(render_html(plan))
    browser.send("Emulation.setDeviceMetricsOverride", width=600, height=900, deviceScaleFactor=1, mobile=False)
    try:
        browser.open(path.as_uri())
        browser.evaluate("document.querySelectorAll('details').forEach(d => d.open = true); 0")
        overflowing = browser.evaluate(
            "Array.from(document.querySelectorAll('main *')).filter(e => e.parentElement &&"
            " e.getBoundingClientRect().right > e.parentElement.getBoundingClientRect().right + 1)"
            ".map(e => e.tagName + '.' + e.className + ': ' + e.textContent.slice(0, 40))"
        )
        assert overflowing == []  # a sha256 cell used to push its table 200 px past the page
        assert browser.evaluate("document.documentElement.scrollWidth <= window.innerWidth")
    finally:
        browser.send("Emulation.clearDeviceMetricsOverride")
