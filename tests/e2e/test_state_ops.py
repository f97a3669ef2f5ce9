"""Operating the state against the sandbox (issue 38): ``state list|show|rm|mv`` on the command line, ``import`` of
an existing site object, and the refresh-only run (``cmssync refresh``), each holding the lock and saving through
the backend."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from cmssync.cli import main
from cmssync.emulator.embedded import Sandbox
from cmssync.errors import ConfigError, StateError, StateLockedError
from cmssync.state.backends import LocalStateBackend
from cmssync.state.records import PageRecord
from cmssync.sync.state_ops import import_object, parse_address, refresh, remove
from tests.support.editors import Editor
from tests.support.rawsite import RawSite, trash_page
from tests.support.sites import Site

ABOUT = "pages/about.yaml"


@pytest.fixture
def applied(example: Site, monkeypatch: pytest.MonkeyPatch) -> Site:
    """The example content on the sandbox (each test applies it first); ``CMSSYNC_STATE`` names its state for the
    command line."""
    monkeypatch.setenv("CMSSYNC_STATE", str(example.state_path))
    return example


def cli(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str, str]:
    code = main(list(args))
    out, err = capsys.readouterr()
    return code, out, err


async def test_list_show_mv_and_rm_on_the_command_line(applied: Site, capsys: pytest.CaptureFixture[str]) -> None:
    assert not (await applied.apply()).failed
    about_id = applied.workspace().store.load().pages["/about"].id
    code, out, _ = cli(capsys, "state", "list", str(applied.root))
    assert code == 0
    assert f"page:/about\t{about_id}" in out.splitlines()
    assert any(line.startswith("user:") for line in out.splitlines())
    code, out, _ = cli(capsys, "state", "list", str(applied.root), "--kind", "page", "--format", "json")
    listed = json.loads(out)
    assert listed["format_version"] == 2
    assert {"address": "page:/about", "id": about_id} in listed["objects"]
    assert all(item["address"].startswith("page:") for item in listed["objects"])

    code, out, _ = cli(capsys, "state", "show", "page:/about", str(applied.root))
    assert json.loads(out)["record"]["id"] == about_id
    code, _, err = cli(capsys, "state", "show", "page:/abuot", str(applied.root))
    assert code != 0
    assert "did you mean page:/about?" in err

    code, out, _ = cli(capsys, "state", "mv", "page:/about", "page:/about-us", str(applied.root))
    assert (code, out.strip()) == (0, "moved page:/about to page:/about-us")
    assert applied.workspace().store.load().pages["/about-us"].id == about_id
    code, _, err = cli(capsys, "state", "mv", "page:/about-us", "user:about", str(applied.root))
    assert code != 0
    assert "keeps its kind" in err
    assert cli(capsys, "state", "mv", "page:/about-us", "page:/about", str(applied.root))[0] == 0

    code, out, _ = cli(capsys, "state", "rm", "page:/about", str(applied.root))
    assert code == 0
    assert "stays on the site" in out
    assert "/about" not in applied.workspace().store.load().pages


async def test_an_rm_d_object_is_unmanaged_not_deleted(applied: Site, sandbox: Sandbox) -> None:
    assert not (await applied.apply()).failed
    (applied.root / "pages" / "contact.yaml").unlink()
    pruning = await applied.plan(prune=True)
    assert "page:/contact" in {a.id for a in pruning.actions if a.op == "delete"}  # managed: pruned

    remove(applied.workspace().store, parse_address("page:/contact"))
    plan = await applied.plan(prune=True)
    assert "page:/contact" not in {a.id for a in plan.actions}
    assert (await applied.apply(prune=True)).exit_code == 0
    assert applied.workspace().store.load().pages.get("/contact") is None
    raw = RawSite(sandbox)
    assert raw.page_by_path("/contact") is not None  # still on the site
    raw.close()


async def test_an_imported_page_plans_empty_and_then_only_real_differences(applied: Site) -> None:
    assert not (await applied.apply()).failed
    store = applied.workspace().store
    about_id = store.load().pages["/about"].id
    remove(store, parse_address("page:/about"))
    done = await import_object(applied.workspace(), parse_address("page:/about"), str(about_id))
    assert done.startswith(f"imported page:/about = page {about_id} on the site (/about, live version ")
    assert store.load().pages["/about"].id == about_id
    assert (await applied.plan()).is_empty
    applied.edit(ABOUT, "Who we are and how we work.", "Who we are, imported.")
    action = (await applied.plan()).by_id()["page:/about"]
    assert [c.field for c in action.changes] == ["description"]

    with pytest.raises(StateError, match="already has page:/about;"):
        await import_object(applied.workspace(), parse_address("page:/about"), str(about_id))
    team = parse_address("page:/about/team")
    remove(store, team)
    with pytest.raises(StateError, match=f"page {about_id} is already bound to page:/about"):
        await import_object(applied.workspace(), team, str(about_id))
    with pytest.raises(ConfigError, match="the content has no page:/nowhere"):
        await import_object(applied.workspace(), parse_address("page:/nowhere"), "1")
    remove(store, parse_address("page:/about"))
    with pytest.raises(ConfigError, match="the site has no page 999999"):
        await import_object(applied.workspace(), parse_address("page:/about"), "999999")


async def test_refresh_records_the_site_as_the_base_without_writing_to_it(
    applied: Site, sandbox: Sandbox, editor: Editor
) -> None:
    assert not (await applied.apply()).failed
    editor.edit("/about", description="Written by the editor.")
    applied.edit(ABOUT, "Who we are and how we work.", "Who we are, from the content.")
    applied.edit(ABOUT, "nobody could update.", "nobody could update, from the content.")  # a block only it changed
    assert [h.id for h in (await applied.plan()).held] == ["page:/about"]  # both changed: a conflict

    sandbox.clear_stats()
    done = await refresh(applied.workspace())
    writes = [r for r in sandbox.stats()["requests"] if r["method"] != "GET" and r["route"] != "/oauth/2.0/token"]
    assert writes == []  # nothing written to the site
    assert any(line.startswith("page:/about (live version") for line in done.rebased)
    assert done.gone == []

    plan = await applied.plan()
    assert not plan.held  # the editor's version is the base now: the content's change is an ordinary update
    assert not plan.conflicts
    assert not plan.site_changes  # what differs at the refresh is the content's to write, field and block alike
    about = plan.by_id()["page:/about"]
    assert [c.field for c in about.changes] == ["description"]
    assert [(b.area, b.op) for b in about.blocks] == [("Main", "update")]
    again = await refresh(applied.workspace())
    assert again.rebased == []  # a second refresh has nothing to record


async def test_an_editors_change_after_a_refresh_or_import_is_not_written_over(applied: Site, editor: Editor) -> None:
    """After ``refresh`` (or ``import``) a page's record holds a full base taken from the live page, as a pull
    records it; an editor's change approved after it is a site change under the default ``drift: propose``, listed
    and never written over (before, such a record held the live version only and the change was planned as an
    ordinary update and reverted: found on the real 9.3.1 site, the editor's block in a stack deleted). The
    content's own change still applies, and once the content takes the editor's words the plan is empty."""
    assert not (await applied.apply()).failed
    store = applied.workspace().store
    await refresh(applied.workspace())
    about_id = store.load().pages["/about"].id
    contact = parse_address("page:/contact")
    remove(store, contact)
    await import_object(applied.workspace(), contact, str(editor.page("/contact")["id"]))
    assert store.load().pages["/about"].base is not None
    assert store.load().pages["/contact"].base is not None
    editor.edit("/about", description="Written by the editor after the refresh.")
    editor.edit("/contact", description="Written by the editor after the import.")
    editor.edit_block("/about", "Main", 1, "<p>An editor's block after the refresh.</p>")
    applied.edit(ABOUT, "name: About us", "name: About us and our team")  # the content's own change

    plan = await applied.plan()
    assert not plan.held
    assert not plan.conflicts
    assert {(c.id, c.action, c.fields) for c in plan.site_changes} == {
        ("page:/about", "propose", ("description", "area:Main")),
        ("page:/contact", "propose", ("description",)),
    }
    assert [c.field for c in plan.by_id()["page:/about"].changes] == ["name"]
    assert (await applied.apply()).exit_code == 0
    assert editor.live("/about")["description"] == "Written by the editor after the refresh."
    assert editor.live("/about")["name"] == "About us and our team"
    assert editor.live("/contact")["description"] == "Written by the editor after the import."
    assert store.load().pages["/about"].id == about_id


async def test_refresh_forgets_what_the_site_no_longer_has(applied: Site, sandbox: Sandbox) -> None:
    assert not (await applied.apply()).failed
    trash_page(sandbox, "/contact")
    done = await refresh(applied.workspace())
    assert done.gone == ["page:/contact"]
    assert "page:/contact" in {a.id for a in (await applied.plan()).actions if a.op == "create"}


async def test_state_commands_honour_the_lock(applied: Site, capsys: pytest.CaptureFixture[str]) -> None:
    assert not (await applied.apply()).failed
    store = applied.workspace().store
    with store.try_lock("cmssync apply"):
        code, _, err = cli(capsys, "state", "rm", "page:/about", str(applied.root))
        assert code != 0
        assert "locked by" in err
        with pytest.raises(StateLockedError):
            await refresh(applied.workspace())
    assert "/about" in store.load().pages


def test_an_address_says_its_form(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="is not KIND:KEY"):
        parse_address("about")
    assert str(parse_address("page:about/")) == "page:/about"
    assert str(parse_address("group:Content Team")) == "group:Content Team"


def test_a_stack_is_named_as_plans_name_it(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """A stack's record is kept as its page (``/!stacks/footer``) but listed, shown, moved and forgotten as
    ``stack:footer``, the name plans, targets and output give it (``state rm stack:footer`` was "the state has no
    stack:footer (did you mean page:/!stacks/footer?)")."""
    store = LocalStateBackend(tmp_path / "state.json")
    state = store.load()
    state.record_page("/about", PageRecord(id=3))
    state.record_page("/!stacks/footer", PageRecord(id=7))
    store.save(state)
    monkeypatch.setenv("CMSSYNC_STATE", str(store.path))
    code, out, _ = cli(capsys, "state", "list", str(tmp_path))
    assert (code, out.splitlines()) == (0, ["page:/about\t3", "stack:footer\t7"])
    code, out, _ = cli(capsys, "state", "list", str(tmp_path), "--kind", "stack", "--format", "json")
    assert json.loads(out)["objects"] == [{"address": "stack:footer", "id": 7}]
    code, out, _ = cli(capsys, "state", "list", str(tmp_path), "--kind", "page")
    assert out.splitlines() == ["page:/about\t3"]
    code, out, _ = cli(capsys, "state", "show", "stack:footer", str(tmp_path))
    assert (code, json.loads(out)["address"], json.loads(out)["record"]["id"]) == (0, "stack:footer", 7)
    assert cli(capsys, "state", "mv", "stack:footer", "stack:site-footer", str(tmp_path))[1].strip() == (
        "moved stack:footer to stack:site-footer"
    )
    assert store.load().pages["/!stacks/site-footer"].id == 7
    code, out, _ = cli(capsys, "state", "rm", "stack:site-footer", str(tmp_path))
    assert code == 0
    assert "forgot stack:site-footer (id 7)" in out
    assert set(store.load().pages) == {"/about"}
