"""An object that exists but cannot be read fails alone; the rest of the site is applied (issue 15, item 3).

``/about`` answers 403 (a permission changed) or 500 (on every attempt) to ``GET /pages/{id}`` while the page tree
still lists it. The run used to stop before any write. Now ``/about`` is held, with the server's reason. So are
the page to create below it (``/about/history``: it needs ``/about``) and ``/index``, whose new link needs
``/about``'s id. ``/contact`` is updated all the same. ``apply`` and ``plan`` exit 1 (docs/ci.md), nothing is
created twice, and the state still knows ``/about``. Once the page reads again, the next run applies what was
held, and the plan after that is empty.

A file the state knows that answers 403 to ``GET /files/{id}`` (a ``--target`` run reads it by id) is held the
same way. It is never uploaded again.
"""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import pytest

from cmssync.emulator.embedded import Sandbox
from tests.reliability.cli import run_cli
from tests.reliability.inventory import duplicates, problems, take_inventory
from tests.reliability.proxy import CorruptingProxy, Corruption, through
from tests.reliability.sites import ReliabilitySite, cli_environment
from tests.support.rawsite import RawSite
from tests.support.reliability_report import ReliabilityReport
from tests.support.sites import copy_example

ANSWERS = {
    403: (
        "You do not have access to this page.",
        json.dumps({"error": True, "errors": ["You do not have access to this page."]}),
    ),
    500: ("Internal Server Error", "<html><body><h1>Internal Server Error</h1></body></html>"),
}
HISTORY = "name: History\nareas:\n  Main:\n    - type: content\n      value:\n        content: <p>Since 1999.</p>\n"


@pytest.fixture
def site(tmp_path: Path, sandbox: Sandbox, monkeypatch: pytest.MonkeyPatch) -> ReliabilitySite:
    root = copy_example(tmp_path / "site", monkeypatch)
    return cli_environment(ReliabilitySite(root, sandbox), monkeypatch)


def _page_answer(status: int) -> tuple[str, bytes, str]:
    reason, body = ANSWERS[status]
    return reason, body.encode(), "application/json" if status == 403 else "text/html"


@pytest.mark.parametrize("status", [403, 500])
def test_an_unreadable_page_is_held_and_the_rest_of_the_site_applied(
    status: int, site: ReliabilitySite, capsys: pytest.CaptureFixture[str], reliability_report: ReliabilityReport
) -> None:
    assert not asyncio.run(site.apply()).failed, site.last_output
    about = site.state().pages["/about"].id
    site.edit("pages/about.yaml", "About us", "About the team")
    site.edit("pages/contact.yaml", "or call", "or phone")
    site.edit(
        "pages/index.yaml",
        "Download our",
        'Read <a href="${page-link:/about/history}">our history</a>. Download our',
    )
    site.write("pages/about/history.yaml", HISTORY)
    raw = RawSite(site.sandbox)
    try:
        seed = take_inventory(raw, block_pages=set())
        reason, body, content_type = _page_answer(status)
        proxy = CorruptingProxy(
            Corruption(
                f"page read {status}", "GET", rf"/pages/{about}$", status=status, body=body, content_type=content_type
            )
        )
        with through(proxy):
            planned = run_cli(capsys, "plan", "--detailed-exitcode", str(site.root))
            applied = run_cli(capsys, "apply", "--yes", str(site.root))
        after = take_inventory(raw, block_pages=set())
        contact = " ".join(str(v) for _t, v in raw.blocks("/contact", "Main"))
        about_page = raw.page_by_path("/about")
    finally:
        raw.close()

    found = problems(seed, after, site.content(), None)
    reliability_report.add(
        cases_tried=1, applies=1, faults_injected=proxy.corrupted, duplicates_found=duplicates(found)
    )
    for result in (planned, applied):
        assert result.code == 1, result.text  # docs/ci.md: an object could not be read
        assert f"page /about (id {about}): the page tree lists it but it cannot be read" in result.out, result.text
        assert reason in result.out
        assert "page /about/history: refused" in result.out, result.out
        assert "page /: refused" in result.out, result.out
        assert "Traceback" not in result.text
    assert "3 held back: cannot be read" in applied.out, applied.out
    # the rest was applied; nothing below or linking to /about was; nothing was created twice
    assert "or phone" in contact
    assert about_page is not None
    assert about_page["id"] == about
    assert about_page["name"] == "About us"
    assert "/about/history" not in after.pages
    assert sorted(after.pages) == sorted(seed.pages)
    assert duplicates(found) == 0, found
    state = site.state()
    assert state.pages["/about"].id == about
    assert "/about/history" not in state.pages

    # the page reads again: the next run applies what was held, and then there is nothing left to do
    again = run_cli(capsys, "apply", "--yes", str(site.root))
    assert again.code == 0, again.text
    assert run_cli(capsys, "plan", "--detailed-exitcode", str(site.root)).code == 0
    state = site.state()
    assert state.pages["/about"].id == about
    assert "/about/history" in state.pages


