"""A kill in the middle of a page update leaves cmssync's own half-written draft (issue 29 item 3). The draft and the
page the writes went toward are recorded before the first write, so the next run (same content) finishes that draft:
no "changed in the content and on the site" conflict, no --force, the edits live, the plan empty after it.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from cmssync.emulator.embedded import Sandbox
from cmssync.sync.page_writer import PageWriter
from tests.reliability.proxy import Killed
from tests.reliability.sites import ReliabilitySite, write_generated_content
from tests.support.rawsite import RawSite
from tests.support.reliability_report import ReliabilityReport

PAGE = "/rel-section-1"


@pytest.mark.parametrize("writes_before_the_kill", [1, 2, 3])
async def test_a_run_killed_mid_page_update_is_finished_not_refused(
    writes_before_the_kill: int,
    tmp_path: Path,
    sandbox: Sandbox,
    raw_factory: Callable[[], RawSite],
    monkeypatch: pytest.MonkeyPatch,
    reliability_report: ReliabilityReport,
) -> None:
    root = tmp_path / "site"
    write_generated_content(root, sections=1, pages_per_section=0, blocks=4)
    site = ReliabilitySite(root, sandbox, settings={"concurrency": 1})
    assert not (await site.apply()).failed, site.last_output
    page_file = root / "pages" / "rel-section-1.yaml"
    text = page_file.read_text(encoding="utf-8").replace("<p>Block", "<p>Edited block")
    page_file.write_text(text.replace("description: Page", "description: Edited page"), encoding="utf-8")

    original = PageWriter.block
    calls = 0

    async def block_then_die(self: PageWriter, *args: Any, **kwargs: Any) -> None:
        nonlocal calls
        calls += 1
        if calls > writes_before_the_kill:
            raise Killed
        await original(self, *args, **kwargs)

    monkeypatch.setattr(PageWriter, "block", block_then_die)
    with pytest.raises(Killed):
        await site.apply()
    monkeypatch.undo()
    assert site.state().pages[PAGE].draft_version_id is not None

    plan = await site.plan()
    reliability_report.add(cases_tried=1, kills=1)
    assert [held.message for held in plan.held] == []
    assert [c.field for c in plan.conflicts] == []
    report = await site.apply()
    assert not report.failed, site.last_output
    raw = raw_factory()
    assert [value["content"] for _, value in raw.blocks(PAGE, "Main")] == [
        f"<p>Edited block {n} of page 1000.</p>" for n in range(1, 5)
    ]
    assert (await site.plan()).is_empty
    assert site.state().pages[PAGE].draft_version_id is None
