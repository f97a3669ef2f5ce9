"""Kills at the commit-before-answer point (issue 37 items 1 and 4): the site commits a write, the run dies before
the answer reaches it. A proxy forwards the request to the sandbox and then ends the run as SIGKILL would; the next
run (no fault) must finish the work with nothing doubled and nothing left behind.

Block adds (item 1): the added block sits in cmssync's own unapproved draft, recorded nowhere but the draft; the
next run takes it as its own (the draft's starting blocks are journaled before the first write), not as an editor's
addition, so the page shows each of the content's blocks once. Uploads (item 4): the upload is journaled with its
SHA-256 before it is sent, and the next run adopts or retires the copy the lost answer left.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import pytest

from cmssync.emulator.embedded import Sandbox
from tests.reliability.inventory import PRICE_LIST, duplicates, problems, stale_files, take_inventory
from tests.reliability.proxy import CorruptingProxy, Corruption, Killed, through
from tests.reliability.sites import ReliabilitySite, write_generated_content
from tests.support.editors import Editor
from tests.support.rawsite import RawSite
from tests.support.reliability_report import ReliabilityReport
from tests.support.sites import Site
from tests.support.stacks import SEED as STACKS_SEED

PAGE = "/rel-section-1"
FOOTER_LINES = ["Footer text, edited", "Footer line 1", "Footer line 2", "Footer line 3"]
ADDED = "    - type: content\n      value: {{content: <p>Added block {n}.</p>}}\n"


def add_blocks(root: Path, count: int) -> None:
    page = root / "pages" / "rel-section-1.yaml"
    text = page.read_text(encoding="utf-8")
    page.write_text(text + "".join(ADDED.format(n=n) for n in range(1, count + 1)), encoding="utf-8")


@pytest.mark.parametrize(("adds", "killed_at"), [(1, 1), (3, 1), (3, 2), (3, 3)])
async def test_a_block_add_committed_before_a_kill_is_not_added_again(
    adds: int,
    killed_at: int,
    tmp_path: Path,
    sandbox: Sandbox,
    raw_factory: Callable[[], RawSite],
    reliability_report: ReliabilityReport,
) -> None:
    root = tmp_path / "site"
    write_generated_content(root, sections=1, pages_per_section=0, blocks=2)
    site = ReliabilitySite(root, sandbox, settings={"concurrency": 1})
    assert not (await site.apply()).failed, site.last_output
    raw = raw_factory()
    before = take_inventory(raw, block_pages=set())
    add_blocks(root, adds)

    # the first killed_at - 1 adds are answered, the next one commits and the run dies
    kill = Corruption("block add, then SIGKILL", "POST", r"/pages/\d+/Main$", kill=True, skip=killed_at - 1)
    proxy = CorruptingProxy(kill)
    with through(proxy), pytest.raises(Killed):
        await site.apply()

    plan = await site.plan()
    assert [(s.key, s.area) for s in plan.site_additions] == [], "cmssync's own block taken for an editor's"
    assert [c.field for c in plan.conflicts] == []
    assert [h.message for h in plan.held] == []
    report = await site.apply()
    assert not report.failed, site.last_output
    wanted = [f"<p>Block {n} of page 1000.</p>" for n in (1, 2)]
    wanted += [f"<p>Added block {n}.</p>" for n in range(1, adds + 1)]
    live = [value["content"] for _, value in raw.blocks(PAGE, "Main")]
    found = problems(before, take_inventory(raw, block_pages={PAGE}), site.content(), site.state())
    lost = len([text for text in wanted if text not in live])
    reliability_report.add(
        cases_tried=1, kills=1, faults_injected=1, duplicates_found=duplicates(found), lost_writes=lost
    )
    assert live == wanted
    assert found == []
    assert (await site.plan()).is_empty


async def test_an_editors_block_from_before_the_killed_run_is_still_kept(
    tmp_path: Path, sandbox: Sandbox, raw_factory: Callable[[], RawSite]
) -> None:
    """Only cmssync's own writes lose the editor's benefit of the doubt: a block an editor added before the run
    began is in the draft's journaled start and stays an addition, kept once."""
    root = tmp_path / "site"
    write_generated_content(root, sections=1, pages_per_section=0, blocks=2)
    site = ReliabilitySite(root, sandbox, settings={"concurrency": 1})
    assert not (await site.apply()).failed, site.last_output
    editor = Editor(sandbox)
    editor.add_block(PAGE, "Main", "<p>The editor's block.</p>")
    editor.close()
    add_blocks(root, 2)
    kill = Corruption("block add, then SIGKILL", "POST", r"/pages/\d+/Main$", kill=True)
    with through(CorruptingProxy(kill)), pytest.raises(Killed):
        await site.apply()

    plan = await site.plan()
    assert [(s.key, s.area, len(s.blocks)) for s in plan.site_additions] == [(PAGE, "Main", 1)]
    assert not (await site.apply()).failed, site.last_output
    live = [value["content"] for _, value in raw_factory().blocks(PAGE, "Main")]
    assert live == [
        "<p>Block 1 of page 1000.</p>",
        "<p>Block 2 of page 1000.</p>",
        "<p>The editor's block.</p>",
        "<p>Added block 1.</p>",
        "<p>Added block 2.</p>",
    ]
    assert (await site.plan()).is_empty