def test_an_unreadable_children_list_holds_the_pages_below_it(
    site: ReliabilitySite, capsys: pytest.CaptureFixture[str]
) -> None:
    assert not asyncio.run(site.apply()).failed, site.last_output
    about = site.state().pages["/about"].id
    site.write("pages/about/history.yaml", HISTORY)
    site.edit("pages/contact.yaml", "or call", "or phone")
    _reason, body, _type = _page_answer(403)
    proxy = CorruptingProxy(Corruption("children 403", "GET", rf"/pages/{about}/children$", status=403, body=body))
    with through(proxy):
        result = run_cli(capsys, "apply", "--yes", str(site.root))
    assert result.code == 1, result.text
    assert f"the children of /about (id {about}) cannot be read" in result.out, result.out
    raw = RawSite(site.sandbox)
    try:
        assert raw.page_by_path("/about/history") is None
        assert "or phone" in " ".join(str(v) for _t, v in raw.blocks("/contact", "Main"))
    finally:
        raw.close()
    assert "/about/team" in site.state().pages
    assert run_cli(capsys, "apply", "--yes", str(site.root)).code == 0
    assert run_cli(capsys, "plan", "--detailed-exitcode", str(site.root)).code == 0


def test_an_unreadable_managed_file_is_held_and_never_uploaded_again(
    site: ReliabilitySite, capsys: pytest.CaptureFixture[str]
) -> None:
    assert not asyncio.run(site.apply()).failed, site.last_output
    prices = "documents/price-list.txt"
    file_id = str(site.state().files[prices].id)
    site.edit(f"files/{prices}.yaml", "Price list 2026", "Price list 2027")
    site.edit("pages/contact.yaml", "or call", "or phone")
    raw = RawSite(site.sandbox)
    try:
        before = take_inventory(raw, block_pages=set())
        _reason, body, _type = _page_answer(403)
        proxy = CorruptingProxy(Corruption("file read 403", "GET", rf"/files/{file_id}$", status=403, body=body))
        targets = ["--target", f"file:{prices}", "--target", "page:/contact"]
        with through(proxy):
            result = run_cli(capsys, "apply", "--yes", *targets, str(site.root))
        after = take_inventory(raw, block_pages=set())
        contact = " ".join(str(v) for _t, v in raw.blocks("/contact", "Main"))
    finally:
        raw.close()
    assert proxy.corrupted >= 1
    assert result.code == 1, result.text
    assert f"file {prices} ({file_id}): it cannot be read" in result.out, result.out
    assert after.file_names == before.file_names  # not uploaded again
    assert "or phone" in contact
    assert str(site.state().files[prices].id) == file_id
    assert run_cli(capsys, "apply", "--yes", *targets, str(site.root)).code == 0
    assert run_cli(capsys, "plan", "--detailed-exitcode", str(site.root)).code == 0
