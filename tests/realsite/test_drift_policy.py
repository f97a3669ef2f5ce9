"""Issue 34 on a real Concrete CMS 9.3.1 site (opt-in: see conftest.py for how to run it): the drift policy.

Each test pulls the fresh site, lets an "editor" change a content block of a managed page through the REST API and
publish it (what the dashboard does), and runs cmssync through its CLI. Under the default policy (``propose``) the
editor's block survives ``apply --yes`` while the content's own change to the page applies, and the plan names it
as a site change to bring back; once the content takes the site's words (``pull --pages``, what merging a proposal
gives) ``plan --detailed-exitcode`` exits 0. ``pull --commit`` brings the editor's change to git as one commit on
a branch that is not checked out, and once that branch is merged the plan is empty. Under ``drift: revert`` the
content wins, as before issue 34.
"""

from __future__ import annotations

import json
import subprocess
from pathlib import Path
from urllib.parse import quote

from tests.realsite.harness import Block, RawApi, Report, SiteAccess, edit_page_file, page_files, pulled, run_cmssync

EDITOR_WORDS = "<p>Written by an editor on the site, and published.</p>"


def a_content_block(directory: Path, api: RawApi) -> tuple[str, Path, int, Block]:
    """A pulled page other than the home page with a content block in a top-level area that its file manages."""
    tree = api.tree()
    for path, file in page_files(directory):
        if path == "/" or path not in tree:
            continue
        text = file.read_text(encoding="utf-8")
        for block in api.blocks(tree[path]):
            if block.type == "content" and " : " not in block.area and f"{block.area}:" in text:
                return path, file, tree[path], block
    raise AssertionError("no pulled page has a content block in a managed top-level area")


def edit_and_publish(api: RawApi, page_id: int, block: Block) -> None:
    """An editor's change to the block, published (what the page editor and "Publish" do)."""
    route = f"/pages/{page_id}/{quote(block.area, safe='')}/{block.id}"
    api.call("PUT", route, json={"value": {"content": EDITOR_WORDS}})
    api.approve(page_id)


def live_content(api: RawApi, page_id: int, area: str, position: int) -> str:
    found = [b for b in api.blocks(page_id) if b.area == area and b.position == position]
    assert found, (page_id, area, position)
    return str(found[0].value.get("content", ""))


def test_an_editors_change_survives_apply_and_comes_back_through_the_content(
    real_site: SiteAccess, api: RawApi, content_dir: Path, report: Report
) -> None:
    pulled(real_site, content_dir, report, "drift: propose")
    path, file, page_id, block = a_content_block(content_dir, api)
    edit_and_publish(api, page_id, block)
    edit_page_file(file, description="Written in the content.")  # the content's own change to the page

    plan = run_cmssync(real_site, content_dir, "plan", "--format", "json")
    report.add("drift: propose", plan)
    assert plan.code == 0, plan.output
    document, _ = json.JSONDecoder().raw_decode(plan.output[plan.output.index("{") :])  # stderr follows
    changes = {entry["id"]: entry for entry in document["site_changes"]}
    assert f"page:{path}" in changes, document["site_changes"]
    entry = changes[f"page:{path}"]
    assert (entry["action"], entry["reason"]) == ("propose", "changed_on_site")
    assert f"area:{block.area}" in entry["fields"]
    assert any(EDITOR_WORDS in json.dumps(b["after"]) for b in entry["blocks"]), entry["blocks"]
    updates = {action["id"]: action for action in document["actions"]}
    assert [c["field"] for c in updates[f"page:{path}"]["changes"]] == ["description"]
    assert updates[f"page:{path}"]["blocks"] == []

    apply = run_cmssync(real_site, content_dir, "apply", "--yes")
    report.add("drift: propose", apply)
    assert apply.code == 0, apply.output
    assert live_content(api, page_id, block.area, block.position) == EDITOR_WORDS  # the editor's work survives
    assert api.call("GET", f"/pages/{page_id}")["description"] == "Written in the content."

    again = run_cmssync(real_site, content_dir, "plan", "--detailed-exitcode")
    report.add("drift: propose", again)
    assert again.code == 2, again.output  # a site change to bring back is a change
    assert f"= site change (propose): page {path}: area:{block.area} changed on the site" in again.output

    # The content takes the site's words, as a merged proposal gives: pull --pages takes the editor's change.
    taken = run_cmssync(real_site, content_dir, "pull", "--pages", path)
    report.add("drift: propose", taken)
    assert taken.code == 0, taken.output
    assert EDITOR_WORDS in file.read_text(encoding="utf-8")
    empty = run_cmssync(real_site, content_dir, "plan", "--detailed-exitcode")
    report.add("drift: propose", empty)
    assert empty.code == 0, empty.output


