from __future__ import annotations

from pathlib import Path

import pytest

from cmssync.content.loader import load_content
from cmssync.content.yamlsource import ParseCache, YamlDocument, read_yaml
from cmssync.errors import ContentError


def test_an_unchanged_file_is_not_parsed_again(tmp_path: Path) -> None:
    path = tmp_path / "a.yaml"
    path.write_text("name: A\n")
    cache = ParseCache()
    first = read_yaml(path, "a.yaml", cache=cache)
    assert isinstance(first, YamlDocument)
    assert read_yaml(path, "a.yaml", cache=cache) is first
    path.write_text("name: B\n")
    changed = read_yaml(path, "a.yaml", cache=cache)
    assert isinstance(changed, YamlDocument)
    assert changed is not first
    assert changed.data["name"] == "B"


def test_loads_with_a_cache_see_every_edit(tmp_path: Path) -> None:
    (tmp_path / "pages").mkdir()
    (tmp_path / "pages/index.yaml").write_text("name: Home\n")
    (tmp_path / "pages/about.yaml").write_text("name: About\n")
    cache = ParseCache()
    assert load_content(tmp_path, parse_cache=cache).pages["/about"].name == "About"
    (tmp_path / "pages/about.yaml").write_text("name: About us\n")
    again = load_content(tmp_path, parse_cache=cache)
    assert again.pages["/about"].name == "About us"
    assert again.pages["/"].name == "Home"
    (tmp_path / "pages/about.yaml").write_text("name: [broken\n")
    with pytest.raises(ContentError, match=r"pages/about\.yaml:2:1: invalid YAML"):
        load_content(tmp_path, parse_cache=cache)
