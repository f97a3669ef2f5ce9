"""pull adopts an existing site: the next plan is empty, and edits to the pulled content reach the site."""

from __future__ import annotations

import io
from pathlib import Path

from cmssync.commands.pull import run_pull
from cmssync.content.writer import read_plain, write_yaml
from cmssync.emulator.embedded import Sandbox
from cmssync.plan.asset_forms import file_digest, user_digest
from tests.support.pull_records import recorded_as_loaded
from tests.support.rawsite import RawSite
from tests.support.sites import Site


def _pulled_site(tmp_path: Path, sandbox: Sandbox) -> Site:
    root = tmp_path / "pulled"
    root.mkdir()
    (root / "cmssync.yaml").write_text("# adopted from the sandbox\nfolders: {images: 10, documents: 11}\n")
    return Site(root, sandbox)


async def _pull(site: Site, *pages: str, force: bool = False) -> str:
    out = io.StringIO()
    assert await run_pull(site.root, out=out, pages=pages, overrides=site.overrides(), force=force) == 0
    return out.getvalue()


async def test_pull_then_plan_is_empty(tmp_path: Path, sandbox_any_dialect: Sandbox) -> None:
    site = _pulled_site(tmp_path, sandbox_any_dialect)
    await _pull(site)
    assert (site.root / "pages/about/team.yaml").is_file()
    assert (site.root / "files/images/logo.png").read_bytes().startswith(b"\x89PNG")
    assert "password" not in (site.root / "users.yaml").read_text()
    plan = await site.plan()
    assert plan.actions == (), [(a.kind, a.key, a.op) for a in plan.actions]


async def test_pull_edit_apply_reaches_the_site(tmp_path: Path, sandbox: Sandbox, raw: RawSite) -> None:
    site = _pulled_site(tmp_path, sandbox)
    await _pull(site)
    page = site.root / "pages/about.yaml"
    page.write_text(page.read_text().replace("A small team.", "A small, friendly team."))
    report = await site.apply()
    assert not report.failed, site.last_output
    assert [(o.action.key, o.status) for o in report.outcomes] == [("/about", "ok")]
    assert "A small, friendly team." in raw.blocks("/about", "Main")[0][1]["content"]
    assert (await site.plan()).actions == ()


async def test_pull_keeps_comments_and_can_take_only_some_pages(tmp_path: Path, sandbox: Sandbox) -> None:
    site = _pulled_site(tmp_path, sandbox)
    site.write("pages/about.yaml", "# maintained by the web team\nname: Old name  # renamed on the site\n")
    output = await _pull(site, "/about", "/nowhere", force=True)  # a file pull never wrote: --force merges into it
    assert "page /nowhere: not found on the site" in output
    text = (site.root / "pages/about.yaml").read_text()
    assert text.startswith("# maintained by the web team\nname: About")
    assert not (site.root / "pages/contact.yaml").exists()
    assert (await site.plan()).actions == ()


async def test_pull_records_the_digests_apply_records(tmp_path: Path, sandbox: Sandbox) -> None:
    """One digest per record kind: the state pull writes holds what an apply of the pulled content would record."""
    site = _pulled_site(tmp_path, sandbox)
    await _pull(site)
    workspace = site.workspace()
    state = workspace.load_state()
    content = workspace.content
    assert state.users
    assert state.files
    for username, record in state.users.items():
        assert record.digest == user_digest(content.users[username]), username
    for path, file_record in state.files.items():
        assert file_record.digest == file_digest(content.files[path]), path
    assert recorded_as_loaded(site)[True] == len(state.pages)  # pages: from what pull staged


async def test_a_page_linking_to_a_page_is_recorded_from_its_file_read_back(tmp_path: Path, sandbox: Sandbox) -> None:
    """A page whose content refers to a page (an id the walk may not know yet when it stages the page) is recorded
    from its file as it loads back; the others from what pull staged; both as the loaded content gives."""
    site = _pulled_site(tmp_path, sandbox)
    await _pull(site)
    team = site.root / "pages/about/team.yaml"
    data = read_plain(team)
    block = next(b for blocks in data["areas"].values() for b in blocks if b.get("type") == "content")
    block["value"]["content"] += '<p><a href="${page-link:/about}">About</a></p>'
    write_yaml(team, data)
    await site.apply()
    await _pull(site)
    ways = recorded_as_loaded(site)
    assert ways[False] == 1
    assert ways[True] == len(site.workspace().load_state().pages) - 1
