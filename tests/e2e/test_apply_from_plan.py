"""Apply executes the plan: what it writes and records comes from the plan, never from the content (issue 24)."""

from __future__ import annotations

import shutil
from pathlib import Path

from cmssync.plan.actions import Plan
from cmssync.sync.applying import ApplyRequest, apply_site
from cmssync.sync.planning import write_plan_file
from tests.support.rawsite import RawSite
from tests.support.sites import Site

NEWS = """name: News
areas:
  Main:
    - type: page_title
      value: {useCustomTitle: true, titleText: Latest}
    - type: content
      value:
        content: '<p>See <a href="${page-link:/about}">us</a> and <img src="${file:images/logo.png}"></p>'
"""


async def test_a_saved_plan_applies_after_the_content_is_gone(example: Site, raw: RawSite, tmp_path: Path) -> None:
    assert not (await example.apply()).failed, example.last_output
    example.edit("pages/index.yaml", "We design, build and host", "We design and build")
    example.write("pages/news.yaml", NEWS)
    plan_file = tmp_path / "plan.json"
    write_plan_file(await example.plan(), plan_file)
    kept = tmp_path / "pages-kept"
    workspace = example.workspace()

    def content_gone(plan: Plan) -> bool:
        """After the plan file was checked, before the first write: the page files go, on disk and in memory."""
        assert {a.key for a in plan.actions} == {"/", "/news"}
        shutil.move(example.root / "pages", kept)
        workspace.content.pages.clear()  # type: ignore[attr-defined]
        return True

    report = await apply_site(workspace, ApplyRequest(plan_file=plan_file), confirm=content_gone)
    assert not report.failed, [o.line() for o in report.outcomes]
    assert "We design and build" in raw.blocks("/", "Main")[1][1]["content"]
    news = raw.blocks("/news", "Main")
    assert [kind for kind, _ in news] == ["page_title", "content"]
    assert news[0][1]["titleText"] == "Latest"
    assert '<a href="{ccm:export:page:/about}">' in news[1][1]["content"]  # written resolved; the API reads it back
    assert "${" not in news[1][1]["content"]  # as the export of the stored link
    shutil.move(kept, example.root / "pages")
    after = await example.plan()
    assert after.actions == (), [(a.key, a.op) for a in after.actions]
    assert not any(a.drift for a in after.actions)
