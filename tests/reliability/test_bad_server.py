"""A server that answers nonsense — malformed JSON, HTML, truncated bodies, wrong types — gives a clear error, no
traceback, and no partial state (issue 9).

Nonsense comes from a corrupting proxy (``proxy.py``) in front of the sandbox, installed as the transport of
cmssync's client. For nonsense on a read, the state must be byte for byte what it was; for nonsense in answer to a
write that did happen, the next apply must finish the work without duplicating anything.
"""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import pytest

from cmssync.emulator.embedded import Sandbox
from cmssync.state.records import State
from cmssync.state.store import StateStore
from tests.reliability.cli import CliResult, run_cli
from tests.reliability.inventory import duplicates, problems, take_inventory
from tests.reliability.proxy import CorruptingProxy, Corruption, through
from tests.reliability.sites import ReliabilitySite, cli_environment
from tests.support.rawsite import RawSite
from tests.support.reliability_report import ReliabilityReport
from tests.support.sites import copy_example

HTML = b"<!DOCTYPE html><html><head><title>Down for maintenance</title></head><body>Back soon</body></html>"
PAGE = r"/pages/\d+$"

ON_READS = [
    Corruption("token answered with HTML", "POST", "/oauth/2.0/token$", body=HTML, content_type="text/html"),
    Corruption("token malformed JSON", "POST", "/oauth/2.0/token$", body=b'{"access_token": "abc", "expires_in": '),
    Corruption("token wrong types", "POST", "/oauth/2.0/token$", body=b'{"access_token": 12345, "expires_in": "x"}'),
    Corruption("site malformed JSON", "GET", "/sites/default$", body=b'{"data": {"id": 1,'),
    Corruption("site answered with HTML", "GET", "/sites/default$", body=HTML, content_type="text/html"),
    Corruption("page wrong types", "GET", PAGE, body=b'{"data": {"id": "one", "areas": 5, "version": "x"}}'),
    Corruption("page is null", "GET", PAGE, body=b"null"),
    Corruption("page binary garbage", "GET", PAGE, body=b"\x00\xff\xfe\x9c garbage"),
    Corruption("children not a list", "GET", r"/pages/\d+/children$", body=b'{"data": "nope"}'),
    Corruption("files truncated body", "GET", "/files$", truncated=True),
    Corruption("files truncated JSON", "GET", "/files$", body=b'{"data": [{"id": "8f'),
    Corruption("users wrong types", "GET", "/users$", body=b'{"data": [{"id": null, "username": 42}]}'),
    Corruption("groups empty body", "GET", "/groups$", body=b""),
    Corruption("groups 200 with an error page", "GET", "/groups$", body=HTML, content_type="text/html"),
]
ON_WRITES = [
    Corruption("page create wrong types", "POST", "/pages$", body=b'{"data": {"id": "x"}}', forward=True),
    Corruption(
        "block add answered with HTML",
        "POST",
        r"/pages/\d+/[^/]+$",
        body=HTML,
        content_type="text/html",
        forward=True,
        times=2,
    ),
    Corruption("approval wrong types", "PUT", r"/page_versions/\d+/\d+$", body=b'{"data": 5}', forward=True),
    Corruption("user create malformed", "POST", "/users$", body=b'{"data": {', forward=True),
    Corruption("group create without id", "POST", "/groups$", body=b'{"data": {"name": "x"}}', forward=True),
]
ON_WRITES_PARAMS = [
    *(pytest.param(c, id=c.name) for c in ON_WRITES),
    # Once a bug (fixed): the next run uploaded again when the folder held another file of the same name.
    pytest.param(
        Corruption("upload wrong types", "POST", "/files$", body=b'{"data": []}', forward=True),
        id="upload wrong types",
    ),
]
RETRIED = [
    Corruption("page update truncated", "PUT", PAGE, truncated=True, forward=True, times=1),
    Corruption("approval truncated", "PUT", r"/page_versions/\d+/\d+$", truncated=True, forward=True, times=1),
    Corruption("block delete truncated", "DELETE", r"/pages/\d+/[^/]+/\d+$", truncated=True, forward=True, times=1),
    Corruption("page read truncated", "GET", PAGE, truncated=True, times=2),
]


@pytest.fixture
def site(tmp_path: Path, sandbox: Sandbox, monkeypatch: pytest.MonkeyPatch) -> ReliabilitySite:
    """content-example on the sandbox; the CLI finds the same settings in the environment."""
    root = tmp_path / "site"
    copy_example(root)
    return cli_environment(ReliabilitySite(root, sandbox), monkeypatch)


def edit_content(root: Path) -> None:
    """Work for the next apply: a renamed page and a new page (found through the page tree)."""
    about = root / "pages" / "about.yaml"
    about.write_text(about.read_text(encoding="utf-8").replace("name: About us", "name: About Example"))
    (root / "pages" / "services" / "audits.yaml").write_text(
        "name: Audits\nareas:\n  Main:\n    - type: content\n      value: {content: <p>Audits.</p>}\n"
    )


PER_OBJECT = {"page wrong types", "page is null", "page binary garbage", "children not a list"}
"""Corruptions of one object's read (a page, a children list): they fail that object, not the run."""


