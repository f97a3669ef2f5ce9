"""pull writes file folders by path (issue 14): only for the ids ``folders:`` maps, never a site's bare id."""

from __future__ import annotations

import io
from pathlib import Path

from cmssync.commands.pull import run_pull
from cmssync.emulator.embedded import Sandbox
from tests.support.sites import Site


async def _pull(tmp_path: Path, sandbox: Sandbox, settings: str) -> tuple[Site, str]:
    root = tmp_path / "pulled"
    root.mkdir()
    (root / "cmssync.yaml").write_text(settings, encoding="utf-8")
    site = Site(root, sandbox)
    out = io.StringIO()
    assert await run_pull(root, out=out, overrides=site.overrides()) == 0
    return site, out.getvalue()


async def test_mapped_folders_are_written_as_paths(tmp_path: Path, sandbox: Sandbox) -> None:
    site, output = await _pull(tmp_path, sandbox, "folders: {/: 7, /images: 10, /documents: 11}\n")
    assert "folder: /images" in (site.root / "files/images/logo.png.yaml").read_text()
    assert "without a folder" not in output
    plan = await site.plan()
    assert plan.actions == (), [(a.kind, a.key, a.op) for a in plan.actions]


async def test_unmapped_folders_are_left_alone_and_reported(tmp_path: Path, sandbox: Sandbox) -> None:
    site, output = await _pull(tmp_path, sandbox, "folders: {/images: 10}\n")
    sidecars = {p.name: p.read_text() for p in (site.root / "files").rglob("*.yaml")}
    assert "folder: /images" in sidecars["logo.png.yaml"]
    in_documents = [name for name, text in sidecars.items() if name.endswith(".pdf.yaml")]
    assert in_documents, sidecars
    assert all("folder" not in sidecars[name] for name in in_documents), "no bare folder id is written"
    assert "note: files in folders 7 (1 file), 11 (1 file): pulled without a folder: key" in output, output
    assert "skipped" not in output  # they were written, not skipped
    assert "folders: of cmssync.yaml" in output
    plan = await site.plan()
    assert plan.actions == (), [(a.kind, a.key, a.op) for a in plan.actions]
