"""``pull`` against a site with missing bytes, odd names and a content directory with links out (issue 29 items 4, 8,
9): one file that cannot be downloaded is skipped with a note worded as that file's 404; a file name holding a line
break never breaks a line of the summary; nothing is written through a symbolic link that leaves the content
directory, not even the first file.
"""

from __future__ import annotations

import io
from pathlib import Path

import httpx
import pytest

from cmssync.commands.pull import run_pull
from cmssync.emulator.embedded import Sandbox
from cmssync.errors import ContentError
from tests.support.reliability_report import ReliabilityReport
from tests.support.sites import Site
from tests.support.tokens import sandbox_token


async def pull(site: Site) -> tuple[int, str]:
    out = io.StringIO()
    code = await run_pull(site.root, out=out, overrides=site.overrides())
    return code, out.getvalue()


def upload(sandbox: Sandbox, name: str, data: bytes) -> None:
    token = sandbox_token(sandbox, "files:read files:add")
    response = httpx.post(
        f"{sandbox.api_url}/files", files={"file": (name, data)}, headers={"Authorization": f"Bearer {token}"}
    )
    assert response.status_code == 200, response.text


def site_in(tmp_path: Path, sandbox: Sandbox) -> Site:
    root = tmp_path / "site"
    root.mkdir()
    (root / "cmssync.yaml").write_text("folders: {images: 10, documents: 11}\n", encoding="utf-8")
    return Site(root, sandbox)


async def test_a_file_that_answers_404_is_skipped_with_a_note_and_the_rest_is_pulled(
    tmp_path: Path, sandbox: Sandbox, reliability_report: ReliabilityReport
) -> None:
    site = site_in(tmp_path, sandbox)
    sandbox.set_faults(["404:1:path=/application/files/*/notes.txt"])

    code, out = await pull(site)

    reliability_report.add(cases_tried=1, faults_injected=1)
    assert code == 0, out
    note = next(line for line in out.splitlines() if "notes.txt" in line)
    assert note.startswith("skipped: file notes.txt"), out
    assert "public URL answered 404 Not Found" in note
    assert "REST API" not in out
    assert "api_prefix" not in out
    assert (site.root / "files" / "images" / "logo.png").is_file()
    assert (site.root / "pages" / "about.yaml").is_file()
    assert not list(site.root.rglob("notes.txt"))
    sandbox.clear_faults()
    assert (await site.plan()).is_empty


async def test_a_file_name_with_a_line_break_is_one_line_of_the_summary(
    tmp_path: Path, sandbox: Sandbox, reliability_report: ReliabilityReport
) -> None:
    upload(sandbox, "evil\nname.txt", b"hello\n")
    site = site_in(tmp_path, sandbox)

    code, out = await pull(site)

    reliability_report.add(cases_tried=1)
    assert code == 0, out
    assert all(line.startswith(("skipped: ", "note: ", "pull ", "  ", "everything")) for line in out.splitlines()), out
    assert (site.root / "pages" / "about.yaml").is_file()


@pytest.mark.parametrize("linked", ["pages/blog", "files", "files/images"])
async def test_pull_writes_nothing_through_a_link_out_of_the_content(
    linked: str, tmp_path: Path, sandbox: Sandbox, reliability_report: ReliabilityReport
) -> None:
    site = site_in(tmp_path, sandbox)
    outside = tmp_path / "outside"
    outside.mkdir()
    (site.root / linked).parent.mkdir(parents=True, exist_ok=True)
    (site.root / linked).symlink_to(outside, target_is_directory=True)
    before = content_files(site.root)

    with pytest.raises(ContentError) as refused:
        await pull(site)

    reliability_report.add(cases_tried=1)
    assert "through a symbolic link, outside the content directory; nothing was written" in str(refused.value)
    assert list(outside.iterdir()) == []
    assert content_files(site.root) == before


def content_files(root: Path) -> list[str]:
    """Everything in the content directory but ``.cmssync/`` (the state and its lock, taken before pull reads)."""
    return sorted(p.relative_to(root).as_posix() for p in root.rglob("*") if ".cmssync" not in p.parts)
