"""One truth about a plan (issue 27 item 2): the JSON's ``has_changes``/``is_empty`` and the exit code come from one
function, and managed objects removed from the content but kept (pruning off) are said in every format and exit 2
under ``--detailed-exitcode``, where they used to give "No changes. The site matches the content." and 0."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from cmssync.cli import main
from cmssync.emulator.embedded import Sandbox
from cmssync.errors import ContentError
from cmssync.render.text import render_text
from tests.support.sites import Site, copy_example, set_sandbox_environment


@pytest.fixture
def applied(tmp_path: Path, sandbox: Sandbox, monkeypatch: pytest.MonkeyPatch) -> Path:
    root = copy_example(tmp_path / "site")
    set_sandbox_environment(monkeypatch, sandbox, tmp_path / "state")
    assert main(["apply", str(root), "--yes"]) == 0
    return root


def plan(capsys: pytest.CaptureFixture[str], root: Path, *args: str) -> tuple[int, str]:
    code = main(["plan", str(root), *args])
    return code, capsys.readouterr().out


def test_managed_pages_removed_and_kept_are_said_everywhere_and_exit_2(
    applied: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    capsys.readouterr()
    (applied / "pages/services/training.yaml").unlink()
    (applied / "pages/services/consulting.yaml").unlink()
    code, text = plan(capsys, applied, "--detailed-exitcode")
    assert code == 2
    assert "No changes" not in text
    assert "2 managed page(s) no longer in the content, kept (use --prune to delete)" in text
    assert "2 managed objects no longer in the content, kept (--prune deletes)." in text
    code, out = plan(capsys, applied, "--detailed-exitcode", "--format", "json")
    document = json.loads(out)
    assert (code, document["has_changes"], document["is_empty"], document["writes"]) == (2, True, False, False)
    assert document["detailed_exit_code"] == 2
    assert [(k["kind"], k["count"]) for k in document["kept"]] == [("page", 2)]
    _, markdown = plan(capsys, applied, "--format", "markdown")
    assert "> **Kept:** 2 managed page(s) no longer in the content" in markdown
    _, html = plan(capsys, applied, "--format", "html")
    assert "Removed from the content, kept: 2" in html
    assert plan(capsys, applied, "--detailed-exitcode", "--prune")[0] == 2  # now deletes: still changes


def test_blocked_deletes_agree_between_json_and_exit_code(applied: Path, capsys: pytest.CaptureFixture[str]) -> None:
    capsys.readouterr()
    for page in ("training", "consulting"):
        (applied / f"pages/services/{page}.yaml").unlink()
    args = ("--prune", "--detailed-exitcode", "--format", "json")
    config = applied / "cmssync.yaml"
    config.write_text(config.read_text().replace("max_deletes: 10", "max_deletes: 1"), encoding="utf-8")
    code, out = plan(capsys, applied, *args)
    document = json.loads(out)
    assert document["blocked"]
    assert not document["actions"]
    assert (code, document["has_changes"], document["detailed_exit_code"]) == (2, True, 2)


async def test_apply_checks_passwords_before_its_first_write(
    tmp_path: Path, sandbox: Sandbox, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A two-character password used to fail in apply after the 13 changes ahead of it were written."""
    site = Site(copy_example(tmp_path / "site", monkeypatch), sandbox)
    monkeypatch.setenv("SAM_WRITER_PASSWORD", "ab")
    before = (await site.plan()).summary()
    with pytest.raises(ContentError, match="the password in SAM_WRITER_PASSWORD has 2 characters"):
        await site.apply()
    assert (await site.plan()).summary() == before  # nothing was written


# --- issue 27 item 6: warnings silenced per kind, folders by path ----------------------------------------------


async def test_a_kind_of_warning_can_be_silenced(example: Site) -> None:
    first = await example.plan()
    assert not [w for w in first.warnings if "group" in w]  # the site's own groups are never the user's concern
    assert not (await example.apply()).failed, example.last_output
    example.write("groups.yaml", "- name: Content Team\n")  # Reviewers dropped: it stays on the site
    plan = await example.plan()
    assert (
        "groups managed before but no longer in the content, left on the site (the API deletes no group): Reviewers"
        in plan.warnings
    )
    config = example.root / "cmssync.yaml"
    config.write_text(config.read_text() + "warnings: {unmanaged_groups: off}\n", encoding="utf-8")
    plan = await example.plan()
    assert not any("groups managed before" in w for w in plan.warnings)
    assert "groups managed before" not in render_text(plan)


def test_an_unknown_warning_kind_is_refused_with_the_kinds(example: Site) -> None:
    config = example.root / "cmssync.yaml"
    config.write_text(config.read_text() + "warnings: {unmanaged_group: off}\n", encoding="utf-8")
    with pytest.raises(ContentError, match="unmanaged_groups"):
        example.workspace()


async def test_a_folder_change_shows_the_folders_paths(example: Site) -> None:
    assert not (await example.apply()).failed, example.last_output
    sidecar = example.root / "files/documents/price-list.txt.yaml"
    sidecar.write_text(sidecar.read_text().replace("folder: /documents", "folder: /images"), encoding="utf-8")
    [move] = [a for a in (await example.plan()).actions if a.key == "documents/price-list.txt"]
    [change] = move.changes
    assert (move.op, change.field, change.before, change.after) == ("move", "folder", "/documents", "/images")
    assert not (await example.apply()).failed, example.last_output  # apply still moves it, by the sidecar's folder
    assert (await example.plan()).actions == ()
