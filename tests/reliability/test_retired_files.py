"""A replaced file's old id survives a run that fails or is killed (issue 29 item 2): it is in the state before the
new bytes are uploaded, the plan says the old file is still there, and the next apply deletes it. Before, the id
lived only in memory: three killed runs left 54 stale files public, outside the state, with a clean plan.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable

import pytest

from cmssync.emulator.embedded import Sandbox
from cmssync.sync.kinds import page as page_kind
from tests.reliability.inventory import PRICE_LIST, stale_files, take_inventory
from tests.reliability.proxy import Killed
from tests.reliability.sites import ReliabilitySite
from tests.support.rawsite import RawSite
from tests.support.reliability_report import ReliabilityReport


@pytest.mark.parametrize("how", ["page-fails", "killed"])
async def test_a_replaced_files_old_id_survives_the_run_and_the_next_apply_deletes_it(
    how: str,
    example_site: ReliabilitySite,
    sandbox: Sandbox,
    raw_factory: Callable[[], RawSite],
    monkeypatch: pytest.MonkeyPatch,
    reliability_report: ReliabilityReport,
) -> None:
    site = example_site
    assert not (await site.apply()).failed, site.last_output
    old_id = str(site.state().files["documents/price-list.txt"].id)
    (site.root / PRICE_LIST).write_text("New prices: everything is cheaper.\n", encoding="utf-8")
    site.edit("pages/services.yaml", "see the <a", "see the new <a")  # a page that links the file is updated too

    if how == "page-fails":
        sandbox.set_faults(["500:1:method=PUT,POST:path=/ccm/api/1.0/pages*"], seed=1)
        report = await site.apply()
        sandbox.clear_faults()
        assert report.failed
        reliability_report.add(faults_injected=1)
    else:

        async def kill(*args: object, **kwargs: object) -> str:
            raise Killed

        monkeypatch.setattr(page_kind, "KIND", dataclasses.replace(page_kind.KIND, apply=kill))
        with pytest.raises(Killed):
            await site.apply()
        monkeypatch.undo()
        reliability_report.add(kills=1)
    raw = raw_factory()
    assert old_id in site.state().retired_files, "the old id is not in the state after the run"
    assert any(old_id.lower() == file_id for file_id in take_inventory(raw, block_pages=set()).files)
    plan = await site.plan()
    assert any("replaced file(s) left on the site" in warning for warning in plan.warnings), plan.warnings

    report = await site.apply()

    reliability_report.add(cases_tried=1)
    assert not report.failed, site.last_output
    assert site.state().retired_files == {}
    assert stale_files(raw, site.state()) == []
    assert (await site.plan()).is_empty
