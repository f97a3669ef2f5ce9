"""A safe pull (issue 18 item 7): umask modes, local edits kept unless --force, --dry-run diffs, explicit values
and managed empty areas kept, a starter cmssync.yaml, one summary of every kind."""

from __future__ import annotations

import io
import os
import stat
from collections.abc import Iterator
from pathlib import Path

import pytest
from click.testing import CliRunner

from cmssync.cli import cli
from cmssync.commands.pull import run_pull
from cmssync.config import load_settings
from cmssync.emulator.embedded import Sandbox
from cmssync.sync.pull_writes import MANIFEST
from tests.support.rawsite import RawSite
from tests.support.sites import Site

SETTINGS = "# adopted from the sandbox\nfolders: {images: 10, documents: 11}\n"


@pytest.fixture
def umask_022() -> Iterator[None]:
    previous = os.umask(0o022)
    try:
        yield
    finally:
        os.umask(previous)


def _site(tmp_path: Path, sandbox: Sandbox, name: str = "mine", settings: str | None = SETTINGS) -> Site:
    root = tmp_path / name
    root.mkdir()
    if settings is not None:
        (root / "cmssync.yaml").write_text(settings)
    return Site(root, sandbox)


async def _pull(site: Site, *pages: str, force: bool = False, dry_run: bool = False) -> tuple[int, str]:
    out = io.StringIO()
    code = await run_pull(site.root, out=out, pages=pages, overrides=site.overrides(), force=force, dry_run=dry_run)
    return code, out.getvalue()


async def _editor_changes_about(tmp_path: Path, sandbox: Sandbox, old: str, new: str) -> None:
    """Someone else changes /about on the site (through their own pulled copy)."""
    editor = _site(tmp_path, sandbox, "editor")
    assert (await _pull(editor, "/about"))[0] == 0
    page = editor.root / "pages/about.yaml"
    page.write_text(page.read_text().replace(old, new))
    report = await editor.apply()
    assert not report.failed, editor.last_output


def _mode(path: Path) -> int:
    return stat.S_IMODE(path.stat().st_mode)


async def test_pulled_files_get_the_umask_mode(tmp_path: Path, sandbox: Sandbox, umask_022: None) -> None:
    site = _site(tmp_path, sandbox)
    assert (await _pull(site))[0] == 0
    written = [p for p in site.root.rglob("*") if p.is_file() and ".cmssync" not in p.parts]
    assert {p.relative_to(site.root).as_posix() for p in written} >= {
        "pages/about.yaml",
        "files/images/logo.png",
        "users.yaml",
    }
    assert {p.relative_to(site.root).as_posix(): _mode(p) for p in written} == {
        p.relative_to(site.root).as_posix(): 0o644 for p in written
    }
    assert not (site.root / ".cmssync/pull-staging").exists()


async def test_a_local_edit_is_kept_and_listed_unless_forced(tmp_path: Path, sandbox: Sandbox) -> None:
    site = _site(tmp_path, sandbox)
    assert (await _pull(site))[0] == 0
    recorded = site.workspace().load_state().pages["/about"]
    page = site.root / "pages/about.yaml"
    edited = page.read_text().replace("A small team.", "A small, local team.")
    page.write_text(edited)
    await _editor_changes_about(tmp_path, sandbox, "A small team.", "A small team, edited on the site.")

    code, output = await _pull(site)
    assert code == 1, output
    assert page.read_text() == edited, "a local edit is never overwritten without --force"
    assert "local edits kept, not overwritten (1; review them, or pull again with --force):" in output
    assert "\n  pages/about.yaml\n" in output
    assert "pages: " in output
    assert "1 local edits kept" in output
    assert site.workspace().load_state().pages["/about"] == recorded, "a kept page keeps its record"
    code, output = await _pull(site, force=True)
    assert code == 0, output
    assert "A small team, edited on the site." in page.read_text()
    assert "1 overwritten (--force)" in output
    assert (await site.plan()).actions == ()


async def test_an_untouched_file_follows_the_site(tmp_path: Path, sandbox: Sandbox) -> None:
    site = _site(tmp_path, sandbox)
    assert (await _pull(site))[0] == 0
    await _editor_changes_about(tmp_path, sandbox, "A small team.", "A team of five.")
    code, output = await _pull(site)
    assert code == 0, output
    assert "A team of five." in (site.root / "pages/about.yaml").read_text()
    assert "1 updated" in output
    assert (await site.plan()).actions == ()


