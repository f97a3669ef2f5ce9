"""Issue 26 on a real Concrete CMS 9.3.1 site (opt-in: see conftest.py for how to run it).

* A pull right after a pull (nothing changed) writes nothing and exits 0, and a pull after an apply of an edit
  keeps the edited file exactly as written.
* A page created with a type that has default blocks (a blog entry with the ``right_sidebar`` template gets its
  type's breadcrumbs and page title in ``Page Header``, a share box, next/previous and topics in ``Sidebar``) is
  aligned with them: one title, not two, and the next plan is empty. The sandbox cannot be trusted to know a real
  type's defaults.
"""

from __future__ import annotations

import hashlib
from pathlib import Path

from tests.realsite.harness import RawApi, Report, SiteAccess, run_cmssync

POST = """name: A cmssync entry
type: blog_entry
template: right_sidebar
areas:
  Page Header:
    - type: page_title
  Main:
    - type: content
      value:
        content: <p>A post the content manages.</p>
"""


def snapshot(directory: Path) -> dict[str, str]:
    return {
        str(path.relative_to(directory)): hashlib.sha256(path.read_bytes()).hexdigest()
        for path in sorted(directory.rglob("*"))
        if path.is_file()
    }


def test_a_second_pull_writes_nothing(real_site: SiteAccess, content_dir: Path, report: Report) -> None:
    first = run_cmssync(real_site, content_dir, "pull")
    report.add("pull twice", first)
    assert first.code == 0, first.output
    before = snapshot(content_dir)
    second = run_cmssync(real_site, content_dir, "pull")
    report.add("pull twice", second)
    assert second.code == 0, second.output
    assert snapshot(content_dir) == before, second.output
    assert "local edits kept" not in second.output


def test_a_blog_entry_created_with_its_types_default_blocks_has_one_title(
    real_site: SiteAccess, api: RawApi, content_dir: Path, report: Report
) -> None:
    pull = run_cmssync(real_site, content_dir, "pull")
    report.add("type defaults", pull)
    assert pull.code == 0, pull.output
    (content_dir / "pages/about/blog/cmssync-entry.yaml").write_text(POST, encoding="utf-8")
    apply = run_cmssync(real_site, content_dir, "apply", "--yes")
    report.add("type defaults", apply)
    assert apply.code == 0, apply.output
    page_id = api.tree()["/about/blog/cmssync-entry"]
    blocks = api.blocks(page_id)
    header = [block.type for block in blocks if block.area == "Page Header"]
    assert header == ["page_title"], blocks
    assert [block.type for block in blocks if block.area == "Main"] == ["content"], blocks
    assert [block.type for block in blocks if block.area == "Sidebar"], "areas the content does not list keep them"
    plan = run_cmssync(real_site, content_dir, "plan", "--detailed-exitcode")
    report.add("type defaults", plan)
    assert plan.code == 0, plan.output
