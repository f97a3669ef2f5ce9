"""A list kind of the content (users, groups, …) is one module of ``cmssync.content.lists``, found by listing the
package: the layout, the reader, the loader's duplicate checks, the digest, the summary, the JSON Schema and the
writer take a module added there without any other edit (issue 33: a kind's content lives with the kind)."""

from __future__ import annotations

import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

import cmssync.commands.validate
import cmssync.sync.pull_config
import cmssync.sync.pulled_changes
from cmssync.content import lists
from cmssync.content.loader import load_content
from cmssync.content.schema import content_schema, file_kinds, schema_for
from cmssync.content.writer import write_content
from cmssync.errors import ContentError

IMPORTED_FIRST = (cmssync.commands.validate, cmssync.sync.pull_config, cmssync.sync.pulled_changes)
"""Modules whose constants name the list kinds, made at import: imported before the fixture adds a kind, so the
kind it adds for one test is in none of them."""

BADGE = """
from cmssync.content.fields import LocatedSpec, Name
from cmssync.content.lists.kind import ListKind


class BadgeSpec(LocatedSpec):
    title: Name
    colour: str = "grey"


KIND = ListKind("badge", "badges", BadgeSpec, "title", rank=2, unique=(("badge", "title"),))
"""


@pytest.fixture
def badges(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """A ``badge`` list kind as a module of the package (``badges.yaml`` and/or ``badges/*.yaml``)."""
    package = tmp_path / "modules"
    package.mkdir()
    (package / "badge.py").write_text(BADGE, encoding="utf-8")
    monkeypatch.setattr(lists, "__path__", [*lists.__path__, str(package)])
    lists.list_kinds.cache_clear()
    yield
    lists.list_kinds.cache_clear()
    sys.modules.pop("cmssync.content.lists.badge", None)


def test_the_built_in_list_kinds_are_found_in_order() -> None:
    assert [(kind.name, kind.file) for kind in lists.list_kinds()] == [("user", "users.yaml"), ("group", "groups.yaml")]
    assert lists.content_dirs() == ("pages", "stacks", "files", "users", "groups")


@pytest.mark.usefixtures("badges")
def test_a_list_kind_added_as_a_module_is_loaded_checked_described_and_written(tmp_path: Path) -> None:
    root = tmp_path / "site"
    (root / "badges").mkdir(parents=True)
    (root / "pages").mkdir()
    (root / "pages" / "index.yaml").write_text("name: Home\n", encoding="utf-8")
    (root / "badges.yaml").write_text("- title: Gold\n  colour: yellow\n", encoding="utf-8")
    (root / "badges" / "more.yaml").write_text("- title: Silver\n", encoding="utf-8")
    content = load_content(root)
    assert {key: spec.model_dump() for key, spec in content.of("badge").items()} == {
        "Gold": {"title": "Gold", "colour": "yellow"},
        "Silver": {"title": "Silver", "colour": "grey"},
    }
    assert content.summary() == "1 page, 0 files, 0 users, 0 groups, 2 badges"
    assert "badges" in content.canonical()
    assert file_kinds()[-2:] == ("badges", "settings")
    assert "badges" in content_schema()["$defs"]
    assert schema_for("badges")["title"] == "cmssync badges (badges.yaml, badges/*.yaml)"

    copy = tmp_path / "copy"
    write_content(content, copy)
    assert (copy / "badges.yaml").read_text(
        encoding="utf-8"
    ) == "  - title: Gold\n    colour: yellow\n  - title: Silver\n"
    assert load_content(copy).digest() == content.digest()

    (root / "badges" / "more.yaml").write_text("- title: gold\n", encoding="utf-8")
    (root / "badges" / "notes.txt").write_text("x", encoding="utf-8")
    with pytest.raises(ContentError) as raised:
        load_content(root)
    assert [(p.file, p.message) for p in raised.value.problems] == [
        ("badges/more.yaml", "duplicate badge 'gold' (first at badges.yaml:1:3)"),
        ("badges/notes.txt", "badges/ holds only .yaml files"),
    ]
