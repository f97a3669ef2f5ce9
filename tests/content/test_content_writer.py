from __future__ import annotations

import shutil
from pathlib import Path
from typing import Any

from cmssync.content.lists import list_kind
from cmssync.content.lists.group import GroupSpec
from cmssync.content.loader import load_content
from cmssync.content.models import PageSpec
from cmssync.content.writer import page_file, write_content, write_list, write_page, write_sidecar


def test_writing_the_loaded_example_changes_only_layout(tmp_path: Path, example: Path) -> None:
    site = tmp_path / "site"
    shutil.copytree(example, site)
    content = load_content(site)
    write_content(content, site)
    again = load_content(site)
    assert again.digest() == content.digest()
    assert again.pages == content.pages
    # in-place editing keeps comments and the flow style of unchanged values
    about = (site / "pages" / "about.yaml").read_text(encoding="utf-8")
    assert "Sidebar: []   # managed, and kept empty" in about
    home = (site / "pages" / "index.yaml").read_text(encoding="utf-8")
    assert home.startswith("# The home page")


def test_writing_into_an_empty_directory(tmp_path: Path, example: Path) -> None:
    content = load_content(example)
    target = tmp_path / "copy"
    target.mkdir()
    shutil.copy(example / "cmssync.yaml", target / "cmssync.yaml")
    write_content(content, target)
    copy = load_content(target)
    assert copy.digest() == content.digest()
    assert (target / "files" / "images" / "logo.png").read_bytes() == (
        example / "files" / "images" / "logo.png"
    ).read_bytes()


def test_an_edit_keeps_comments_and_changes_only_what_differs(tmp_path: Path) -> None:
    path = tmp_path / "pages" / "about.yaml"
    path.parent.mkdir(parents=True)
    path.write_text(
        "# About page\nname: About   # shown in the menu\ndescription: 'Old text'\nareas:\n"
        "  Main:\n    - type: html   # raw\n      value: {content: <hr>}\n",
        encoding="utf-8",
    )
    spec = PageSpec.model_validate(
        {
            "name": "About",
            "description": "New text",
            "areas": {"Main": [{"type": "html", "value": {"content": "<hr>"}}]},
        }
    )
    write_page(tmp_path, "/about", spec)
    assert path.read_text(encoding="utf-8") == (
        "# About page\nname: About   # shown in the menu\ndescription: 'New text'\nareas:\n"
        "  Main:\n    - type: html   # raw\n      value: {content: <hr>}\n"
    )


def test_multiline_text_is_written_as_a_literal_block(tmp_path: Path) -> None:
    spec = PageSpec.model_validate({"name": "Home", "description": "line one\nline two\n"})
    write_page(tmp_path, "/", spec)
    text = (tmp_path / "pages" / "index.yaml").read_text(encoding="utf-8")
    assert text == "name: Home\ndescription: |\n  line one\n  line two\n"


def test_page_file_prefers_an_existing_index_form(tmp_path: Path) -> None:
    (tmp_path / "pages" / "about").mkdir(parents=True)
    assert page_file(tmp_path, "/about") == tmp_path / "pages" / "about.yaml"
    (tmp_path / "pages" / "about" / "index.yaml").write_text("name: About\n", encoding="utf-8")
    assert page_file(tmp_path, "/about") == tmp_path / "pages" / "about" / "index.yaml"
    assert page_file(tmp_path, "/") == tmp_path / "pages" / "index.yaml"


def test_default_sidecar_is_not_written(tmp_path: Path) -> None:
    from cmssync.content.models import FileSidecar

    assert write_sidecar(tmp_path, "a.txt", FileSidecar()) is None
    assert not (tmp_path / "files").exists()


def test_groups_are_written_as_a_list(tmp_path: Path) -> None:
    groups = list_kind("group")
    assert groups is not None
    write_list(tmp_path, groups, [GroupSpec(name="Content Team"), GroupSpec(name="Reviewers")])
    assert (tmp_path / "groups.yaml").read_text(encoding="utf-8") == "  - name: Content Team\n  - name: Reviewers\n"


def test_a_block_removed_in_the_middle_leaves_the_later_blocks_as_written(tmp_path: Path) -> None:
    # Seen on a real site: an editor deleted a layout; the next pull merged every later block into its neighbour's
    # text (the placeholder after it turned into a block mapping, comments moved to the wrong block).
    path = tmp_path / "pages" / "index.yaml"
    path.parent.mkdir(parents=True)
    head = "name: Home\nareas:\n  Main:\n    - keep: {type: core_container, id: 45}\n"
    rest = (
        "    - type: html   # the banner\n      value: {content: '<hr>'}\n"
        "    - keep: {type: core_container, id: 55}\n    - keep: {type: gallery, id: 62}   # photos\n"
    )
    path.write_text(head + "    - keep: {type: core_area_layout, id: 49}\n" + rest, encoding="utf-8")
    blocks: list[dict[str, Any]] = [
        {"keep": {"type": "core_container", "id": 45}},
        {"type": "html", "value": {"content": "<hr>"}},
        {"keep": {"type": "core_container", "id": 55}},
        {"keep": {"type": "gallery", "id": 62}},
    ]
    write_page(tmp_path, "/", PageSpec.model_validate({"name": "Home", "areas": {"Main": blocks}}))
    assert path.read_text(encoding="utf-8") == head + rest
