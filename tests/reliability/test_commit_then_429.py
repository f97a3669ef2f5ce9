"""A server that commits a create and then answers 429 (a rate limiter placed after the application) gets no
duplicate (issue 29 item 12): cmssync looks the object up before it sends a create again. Before, a 429 was taken
for "not processed" and the create was resent blindly: every page, group and user answered so was made twice.
"""

from __future__ import annotations

from collections.abc import Callable

import pytest

from cmssync.emulator.embedded import Sandbox
from tests.reliability.inventory import duplicates, problems, take_inventory
from tests.reliability.sites import ReliabilitySite
from tests.support.rawsite import RawSite
from tests.support.reliability_report import ReliabilityReport


@pytest.mark.parametrize(
    "path", ["/ccm/api/1.0/pages$", "/ccm/api/1.0/groups$", "/ccm/api/1.0/users$", "/ccm/api/1.0/files$"]
)
async def test_a_create_answered_429_after_its_commit_is_not_duplicated(
    path: str,
    example_site: ReliabilitySite,
    sandbox: Sandbox,
    raw_factory: Callable[[], RawSite],
    reliability_report: ReliabilityReport,
) -> None:
    raw = raw_factory()
    before = take_inventory(raw, block_pages=set())
    sandbox.set_faults([f"commit-then-429:1:method=POST:path={path}:retry-after=0"], seed=3)
    report = await example_site.apply()
    sandbox.clear_faults()
    content = example_site.content()
    found = problems(before, take_inventory(raw, block_pages=set(content.pages)), content, example_site.state())

    reliability_report.add(cases_tried=1, faults_injected=1, duplicates_found=duplicates(found))
    assert found == [], found
    assert not report.failed, example_site.last_output
    assert (await example_site.plan()).is_empty