async def test_without_a_manifest_the_state_says_what_was_applied(tmp_path: Path, sandbox: Sandbox) -> None:
    """A directory applied before pulls kept a manifest: a page whose file is what the state recorded follows the
    site; a page file that is not is kept."""
    site = _site(tmp_path, sandbox)
    assert (await _pull(site))[0] == 0
    (site.root / MANIFEST).unlink()
    await _editor_changes_about(tmp_path, sandbox, "A small team.", "A team of six.")
    code, output = await _pull(site)
    assert code == 0, output
    assert "A team of six." in (site.root / "pages/about.yaml").read_text()


async def test_dry_run_shows_diffs_and_writes_nothing(tmp_path: Path, sandbox: Sandbox) -> None:
    site = _site(tmp_path, sandbox)
    assert (await _pull(site))[0] == 0
    await _editor_changes_about(tmp_path, sandbox, "A small team.", "A team of seven.")
    snapshot = {p: p.read_bytes() for p in site.root.rglob("*") if p.is_file()}
    state = site.state_path.read_bytes()
    code, output = await _pull(site, dry_run=True)
    assert code == 0, output
    assert "--- pages/about.yaml: would update\n--- a/pages/about.yaml\n+++ b/pages/about.yaml\n" in output
    lines = output.splitlines()
    assert any(line.startswith("-") and "<p>A small team.</p>" in line for line in lines), output
    assert any(line.startswith("+") and "<p>A team of seven.</p>" in line for line in lines), output
    assert "(dry run, nothing written)" in output
    assert {p: p.read_bytes() for p in site.root.rglob("*") if p.is_file()} == snapshot
    assert site.state_path.read_bytes() == state
    fresh = Site(tmp_path / "fresh", sandbox)
    code, output = await _pull(fresh, dry_run=True)
    assert code == 0, output
    assert "--- cmssync.yaml: new\n" in output
    assert not fresh.root.exists(), "a dry run creates nothing in the content directory"
    assert not fresh.state_path.parent.exists(), "nor a state or a state lock"


async def test_managed_empty_areas_and_explicit_values_are_kept(tmp_path: Path, sandbox: Sandbox) -> None:
    site = _site(tmp_path, sandbox)
    assert (await _pull(site))[0] == 0
    page = site.root / "pages/about.yaml"
    text = page.read_text()
    sidebar = "  Sidebar:\n    - type: html\n      value:\n        content: <hr>\n"
    assert "description: Who we are\n" in text, text
    assert sidebar in text, text
    text = text.replace("description: Who we are\n", 'description: ""\nprotect: true\n')
    page.write_text(text.replace(sidebar, "  Sidebar: []  # must stay empty\n"))
    report = await site.apply()  # the state now records the file as applied
    assert not report.failed, site.last_output
    await _editor_changes_about(tmp_path, sandbox, "A small team.", "A team of eight.")
    code, output = await _pull(site)
    assert code == 0, output
    after = page.read_text()
    assert "A team of eight." in after
    assert 'description: ""' in after
    assert "protect: true" in after
    assert "  Sidebar: []  # must stay empty\n" in after
    assert (await site.plan()).actions == ()


async def test_a_starter_settings_file_is_written_once(
    tmp_path: Path, sandbox: Sandbox, monkeypatch: pytest.MonkeyPatch
) -> None:
    site = _site(tmp_path, sandbox, settings=None)
    code, output = await _pull(site)
    assert code == 0, output
    text = (site.root / "cmssync.yaml").read_text()
    assert sandbox.url in text
    assert "password: ${env:CMSSYNC_PASSWORD}" in text
    assert sandbox.admin_password not in text
    assert sandbox.client_secret not in text
    assert "cmssync.yaml (starter): 1 written new" in output
    for name in ("CMSSYNC_PASSWORD", "CMSSYNC_CLIENT_SECRET", "CMSSYNC_URL"):
        monkeypatch.delenv(name, raising=False)
    assert load_settings(site.root).site.url == sandbox.url
    result = CliRunner().invoke(cli, ["validate", str(site.root)])
    assert result.exit_code == 0, result.output
    (site.root / "cmssync.yaml").write_text(text + "# mine now\n")
    code, output = await _pull(site)
    assert code == 0, output
    assert (site.root / "cmssync.yaml").read_text().endswith("# mine now\n")


async def test_the_summary_names_every_kind(tmp_path: Path, sandbox: Sandbox, raw: RawSite) -> None:
    site = _site(tmp_path, sandbox)
    code, output = await _pull(site)
    assert code == 0, output
    pages = len(site.workspace().load_state().pages)
    assert f"  pages: {pages} written new\n" in output, output
    assert "  files: " in output
    assert "  users.yaml (" in output
    assert "  groups.yaml (" in output
    code, output = await _pull(site)
    assert f"  pages: {pages} unchanged\n" in output, output
    assert "everything pulled is now managed (the next plan is empty)" in output