def test_drift_revert_writes_the_content_over_an_editors_change(
    real_site: SiteAccess, api: RawApi, content_dir: Path, report: Report
) -> None:
    pulled(real_site, content_dir, report, "drift: revert")
    settings = content_dir / "cmssync.yaml"
    settings.write_text(settings.read_text(encoding="utf-8") + "drift: revert\n", encoding="utf-8")
    _, _, page_id, block = a_content_block(content_dir, api)
    before = live_content(api, page_id, block.area, block.position)
    edit_and_publish(api, page_id, block)

    apply = run_cmssync(real_site, content_dir, "apply", "--yes")
    report.add("drift: revert", apply)
    assert apply.code == 0, apply.output
    assert "changed outside cmssync" in apply.output
    assert live_content(api, page_id, block.area, block.position) == before  # the content won
    after = run_cmssync(real_site, content_dir, "plan", "--detailed-exitcode")
    report.add("drift: revert", after)
    assert after.code == 0, after.output


def git(directory: Path, *args: str) -> str:
    done = subprocess.run(["git", "-C", str(directory), *args], capture_output=True, text=True, check=True)
    return done.stdout


def checkout_facts(directory: Path) -> tuple[str, str, str, str, str]:
    """What ``pull --commit`` must leave alone: the checked-out branch and commit, the status, the index, the files."""
    return (
        git(directory, "symbolic-ref", "HEAD"),
        git(directory, "rev-parse", "HEAD"),
        git(directory, "status", "--porcelain", "--untracked-files=all"),
        git(directory, "diff", "--cached"),
        git(directory, "diff"),
    )


def test_an_editors_change_comes_to_git_as_one_commit_and_the_merged_branch_plans_empty(
    real_site: SiteAccess, api: RawApi, content_dir: Path, report: Report
) -> None:
    pulled(real_site, content_dir, report, "pull --commit")
    git(content_dir, "init", "-q", "-b", "main")
    git(content_dir, "config", "user.name", "Site Team")
    git(content_dir, "config", "user.email", "site@example.com")
    git(content_dir, "add", "-A")
    git(content_dir, "commit", "-q", "-m", "the site as pulled")
    path, file, page_id, block = a_content_block(content_dir, api)
    edit_and_publish(api, page_id, block)
    before = checkout_facts(content_dir)
    text_before = file.read_text(encoding="utf-8")

    proposed = run_cmssync(real_site, content_dir, "pull", "--commit", "--branch", "site-edits")
    report.add("pull --commit", proposed)
    assert proposed.code == 0, proposed.output
    assert checkout_facts(content_dir) == before  # the checked-out branch, its files and the index untouched
    assert file.read_text(encoding="utf-8") == text_before
    assert git(content_dir, "rev-list", "--count", "main..site-edits").strip() == "1"
    changed = git(content_dir, "diff", "--name-only", "main", "site-edits").split()
    assert changed == [file.relative_to(content_dir).as_posix()], changed
    assert EDITOR_WORDS in git(content_dir, "show", f"site-edits:{file.relative_to(content_dir).as_posix()}")
    message = git(content_dir, "log", "-1", "--format=%B", "site-edits")
    assert f"page {path}" in message or f"page:{path}" in message, message

    git(content_dir, "merge", "-q", "site-edits")  # the proposal, reviewed and merged
    empty = run_cmssync(real_site, content_dir, "plan", "--detailed-exitcode")
    report.add("pull --commit", empty)
    assert empty.code == 0, empty.output


def test_an_editors_change_after_a_refresh_is_kept(
    real_site: SiteAccess, api: RawApi, content_dir: Path, report: Report
) -> None:
    """``cmssync refresh`` records each page's base from its live version, as pull does: an editor's change
    published after it is a site change under ``drift: propose`` and survives ``apply --yes`` (before, a refreshed
    record held the live version only and the change was planned as an update and written over)."""
    pulled(real_site, content_dir, report, "refresh")
    refreshed = run_cmssync(real_site, content_dir, "refresh")
    report.add("refresh", refreshed)
    assert refreshed.code == 0, refreshed.output
    path, _, page_id, block = a_content_block(content_dir, api)
    edit_and_publish(api, page_id, block)

    plan = run_cmssync(real_site, content_dir, "plan", "--format", "json")
    report.add("refresh", plan)
    assert plan.code == 0, plan.output
    document, _ = json.JSONDecoder().raw_decode(plan.output[plan.output.index("{") :])
    assert [(e["id"], e["action"]) for e in document["site_changes"]] == [(f"page:{path}", "propose")]
    assert f"page:{path}" not in {action["id"] for action in document["actions"]}

    apply = run_cmssync(real_site, content_dir, "apply", "--yes")
    report.add("refresh", apply)
    assert apply.code == 0, apply.output
    assert live_content(api, page_id, block.area, block.position) == EDITOR_WORDS
