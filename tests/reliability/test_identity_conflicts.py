"""Users and pages are adopted only when provably the same object; otherwise the plan reports a conflict
(issue 15, item 1).

The rule, the same for every kind: a conflict is a plan warning starting ``conflict:`` and *no action* for that
object, so apply neither takes the other object over nor creates a second one; the site is left as it is.

* Users: an unmanaged site user of the content's username is adopted only when the email matches too. Before, the
  plan "updated" the stranger's email to the content's: it took someone else's account over.
* Pages: the state's page for a path must be the page at that path. Before, a page an editor made at the path of a
  page cmssync managed (after deleting it) was silently taken over.
* A new page that Concrete numbers ``path-N`` (a page at the path appeared after cmssync looked) is not recorded
  under ``path`` and is moved to the trash again; the failure says it is a conflict.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from cmssync.emulator.embedded import Sandbox
from cmssync.state.records import PageRecord
from cmssync.state.store import StateStore
from tests.reliability.cli import run_cli
from tests.reliability.inventory import take_inventory
from tests.reliability.proxy import CorruptingProxy, Corruption, through
from tests.reliability.sites import ReliabilitySite, write_settings
from tests.support.rawsite import RawSite
from tests.support.reliability_report import ReliabilityReport

NEWS = "name: News\nareas:\n  Main:\n    - type: content\n      value: {content: <p>News.</p>}\n"


def content_site(tmp_path: Path, sandbox: Sandbox, files: dict[str, str]) -> ReliabilitySite:
    root = tmp_path / "site"
    root.mkdir()
    write_settings(root)
    for relative, text in files.items():
        (root / relative).parent.mkdir(parents=True, exist_ok=True)
        (root / relative).write_text(text, encoding="utf-8")
    return ReliabilitySite(root, sandbox)


async def test_a_site_user_with_another_email_is_a_conflict_not_taken_over(
    sandbox: Sandbox, raw: RawSite, tmp_path: Path, reliability_report: ReliabilityReport
) -> None:
    """The seed's ``john`` (john@example.com) is someone else's account; the content's john is another person."""
    users = "- username: john\n  email: john.doe@elsewhere.example\n  language: de_DE\n"
    site = content_site(tmp_path, sandbox, {"users.yaml": users})
    john = next(u for u in raw.get("/users", limit=100) if u["username"] == "john")

    plan = await site.plan()
    report = await site.apply()

    after = next(u for u in raw.get("/users", limit=100) if u["username"] == "john")
    taken = int(after["email"] != john["email"])
    reliability_report.add(cases_tried=1, wrong_adoptions=taken)
    assert plan.actions == ()
    [warning] = [w for w in plan.warnings if w.startswith("conflict: user john:")]
    assert f"(id {john['id']}) with email john@example.com, not john.doe@elsewhere.example" in warning
    assert "adopted only when username and email both match" in warning
    assert not report.outcomes
    assert taken == 0
    assert "john" not in site.state().users


async def test_a_site_user_with_the_same_email_is_adopted(
    sandbox: Sandbox, raw: RawSite, tmp_path: Path, reliability_report: ReliabilityReport
) -> None:
    site = content_site(tmp_path, sandbox, {"users.yaml": "- username: john\n  email: John@Example.com\n"})
    john = next(u for u in raw.get("/users", limit=100) if u["username"] == "john")

    plan = await site.plan()

    reliability_report.add(cases_tried=1)
    assert not [w for w in plan.warnings if w.startswith("conflict:")]
    assert plan.actions == ()  # the same user, nothing differs
    site.write("users.yaml", "- username: john\n  email: john@example.com\n  language: fr_FR\n")
    [action] = (await site.plan()).actions
    assert (action.op, action.precondition.remote_id) == ("update", str(john["id"]))


async def test_a_page_made_outside_cmssync_at_a_managed_path_is_a_conflict(
    sandbox: Sandbox, raw: RawSite, tmp_path: Path, reliability_report: ReliabilityReport
) -> None:
    """The state says cmssync made /news as page 4242, which is gone for good (deleted, the trash emptied); the
    page at /news now is an editor's."""
    site = content_site(tmp_path, sandbox, {"pages/news.yaml": NEWS})
    async with site.workspace().client() as client:
        theirs = await client.create_page(parent_id=1, name="news")
    assert theirs.url_path == "/news"
    ours = 4242
    state = site.state()
    state.record_page("/news", PageRecord(id=ours))
    StateStore(site.state_path).save(state)

    plan = await site.plan()
    report = await site.apply()

    blocks = raw.blocks("/news", "Main")
    reliability_report.add(cases_tried=1, wrong_adoptions=int(bool(blocks)))
    assert plan.actions == ()
    [warning] = [w for w in plan.warnings if w.startswith("conflict: page /news:")]
    assert f"the state says cmssync manages page id {ours} at this path, but the site's /news is page {theirs.id}" in (
        warning
    )
    assert f"pin id: {theirs.id} in the page file" in warning
    assert not report.outcomes
    assert blocks == []  # the editor's page is untouched
    site.write("pages/news.yaml", f"id: {theirs.id}\n" + NEWS)  # the way out the warning names
    assert [(a.key, a.op) for a in (await site.plan()).actions] == [("/news", "update")]


def test_a_new_page_numbered_path_1_is_a_conflict_and_is_not_recorded(
    sandbox: Sandbox,
    raw: RawSite,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
    reliability_report: ReliabilityReport,
) -> None:
    """/news exists but the page tree hides it from this run, so the create lands at /news-1."""
    site = content_site(tmp_path, sandbox, {"pages/news.yaml": NEWS})
    monkeypatch.setenv("CMSSYNC_URL", sandbox.url)
    monkeypatch.setenv("CMSSYNC_CLIENT_SECRET", sandbox.client_secret)
    monkeypatch.setenv("CMSSYNC_PASSWORD", sandbox.admin_password)
    monkeypatch.setenv("CMSSYNC_STATE", str(site.state_path))
    assert run_cli(capsys, "apply", "--yes", str(site.root)).code == 0
    site.state_path.unlink()
    hide = Corruption("home's children hidden", "GET", r"/pages/1/children$", body=json.dumps({"data": []}).encode())
    proxy = CorruptingProxy(hide)
    with through(proxy):
        result = run_cli(capsys, "apply", "--yes", str(site.root))
    after = take_inventory(raw, block_pages=set())

    duplicates = sum(1 for path in after.pages if path.startswith("/news-"))
    reliability_report.add(cases_tried=1, faults_injected=proxy.corrupted, duplicates_found=duplicates)
    assert result.code == 1, result.text
    assert "conflict: page /news: a page with this path already exists on the site" in result.text
    assert "the duplicate was moved to the trash again" in result.text
    assert duplicates == 0, sorted(after.pages)
    assert "/news" not in site.state().pages
