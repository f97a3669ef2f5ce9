from __future__ import annotations

import pickle
from pathlib import Path

import pytest

from cmssync.content.loader import load_content
from cmssync.content.yamlsource import ParseCache
from cmssync.errors import ContentError
from cmssync.usercache import sign

KEY = b"k" * 32


def test_an_unchanged_file_is_not_read_again(tmp_path: Path) -> None:
    (tmp_path / "pages").mkdir()
    (tmp_path / "pages/index.yaml").write_text("name: Home\n")
    cache = ParseCache()
    first = load_content(tmp_path, parse_cache=cache)
    assert (cache.hits, cache.misses) == (0, 1)
    again = load_content(tmp_path, parse_cache=cache)
    assert (cache.hits, cache.misses) == (1, 1)
    assert again.pages["/"] == first.pages["/"]
    assert again.pages["/"] is not first.pages["/"]  # a fresh copy: locating it cannot change the first load's
    assert str(again.pages["/"].source) == "pages/index.yaml:1:1"


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


# --- the persistent cache (ParseCache(directory=...)) ----------------------------------------------------------


def site(root: Path) -> Path:
    (root / "pages").mkdir(parents=True)
    (root / "pages/index.yaml").write_text("name: Home\n")
    (root / "pages/about.yaml").write_text(
        "name: About\nareas:\n  Main:\n    - type: content\n      value: {content: <p>Hi</p>}\n"
    )
    return root


def test_a_new_process_reads_the_results_instead_of_parsing(tmp_path: Path) -> None:
    root, cache_dir = site(tmp_path / "site"), tmp_path / "state"
    first = ParseCache(directory=cache_dir, key=KEY)
    load_content(root, parse_cache=first)
    assert first.misses == 2  # the two page files
    later = ParseCache(directory=cache_dir, key=KEY)  # as a new process would
    content = load_content(root, parse_cache=later)
    assert (later.hits, later.misses) == (2, 0)
    assert content.pages["/about"].name == "About"
    assert (cache_dir / "parse-cache.pickle").stat().st_mode & 0o777 == 0o600


def test_validation_problems_keep_their_positions(tmp_path: Path) -> None:
    root, cache_dir = site(tmp_path / "site"), tmp_path / "state"
    (root / "pages/about.yaml").write_text("name: About\nareas:\n  Main:\n    - type: content\n      value: 7\n")
    messages = []
    for _ in range(2):
        with pytest.raises(ContentError) as caught:
            load_content(root, parse_cache=ParseCache(directory=cache_dir, key=KEY))
        messages.append([str(problem) for problem in caught.value.problems])
    assert messages[0] == messages[1]
    assert any(message.startswith("pages/about.yaml:5:14:") for message in messages[0]), messages[0]


def test_an_edited_file_is_parsed_again_and_the_cache_keeps_only_what_is_used(tmp_path: Path) -> None:
    root, cache_dir = site(tmp_path / "site"), tmp_path / "state"
    load_content(root, parse_cache=ParseCache(directory=cache_dir, key=KEY))
    (root / "pages/about.yaml").write_text("name: About us\n")
    edited = ParseCache(directory=cache_dir, key=KEY)
    assert load_content(root, parse_cache=edited).pages["/about"].name == "About us"
    assert (edited.hits, edited.misses) == (1, 1)
    after = ParseCache(directory=cache_dir, key=KEY)
    assert len(after.stored_keys()) == 2  # the old result of about.yaml is gone


def test_a_refused_file_is_never_cached(tmp_path: Path) -> None:
    root, cache_dir = site(tmp_path / "site"), tmp_path / "state"
    (root / "pages/about.yaml").write_text("name: &a About\n")
    caches = [ParseCache(directory=cache_dir, key=KEY), ParseCache(directory=cache_dir, key=KEY)]
    for cache in caches:
        with pytest.raises(ContentError, match=r"pages/about\.yaml:1:7: anchors and aliases"):
            load_content(root, parse_cache=cache)
    assert (caches[1].hits, caches[1].misses) == (1, 1)  # index.yaml from the cache, about.yaml refused again


