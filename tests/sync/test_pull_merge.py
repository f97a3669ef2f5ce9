"""keep_explicit: what an existing page file states survives a pull that reads the site's (empty) values."""

from __future__ import annotations

from cmssync.sync.pull_merge import keep_explicit
from cmssync.sync.pull_page_form import PULLED_ATTRIBUTE_TYPES

PULLED = frozenset(PULLED_ATTRIBUTE_TYPES)


def test_empty_site_values_keep_the_files_keys() -> None:
    existing = {
        "name": "Old",
        "description": "Was here",
        "template": "full",
        "areas": {"Main": [{"type": "html", "value": {"content": "x"}}], "Sidebar": []},
        "attributes": {"exclude_nav": True, "meta_title": "T", "colour": 3, "hero": "img.png", "views": 5},
    }
    pulled = {"name": "New", "areas": {"Main": [{"type": "html", "value": {"content": "y"}}]}}
    types = {"exclude_nav": "boolean", "meta_title": "text", "colour": "select", "views": "number"}
    merged = keep_explicit(existing, pulled, types, PULLED)
    assert merged == {
        "name": "New",
        "description": "",
        "areas": {"Main": [{"type": "html", "value": {"content": "y"}}], "Sidebar": []},
        "attributes": {"exclude_nav": False, "meta_title": "", "colour": 3, "hero": "img.png"},
    }


def test_content_only_keys_stay_and_site_values_win() -> None:
    existing = {"name": "A", "id": 7, "protect": True, "ignore": {"fields": ["name"]}, "on_conflict": "site_wins"}
    pulled = {"name": "B", "description": "From the site"}
    merged = keep_explicit(existing, pulled, {}, PULLED)
    assert merged == {
        "name": "B",
        "description": "From the site",
        "id": 7,
        "protect": True,
        "ignore": {"fields": ["name"]},
        "on_conflict": "site_wins",
    }


def test_no_existing_file_changes_nothing() -> None:
    pulled = {"name": "B"}
    assert keep_explicit(None, pulled, {}, PULLED) is pulled
    assert keep_explicit(["not", "a", "page"], pulled, {}, PULLED) is pulled