def assert_clear_failure(result: CliResult) -> None:
    assert result.code == 1, result.text
    assert "Traceback" not in result.text
    # an error, a failed action, or objects held because they cannot be read (issue 15 item 3: they fail alone)
    failures = [line for line in result.text.splitlines() if line.startswith(("error:", "failed ", "! "))]
    assert failures, result.text
    for line in failures:
        assert len(line) < 600, line


def writes(stats: dict[str, Any]) -> int:
    return sum(r["count"] for r in stats["requests"] if r["method"] != "GET" and r["route"] != "/oauth/2.0/token")


@pytest.mark.parametrize("corruption", ON_READS, ids=lambda c: c.name)
def test_nonsense_on_a_read_fails_clearly_and_leaves_the_state_alone(
    corruption: Corruption,
    site: ReliabilitySite,
    capsys: pytest.CaptureFixture[str],
    reliability_report: ReliabilityReport,
) -> None:
    assert not asyncio.run(site.apply()).failed, site.last_output
    edit_content(site.root)
    state = site.state_path.read_bytes()
    proxy = CorruptingProxy(corruption)
    site.sandbox.clear_stats()

    with through(proxy):
        result = run_cli(capsys, "apply", "--yes", str(site.root))

    reliability_report.add(cases_tried=1, faults_injected=proxy.corrupted)
    assert proxy.corrupted > 0, "the corruption never fired"
    assert_clear_failure(result)
    if corruption.name in PER_OBJECT:
        # One object's read is nonsense: that object (and what needs it) is held, the rest is applied (issue 15
        # item 3); the state still knows every page, by the same id.
        assert ": refused (cannot be read" in result.text, result.text
        known = StateStore(site.state_path).load()
        assert {p: r.id for p, r in State.model_validate_json(state).pages.items()}.items() <= {
            p: r.id for p, r in known.pages.items()
        }.items()
        return
    assert site.state_path.read_bytes() == state
    assert writes(site.sandbox.stats()) == 0


@pytest.mark.parametrize("corruption", ON_WRITES_PARAMS)
def test_nonsense_after_a_write_fails_clearly_and_the_next_apply_finishes(
    corruption: Corruption,
    site: ReliabilitySite,
    raw: RawSite,
    capsys: pytest.CaptureFixture[str],
    reliability_report: ReliabilityReport,
) -> None:
    before = take_inventory(raw, block_pages=set())
    proxy = CorruptingProxy(corruption)

    with through(proxy):
        result = run_cli(capsys, "apply", "--yes", str(site.root))

    assert proxy.corrupted > 0, "the corruption never fired"
    assert_clear_failure(result)
    site.state()  # still a valid state
    report = asyncio.run(site.apply())
    assert not report.failed, site.last_output
    assert asyncio.run(site.plan()).actions == ()
    content = site.content()
    found = problems(before, take_inventory(raw, block_pages=set(content.pages)), content, site.state())
    reliability_report.add(cases_tried=1, faults_injected=proxy.corrupted, duplicates_found=duplicates(found))
    assert found == []


@pytest.mark.parametrize("corruption", RETRIED, ids=lambda c: c.name)
def test_a_truncated_answer_to_a_repeatable_request_is_retried(
    corruption: Corruption,
    site: ReliabilitySite,
    raw: RawSite,
    capsys: pytest.CaptureFixture[str],
    reliability_report: ReliabilityReport,
) -> None:
    """Reads, updates, approvals and deletes may be sent again: the run succeeds, nothing is duplicated."""
    before = take_inventory(raw, block_pages=set())
    proxy = CorruptingProxy(corruption)

    with through(proxy):
        result = run_cli(capsys, "apply", "--yes", str(site.root))

    assert proxy.corrupted > 0, "the corruption never fired"
    assert result.code == 0, result.text
    assert asyncio.run(site.plan()).actions == ()
    content = site.content()
    found = problems(before, take_inventory(raw, block_pages=set(content.pages)), content, site.state())
    reliability_report.add(cases_tried=1, faults_injected=proxy.corrupted, duplicates_found=duplicates(found))
    assert found == []


def test_a_page_update_whose_first_answer_was_lost_is_finished_by_the_next_apply(
    site: ReliabilitySite,
    raw: RawSite,
    capsys: pytest.CaptureFixture[str],
) -> None:
    assert not asyncio.run(site.apply()).failed, site.last_output
    about = site.root / "pages" / "about.yaml"
    about.write_text(about.read_text(encoding="utf-8").replace("founded in 2014", "founded in 2015"))
    proxy = CorruptingProxy(
        Corruption("block update answered with HTML", "PUT", r"/pages/\d+/Main/\d+$", body=HTML, forward=True)
    )
    with through(proxy):
        assert_clear_failure(run_cli(capsys, "apply", "--yes", str(site.root)))

    assert not asyncio.run(site.apply()).failed, site.last_output

    live = [value.get("content", "") for kind, value in raw.blocks("/about", "Main") if kind == "content"]
    assert any("founded in 2015" in text for text in live), live