def test_an_unsigned_or_foreign_or_old_cache_is_ignored(tmp_path: Path) -> None:
    root, cache_dir = site(tmp_path / "site"), tmp_path / "state"
    load_content(root, parse_cache=ParseCache(directory=cache_dir, key=KEY))
    stored = cache_dir / "parse-cache.pickle"
    other_key = ParseCache(directory=cache_dir, key=b"x" * 32)
    load_content(root, parse_cache=other_key)
    assert other_key.hits == 0
    stored.write_bytes(pickle.dumps(("cmssync 0.0.0", {}), protocol=pickle.HIGHEST_PROTOCOL))  # unsigned
    unsigned = ParseCache(directory=cache_dir, key=KEY)
    load_content(root, parse_cache=unsigned)
    assert unsigned.hits == 0
    stored.write_bytes(sign(KEY, pickle.dumps(("cmssync 0.0.0", {}), protocol=pickle.HIGHEST_PROTOCOL)))
    old = ParseCache(directory=cache_dir, key=KEY)
    load_content(root, parse_cache=old)
    assert old.hits == 0
    stored.write_bytes(b"\x80\x05garbage")
    broken = ParseCache(directory=cache_dir, key=KEY)
    assert load_content(root, parse_cache=broken).pages["/"].name == "Home"


def test_without_a_key_the_cache_stays_in_memory(tmp_path: Path) -> None:
    root, cache_dir = site(tmp_path / "site"), tmp_path / "state"
    cache = ParseCache(directory=cache_dir)
    load_content(root, parse_cache=cache)
    assert not (cache_dir / "parse-cache.pickle").exists()


def test_problems_across_files_are_placed_in_cached_files_as_in_fresh_ones(tmp_path: Path) -> None:
    root, cache_dir = site(tmp_path / "site"), tmp_path / "state"
    (root / "pages/about.yaml").write_text(
        "name: About\nid: 7\nareas:\n  Main:\n    - type: content\n      value:\n        content: |\n"
        '          <p>see</p>\n          <img src="${file:gone.png}"> <a href="${page-link:/nowhere}">x</a>\n'
    )
    (root / "pages/index.yaml").write_text("name: Home\n\nid: 7\n")
    messages = []
    caches = [ParseCache(directory=cache_dir, key=KEY) for _ in range(2)]
    for cache in caches:
        with pytest.raises(ContentError) as caught:
            load_content(root, parse_cache=cache)
        messages.append([str(problem) for problem in caught.value.problems])
    assert (caches[1].hits, caches[1].misses) == (2, 0)  # both files valid on their own, so cached
    assert (
        messages[0]
        == messages[1]
        == [
            "pages/about.yaml:2:5: id: page id 7 is also pinned by page /",
            "pages/about.yaml:9:21: areas.Main[0].value.content: ${file:gone.png}: no such file under files/",
            "pages/about.yaml:9:49: areas.Main[0].value.content: ${page-link:/nowhere}: no page /nowhere in the "
            "content or in existing_pages",
        ]
    )


def test_the_same_text_in_two_files_is_located_in_each(tmp_path: Path) -> None:
    (tmp_path / "pages").mkdir()
    for name in ("one", "two"):
        (tmp_path / f"pages/{name}.yaml").write_text("# a page\nname: Same\n")
    (tmp_path / "pages/index.yaml").write_text("name: Home\n")
    cache = ParseCache()
    for _ in range(2):
        content = load_content(tmp_path, parse_cache=cache)
        assert [str(content.pages[p].source) for p in ("/one", "/two")] == ["pages/one.yaml:2:1", "pages/two.yaml:2:1"]
    assert cache.hits == 4  # two.yaml in the first load (one.yaml's text), all three in the second


def test_a_warm_load_parses_no_file_unless_a_problem_needs_a_position(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from cmssync.content import yamlsource

    root, cache_dir = site(tmp_path / "site"), tmp_path / "state"
    load_content(root, parse_cache=ParseCache(directory=cache_dir, key=KEY))
    parsed: list[str] = []
    real = yamlsource.parse_located
    monkeypatch.setattr(yamlsource, "parse_located", lambda text, name: parsed.append(name) or real(text, name))
    load_content(root, parse_cache=ParseCache(directory=cache_dir, key=KEY))
    assert parsed == []
    (root / "pages/index.yaml").write_text("name: Home\nid: 3\n")
    (root / "pages/about.yaml").write_text("name: About\nid: 3\n")
    load_content_problems: list[list[str]] = []
    for _ in range(2):
        parsed.clear()
        with pytest.raises(ContentError) as caught:
            load_content(root, parse_cache=ParseCache(directory=cache_dir, key=KEY))
        load_content_problems.append([str(p) for p in caught.value.problems])
    assert parsed == ["pages/about.yaml"]  # only the file the problem is placed in
    assert (
        load_content_problems[1]
        == load_content_problems[0]
        == ["pages/about.yaml:2:5: id: page id 3 is also pinned by page /"]
    )
