"""A create that times out but commits late is never sent again in the same run (issue 15, item 4).

A proxy answers the page create with a timeout and hands it to the sandbox 1.5 s later: the client gave up, the
server commits anyway. Before, one lookup found nothing and the create was sent again, so the late commit left a
live duplicate (``/news-1``) while apply said nothing of it. Now the lookup is repeated (``late_commit_polls``):
the page is found when it appears, or, if it does not appear in time, the action fails saying it is left for the
next run — which finds it. Either way nothing is duplicated.
"""

from __future__ import annotations

import asyncio
import functools
from pathlib import Path

import pytest

import cmssync.api.transport
from cmssync.api.retry import RetryPolicy
from cmssync.emulator.embedded import Sandbox
from tests.reliability.inventory import duplicates, problems, take_inventory
from tests.reliability.proxy import CorruptingProxy, Corruption, through
from tests.reliability.sites import ReliabilitySite
from tests.support.rawsite import RawSite
from tests.support.reliability_report import ReliabilityReport

NEWS = "name: News\nareas:\n  Main:\n    - type: content\n      value: {content: <p>News.</p>}\n"
LATE = Corruption("page create committed late", "POST", r"/pages$", late=1.5, times=1)


@pytest.fixture
def site(tmp_path: Path, sandbox: Sandbox) -> ReliabilitySite:
    root = tmp_path / "site"
    (root / "pages").mkdir(parents=True)
    (root / "pages" / "news.yaml").write_text(NEWS, encoding="utf-8")
    return ReliabilitySite(root, sandbox, settings={"concurrency": 1})


def polls(monkeypatch: pytest.MonkeyPatch, waits: tuple[float, ...]) -> None:
    fast = functools.partial(
        RetryPolicy, wait_initial=0.0, wait_max=0.0, wait_jitter=0.0, retry_after_max=0.0, late_commit_polls=waits
    )
    monkeypatch.setattr(cmssync.api.transport, "RetryPolicy", fast)


def outcome_of(site: ReliabilitySite) -> tuple[bool, str]:
    report = asyncio.run(site.apply())
    return report.failed, site.last_output


def test_lookups_that_outlast_the_late_commit_find_the_page(
    site: ReliabilitySite, sandbox: Sandbox, monkeypatch: pytest.MonkeyPatch, reliability_report: ReliabilityReport
) -> None:
    polls(monkeypatch, (0.5, 1.0, 1.0))
    raw = RawSite(sandbox)
    before = take_inventory(raw, block_pages=set())
    proxy = CorruptingProxy(LATE)
    with through(proxy):
        failed, output = outcome_of(site)
    proxy.wait_for_late_requests()
    found = problems(before, take_inventory(raw, block_pages={"/news"}), site.content(), site.state())
    raw.close()
    reliability_report.add(cases_tried=1, applies=1, faults_injected=1, duplicates_found=duplicates(found))
    assert not failed, output
    assert found == []


def test_a_late_commit_not_seen_in_time_is_left_for_the_next_run(
    site: ReliabilitySite, sandbox: Sandbox, monkeypatch: pytest.MonkeyPatch, reliability_report: ReliabilityReport
) -> None:
    polls(monkeypatch, (0.0, 0.0))
    raw = RawSite(sandbox)
    before = take_inventory(raw, block_pages=set())
    proxy = CorruptingProxy(LATE)
    with through(proxy):
        failed, output = outcome_of(site)
    proxy.wait_for_late_requests()  # the create commits after the run gave up on it
    second_failed, second_output = outcome_of(site)
    found = problems(before, take_inventory(raw, block_pages={"/news"}), site.content(), site.state())
    raw.close()
    reliability_report.add(cases_tried=1, applies=2, faults_injected=1, duplicates_found=duplicates(found))
    assert failed, output
    assert "it is not sent again in this run because the site may still commit it" in output
    assert "the next run finds it or creates it" in output
    assert not second_failed, second_output
    assert found == [], found
