"""Planning pages that hold ``- keep:`` placeholders, links in export form, and layout sub-areas."""

from __future__ import annotations

import hashlib
from pathlib import Path

from cmssync.plan.planner import PlanOptions, plan
from cmssync.plan.snapshot import LiveFile
from cmssync.state.records import FileRecord, State
from tests.sync.sitebuilder import BASE, page, snapshot, write_content

LAYOUT_PAGE = """name: Services
areas:
  Main:
    - type: content
      value: {content: <p>Intro</p>}
    - keep: {type: core_area_layout, id: 104}
    - type: content
      value: {content: <p>Outro</p>}
"""


def options(**kwargs: object) -> PlanOptions:
    return PlanOptions(base_url=BASE, **kwargs)  # type: ignore[arg-type]


def live_services(intro: str = "<p>Intro</p>") -> object:
    return page(
        5,
        "/services",
        "Services",
        areas={
            "Main": [
                (100, "content", {"content": intro}),
                (104, "core_area_layout", {}),
                (105, "content", {"content": "<p>Outro</p>"}),
            ],
            "Main : 13 : Column 1": [(106, "content", {"content": "<p>inside the layout</p>"})],
        },
    )


def test_a_kept_layout_and_its_sub_areas_plan_nothing(tmp_path: Path) -> None:
    content = write_content(tmp_path, {"pages/services.yaml": LAYOUT_PAGE})
    assert plan(content, snapshot(live_services()), State(), options()).actions == ()  # type: ignore[arg-type]


def test_an_edit_next_to_a_kept_block_updates_only_the_edited_block(tmp_path: Path) -> None:
    content = write_content(tmp_path, {"pages/services.yaml": LAYOUT_PAGE})
    result = plan(content, snapshot(live_services("<p>Old</p>")), State(), options())  # type: ignore[arg-type]
    [action] = result.actions
    assert [(b.op, b.block_id, b.position) for b in action.blocks] == [("update", 100, 0)]


def test_a_placeholder_whose_block_is_gone_is_a_warning_not_a_re_create(tmp_path: Path) -> None:
    text = LAYOUT_PAGE.replace("id: 104", "id: 999")
    content = write_content(tmp_path, {"pages/services.yaml": text})
    result = plan(content, snapshot(live_services()), State(), options())  # type: ignore[arg-type]
    [action] = result.actions
    assert [(b.op, b.block_type) for b in action.blocks] == [("delete", "core_area_layout")]
    assert any("kept block 999" in w and "cannot re-create" in w for w in result.warnings)
    assert any("sub-areas behind" in w for w in result.warnings)


def test_a_new_block_before_a_kept_block_is_refused_with_a_warning(tmp_path: Path) -> None:
    text = LAYOUT_PAGE.replace("    - keep:", "    - type: html\n      value: {content: <hr>}\n    - keep:")
    content = write_content(tmp_path, {"pages/services.yaml": text})
    result = plan(content, snapshot(live_services()), State(), options())  # type: ignore[arg-type]
    assert result.actions == ()
    assert any("area Main" in w and "only appends" in w for w in result.warnings)


def test_links_in_export_form_compare_equal_to_references(tmp_path: Path) -> None:
    """A pulled block (references) against the API's read of what Concrete stores (export forms): no change."""
    text = (
        "name: Links\nareas:\n  Main:\n    - type: content\n      value:\n        content: "
        '\'<a href="${page-link:/services}">s</a> <a href="${file-link:doc.pdf}">d</a> '
        '<concrete-picture fID="${file-id:photo.png}" alt="x" />\'\n'
        "    - type: image\n      raw: true\n      value: {fID: '${file-id:photo.png}', altText: y}\n"
    )
    content = write_content(
        tmp_path,
        {
            "pages/links.yaml": text,
            "pages/services.yaml": LAYOUT_PAGE,
            "files/doc.pdf": b"%PDF-1.4",
            "files/photo.png": b"\x89PNG",
        },
    )
    photo, doc = (
        LiveFile(
            id=uuid,
            name=name,
            url=f"{BASE}/application/files/{prefix}/9544/9601/{name}",
            title=name,
            description="",
            tags=(),
            folder=None,
            size=size,
        )
        for uuid, name, prefix, size in (
            ("cf562ba1-61cb-43dd-82f5-abdfba51ac5b", "photo.png", "2117", 4),
            ("9be82082-28a0-4b22-9f0d-f2e16a5e027f", "doc.pdf", "9917", 8),
        )
    )
    read = (
        '<a href="{ccm:export:page:/services}">s</a> <a href="{ccm:export:file:801795448857:laptops-01.jpg}">d</a> '
        '<concrete-picture alt="x" file="211795449601:photo.png" />'
    )
    live = page(
        9,
        "/links",
        "Links",
        areas={
            "Main": [
                (200, "content", {"content": read}),
                (201, "image", {"fID": "{ccm:export:file:211795449601:photo.png}", "altText": "y", "cropImage": "0"}),
            ]
        },
    )
    state = State()
    for file, path, data in ((photo, "photo.png", b"\x89PNG"), (doc, "doc.pdf", b"%PDF-1.4")):
        sha = "sha256:" + hashlib.sha256(data).hexdigest()
        state.record_file(path, FileRecord(id=file.id, hash=sha, url=file.url, folder=None, digest=sha))
    result = plan(content, snapshot(live, live_services(), files=(photo, doc)), state, options())  # type: ignore[arg-type]
    assert [a for a in result.actions if a.kind == "page"] == []
