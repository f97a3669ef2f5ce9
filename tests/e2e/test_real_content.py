"""Content that came from a real site survives pull → edit → apply with every link and image intact (issue 14).

The sandbox is seeded with the recorded ``atomik_full`` site (``blocks.jsonl``: its layouts, containers, gallery
and 36 files with their numeric ids). An editor's content block — a page link, a download link by UUID, a picture
by numeric id — and an image block are added to ``/about/services``, whose ``Main`` holds a layout. Then cmssync
pulls, one content block is edited, cmssync applies, and the **stored** values (the emulator's block table, not the
API's export form, which would look right even when a broken export string was stored) must still point at every
target; the layout and the home page's gallery must be the very same blocks; the next plan must be empty.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from ruamel.yaml import YAML

from cmssync.emulator.embedded import Sandbox
from tests.realsite.harness import RawApi, SiteAccess, run_cmssync, write_settings
from tests.support.atomik import atomik_sandbox

PAGE = "/about/services"
LINKED = "/about/faq"


@pytest.fixture
def atomik(sandbox_server: Sandbox, tmp_path: Path) -> Iterator[tuple[SiteAccess, dict[str, Any]]]:
    with atomik_sandbox(sandbox_server, tmp_path) as (site, numeric):
        yield site, {"numeric": numeric}


def stored_blocks(sandbox: Sandbox, page_id: int) -> list[tuple[str, int, str, dict[str, str] | None]]:
    """``(area, block id, type, stored record)`` of the page's live version, from the emulator's own tables."""
    store = sandbox._emu.store  # the stored form is not visible through the API (it exports every read)
    live = store.one("SELECT id FROM versions WHERE page_id = ? AND is_approved = 1", page_id)
    assert live is not None
    rows = store.all(
        "SELECT p.area, b.id, b.type, b.record FROM placements p JOIN blocks b ON b.id = p.block_id "
        "WHERE p.page_id = ? AND p.version_id = ? ORDER BY p.area, p.position",
        page_id,
        live["id"],
    )
    return [(r["area"], int(r["id"]), str(r["type"]), json.loads(r["record"]) if r["record"] else None) for r in rows]


def test_pull_edit_apply_keeps_links_pictures_image_and_kept_blocks(
    atomik: tuple[SiteAccess, dict[str, Any]], sandbox_server: Sandbox, tmp_path: Path
) -> None:
    site, facts = atomik
    api = RawApi(site)
    try:
        tree = api.tree()
        files = api.files()
        pdf = next(f for f in files if str(f["url"]).endswith(".pdf"))
        jpg = next(f for f in files if str(f["url"]).endswith(".jpg") and str(f["id"]).lower() in facts["numeric"])
        pdf_uuid, jpg_number = str(pdf["id"]).lower(), facts["numeric"][str(jpg["id"]).lower()]
        editor_html = (
            f'<p>Editor links: <a href="{{CCM:CID_{tree[LINKED]}}}">the FAQ</a> and '
            f'<a href="{{CCM:FID_DL_{pdf_uuid}}}">the brochure</a>.</p>'
            f'<p><concrete-picture fID="{jpg_number}" alt="A picture" /></p>'
        )
        page_id = tree[PAGE]
        api.add_block(page_id, "Main", "content", {"content": editor_html})
        api.add_block(page_id, "Main", "image", {"fID": str(jpg_number), "altText": "An image"})
        api.approve(page_id)
        before = stored_blocks(sandbox_server, page_id)
        home_before = stored_blocks(sandbox_server, tree["/"])
    finally:
        api.close()
    layouts = [(block_id, kind) for _, block_id, kind, _ in before if kind in ("core_area_layout", "core_container")]
    assert layouts, "the seeded page has no layout"

    directory = tmp_path / "site"
    write_settings(directory, site)
    pull = run_cmssync(site, directory, "pull")
    assert pull.code == 0, pull.output
    assert re.search(rf"note: page {PAGE}: kept as placeholders .*core_area_layout 100 \(the API reads", pull.output)
    page_file = directory / "pages" / "about" / "services.yaml"
    written = page_file.read_text(encoding="utf-8")
    assert "${page-link:/about/faq}" in written
    assert re.search(r"\$\{file-link:[^}]+\.pdf\}", written)
    assert re.search(r'fID="\$\{file-id:[^}]+\.jpg\}"', written)
    assert re.search(r"fID: \$\{file-id:[^}]+\.jpg\}", written)
    assert "{ccm:export:" not in written
    main = YAML(typ="safe").load(written)["areas"]["Main"]
    kept = [(item["keep"]["id"], item["keep"]["type"]) for item in main if "keep" in item]
    assert kept == [(bid, kind) for area, bid, kind, _ in before if area == "Main" and (bid, kind) in layouts]
    assert any(" : " in area for area in YAML(typ="safe").load(written)["areas"])  # sub-areas are pulled as areas

    first = run_cmssync(site, directory, "plan", "--detailed-exitcode")
    assert first.code == 0, first.output

    page_file.write_text(written.replace("Editor links:", "Edited links:"), encoding="utf-8")
    apply = run_cmssync(site, directory, "apply", "--yes")
    assert apply.code == 0, apply.output

    after = stored_blocks(sandbox_server, page_id)
    contents = [record for _, _, kind, record in after if kind == "content" and record]
    edited = next(r["content"] for r in contents if "Edited links:" in r["content"])
    assert f"{{CCM:CID_{tree[LINKED]}}}" in edited
    assert f"{{CCM:FID_DL_{pdf_uuid}}}" in edited
    assert re.search(rf'<concrete-picture fid="{jpg_number}"\s+alt="A picture"\s*/>', edited), edited
    assert "{ccm:export:" not in edited
    images = [record for _, _, kind, record in after if kind == "image" and record]
    assert [r["fID"] for r in images] == [str(jpg_number)]
    # Every block but the edited one is the very same block, with the same stored record; sub-areas included.
    unchanged_before = {(bid, kind, json.dumps(rec)) for _, bid, kind, rec in before if kind != "content"}
    unchanged_after = {(bid, kind, json.dumps(rec)) for _, bid, kind, rec in after if kind != "content"}
    assert unchanged_before == unchanged_after
    assert len(after) == len(before)
    api = RawApi(site)
    try:
        assert stored_blocks(sandbox_server, tree["/"]) == home_before  # the gallery page was not touched
    finally:
        api.close()

    second = run_cmssync(site, directory, "plan", "--detailed-exitcode")
    assert second.code == 0, second.output