@pytest.mark.parametrize("then", ["same content", "content changed again"])
async def test_a_replacement_upload_committed_before_a_kill_leaves_no_orphan(
    then: str,
    example_site: ReliabilitySite,
    sandbox: Sandbox,
    raw_factory: Callable[[], RawSite],
    reliability_report: ReliabilityReport,
) -> None:
    """Issue 37 item 4: the upload is journaled with its SHA-256 before it is sent; the next run looks the copy up
    by name and bytes and adopts it (same content) or retires it (the content moved on): no copy stays on the site
    recorded nowhere, and the page linking the file is not refused."""
    site = example_site
    assert not (await site.apply()).failed, site.last_output
    (site.root / PRICE_LIST).write_text("New prices: everything is cheaper.\n", encoding="utf-8")
    site.edit("pages/services.yaml", "see the <a", "see the new <a")
    with (
        through(CorruptingProxy(Corruption("upload, then SIGKILL", "POST", r"/files$", kill=True))),
        pytest.raises(Killed),
    ):
        await site.apply()
    if then == "content changed again":
        (site.root / PRICE_LIST).write_text("Newer prices: cheaper still.\n", encoding="utf-8")

    plan = await site.plan()
    assert [c.field for c in plan.conflicts] == []
    assert [h.message for h in plan.held] == []
    report = await site.apply()
    raw = raw_factory()
    orphans = stale_files(raw, site.state())
    reliability_report.add(cases_tried=1, kills=1, faults_injected=1, orphaned_files=len(orphans))
    assert not report.failed, site.last_output
    assert orphans == []
    assert site.state().uploads == {}
    assert (await site.plan()).is_empty


async def test_a_new_files_upload_committed_before_a_kill_is_adopted(
    example_site: ReliabilitySite, raw_factory: Callable[[], RawSite], reliability_report: ReliabilityReport
) -> None:
    site = example_site
    assert not (await site.apply()).failed, site.last_output
    (site.root / "files" / "documents" / "menu.txt").write_text("Today: soup.\n", encoding="utf-8")
    with (
        through(CorruptingProxy(Corruption("upload, then SIGKILL", "POST", r"/files$", kill=True))),
        pytest.raises(Killed),
    ):
        await site.apply()
    assert "documents/menu.txt" in site.state().uploads  # journaled before the bytes were sent

    assert not (await site.apply()).failed, site.last_output
    menus = [name for name in take_inventory(raw_factory(), block_pages=set()).files.values() if name == "menu.txt"]
    reliability_report.add(cases_tried=1, kills=1, faults_injected=1, orphaned_files=max(0, len(menus) - 1))
    assert menus == ["menu.txt"]
    assert site.state().uploads == {}
    assert (await site.plan()).is_empty


@pytest.mark.parametrize("killed_at", [1, 2, 3])
async def test_a_stack_edit_killed_after_a_commit_is_finished_once(
    killed_at: int,
    sandbox_server: Sandbox,
    tmp_path: Path,
    raw_factory: Callable[[], RawSite],
    reliability_report: ReliabilityReport,
) -> None:
    """A stack makes a version per write (stack-writes.jsonl): a block add whose answer a kill lost leaves a newer
    version than the one journaled; the next run still takes the draft as cmssync's own and publishes it once."""
    site = Site.seeded(sandbox_server, tmp_path, STACKS_SEED)
    await site.pull()
    blocks = [{"type": "content", "value": {"content": f"<p>{text}</p>"}} for text in FOOTER_LINES]
    (site.root / "stacks" / "footer.yaml").write_text(
        json.dumps({"id": 7, "name": "Footer", "areas": {"Main": blocks}})
    )
    kill = Corruption("stack block add, then SIGKILL", "POST", r"/pages/7/Main$", kill=True, skip=killed_at - 1)
    with through(CorruptingProxy(kill)), pytest.raises(Killed):
        await site.apply()

    plan = await site.plan()
    assert [h.message for h in plan.held] == []
    assert [c.field for c in plan.conflicts] == []
    assert (await site.apply()).exit_code == 0, site.last_output
    live = [value["content"] for _, value in raw_factory().blocks("/!stacks/footer", "Main", page_id=7)]
    wanted = [f"<p>{text}</p>" for text in FOOTER_LINES]
    reliability_report.add(
        cases_tried=1,
        kills=1,
        faults_injected=1,
        duplicates_found=len(live) - len(set(live)),
        lost_writes=len([text for text in wanted if text not in live]),
    )
    assert live == [f"<p>{text}</p>" for text in FOOTER_LINES]
    assert not (await site.plan()).actions
