"""Issue 16 (editor safety) on a real Concrete CMS 9.3.1 site (opt-in: see conftest.py for how to run it).

Each test pulls the fresh site, lets an "editor" change a page through the REST API (what the dashboard does),
edits the page file, and runs cmssync through its CLI: a conflict is shown and nothing is overwritten without
``--force``; someone else's draft is never approved; an ignored field is never reverted.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

from tests.realsite.harness import RawApi, Report, SiteAccess, edit_page_file, page_files, pulled, run_cmssync


def a_page(directory: Path, api: RawApi) -> tuple[str, Path, int]:
    """A pulled page other than the home page (the first in path order), its file and id."""
    tree = api.tree()
    for path, file in page_files(directory):
        if path != "/" and path in tree:
            return path, file, tree[path]
    raise AssertionError("the pulled site has no page besides the home page")


def live(api: RawApi, page_id: int) -> dict[str, Any]:
    return dict(api.call("GET", f"/pages/{page_id}"))


def versions(api: RawApi, page_id: int) -> list[dict[str, Any]]:
    return list(api.call("GET", f"/page_versions/{page_id}"))


def test_site_and_content_edits_of_one_page_are_a_conflict_and_nothing_is_overwritten(
    real_site: SiteAccess, api: RawApi, content_dir: Path, report: Report
) -> None:
    pulled(real_site, content_dir, report, "conflict")
    path, file, page_id = a_page(content_dir, api)
    api.call("PUT", f"/pages/{page_id}", json={"description": "Written by the editor."})
    api.approve(page_id)
    edit_page_file(file, description="Written in the content.")

    plan = run_cmssync(real_site, content_dir, "plan", "--detailed-exitcode")
    report.add("conflict", plan)
    assert plan.code == 2, plan.output
    # on a site with several locale trees the line names the page's tree: "! page /about (en_US): refused"
    assert re.search(rf"^! page {re.escape(path)}( \(\w+\))?: refused", plan.output, re.MULTILINE), plan.output
    assert "conflict description (fail)" in plan.output, plan.output
    assert "editor" in plan.output.split("conflict description (fail)")[1], plan.output  # the site's value

    apply = run_cmssync(real_site, content_dir, "apply", "--yes")
    report.add("conflict", apply)
    assert apply.code == 1, apply.output
    assert live(api, page_id)["description"] == "Written by the editor."

    forced = run_cmssync(real_site, content_dir, "apply", "--yes", "--force")
    report.add("conflict", forced)
    assert forced.code == 0, forced.output
    assert live(api, page_id)["description"] == "Written in the content."
    after = run_cmssync(real_site, content_dir, "plan", "--detailed-exitcode")
    assert after.code == 0, after.output


def test_a_foreign_draft_is_never_approved_by_default(
    real_site: SiteAccess, api: RawApi, content_dir: Path, report: Report
) -> None:
    pulled(real_site, content_dir, report, "foreign draft")
    _, file, page_id = a_page(content_dir, api)
    live_before = live(api, page_id)
    api.call("PUT", f"/pages/{page_id}", json={"name": "An editor's unfinished rename"})  # a draft, not approved
    draft = versions(api, page_id)[0]
    assert not draft["is_approved"]
    edit_page_file(file, description="Written in the content.")

    plan = run_cmssync(real_site, content_dir, "plan")
    report.add("foreign draft", plan)
    assert f"unapproved draft version {draft['id']}" in plan.output, plan.output
    apply = run_cmssync(real_site, content_dir, "apply", "--yes")
    report.add("foreign draft", apply)
    assert apply.code == 1, apply.output
    newest = versions(api, page_id)[0]
    assert newest["id"] == draft["id"]
    assert not newest["is_approved"]
    assert live(api, page_id)["name"] == live_before["name"]  # the live version is the one before the draft


def test_an_ignored_field_is_never_reverted(
    real_site: SiteAccess, api: RawApi, content_dir: Path, report: Report
) -> None:
    pulled(real_site, content_dir, report, "ignore")
    _, file, page_id = a_page(content_dir, api)
    edit_page_file(file, ignore={"fields": ["description"]})
    api.call("PUT", f"/pages/{page_id}", json={"description": "The editors own this."})
    api.approve(page_id)

    plan = run_cmssync(real_site, content_dir, "plan", "--detailed-exitcode")
    report.add("ignore", plan)
    assert plan.code == 0, plan.output
    apply = run_cmssync(real_site, content_dir, "apply", "--yes")
    report.add("ignore", apply)
    assert apply.code == 0, apply.output
    assert live(api, page_id)["description"] == "The editors own this."
