"""Handles Concrete keeps on existing pages but never makes for new ones (``freshen-up-your-website``)."""

from __future__ import annotations

from pathlib import Path

import pytest

from cmssync.content.loader import load_content
from cmssync.errors import ContentError


def _site(tmp_path: Path, page: str) -> Path:
    (tmp_path / "pages" / "blog").mkdir(parents=True)
    (tmp_path / "pages" / "index.yaml").write_text("name: Home\n")
    (tmp_path / "pages" / "blog.yaml").write_text("name: Blog\n")
    (tmp_path / "pages" / "blog" / "freshen-up-your-website.yaml").write_text(page)
    return tmp_path


def test_a_page_pinned_to_an_existing_id_may_hold_a_dropped_word(tmp_path: Path) -> None:
    content = load_content(_site(tmp_path, "name: Freshen up your website\nid: 258\n"))
    assert content.pages["/blog/freshen-up-your-website"].id == 258


def test_a_page_cmssync_would_create_may_not(tmp_path: Path) -> None:
    with pytest.raises(ContentError, match=r"freshen-up-your-website\.yaml: invalid page handle .*'up'.*pin the id"):
        load_content(_site(tmp_path, "name: Freshen up your website\n"))


def test_a_page_link_to_such_a_page_is_a_valid_reference(tmp_path: Path) -> None:
    root = _site(tmp_path, "name: Freshen up your website\nid: 258\n")
    (root / "pages" / "links.yaml").write_text(
        "name: Links\nareas:\n  Main:\n    - type: content\n"
        "      value: {content: '<a href=\"${page-link:/blog/freshen-up-your-website}\">x</a>'}\n"
    )
    assert "/links" in load_content(root).pages
