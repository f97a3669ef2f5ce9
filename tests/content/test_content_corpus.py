"""The corpus of invalid content directories: each must fail with exactly the lines of its ``expected.txt``,
quickly (every case is a pathological input at worst, so a time bound is a fair assertion)."""

from __future__ import annotations

import os
import time
from pathlib import Path

import pytest

from cmssync.content.loader import load_content
from cmssync.content.yamlsource import ParseCache
from cmssync.errors import ContentError

CORPUS = Path(__file__).parent / "invalid"
CASES = sorted(p.name for p in CORPUS.iterdir() if p.is_dir())
TIME_LIMIT = 1.0


def problems_of(root: Path) -> tuple[list[str], float]:
    start = time.perf_counter()
    with pytest.raises(ContentError) as caught:
        load_content(root)
    elapsed = time.perf_counter() - start
    return [str(p) for p in caught.value.problems], elapsed


def test_the_corpus_is_large_enough() -> None:
    assert len(CASES) >= 40


@pytest.mark.parametrize("case", CASES)
def test_invalid_case(case: str) -> None:
    root = CORPUS / case
    expected = (root / "expected.txt").read_text(encoding="utf-8").splitlines()
    lines, elapsed = problems_of(root)
    assert lines == expected
    assert elapsed < TIME_LIMIT


@pytest.mark.parametrize("case", CASES)
def test_invalid_case_with_a_warm_parse_cache(case: str, tmp_path: Path) -> None:
    """What the cache serves (the files that are valid on their own) gives the same problems at the same places."""
    root = CORPUS / case
    expected = (root / "expected.txt").read_text(encoding="utf-8").splitlines()
    for _ in range(2):
        with pytest.raises(ContentError) as caught:
            load_content(root, parse_cache=ParseCache(directory=tmp_path))
        assert [str(p) for p in caught.value.problems] == expected


def _page(root: Path, name: str = "index.yaml", text: str = "name: Home\n") -> Path:
    path = root / "pages" / name
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    return path


def test_huge_yaml_file_is_refused_without_reading_it(tmp_path: Path) -> None:
    huge = _page(tmp_path)
    with huge.open("w", encoding="utf-8") as stream:
        stream.write("name: Home\ndescription: ")
        chunk = "x" * (1024 * 1024)
        for _ in range(50):
            stream.write(chunk)
        stream.write("\n")
    size = huge.stat().st_size
    lines, elapsed = problems_of(tmp_path)
    assert lines == [f"pages/index.yaml: file is too large ({size} bytes; a content YAML file may have at most 5 MiB)"]
    assert elapsed < TIME_LIMIT


@pytest.mark.skipif(not hasattr(os, "symlink"), reason="needs symbolic links")
def test_symlink_out_of_the_content_is_refused(tmp_path: Path) -> None:
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "secret.txt").write_text("secret", encoding="utf-8")
    (outside / "page.yaml").write_text("name: Elsewhere\n", encoding="utf-8")
    root = tmp_path / "site"
    _page(root)
    (root / "files").mkdir()
    (root / "files" / "secret.txt").symlink_to(outside / "secret.txt")
    (root / "pages" / "elsewhere.yaml").symlink_to(outside / "page.yaml")
    (root / "pages" / "linked").symlink_to(outside, target_is_directory=True)
    (root / "pages" / "dangling.yaml").symlink_to(root / "nowhere.yaml")
    lines, _ = problems_of(root)
    assert lines == [
        "files/secret.txt: symbolic link points outside the content directory",
        "pages/dangling.yaml: broken symbolic link",
        "pages/elsewhere.yaml: symbolic link points outside the content directory",
        "pages/linked: symbolic link points outside the content directory",
    ]


@pytest.mark.skipif(not hasattr(os, "symlink"), reason="needs symbolic links")
def test_symlinks_inside_the_content(tmp_path: Path) -> None:
    _page(tmp_path)
    (tmp_path / "shared").mkdir()
    (tmp_path / "shared" / "logo.png").write_bytes(b"png")
    (tmp_path / "files").mkdir()
    (tmp_path / "files" / "logo.png").symlink_to(tmp_path / "shared" / "logo.png")
    (tmp_path / "files" / "more").symlink_to(tmp_path / "shared", target_is_directory=True)
    lines, _ = problems_of(tmp_path)
    assert lines == ["files/more: symbolic links to directories are not followed"]
    (tmp_path / "files" / "more").unlink()
    content = load_content(tmp_path)
    assert content.files["logo.png"].size == 3


def test_alias_bomb_in_users_and_groups_is_quick(tmp_path: Path) -> None:
    levels = ['a: &a ["lol","lol","lol","lol","lol","lol","lol","lol","lol"]']
    levels += [f"{chr(98 + i)}: &{chr(98 + i)} [" + ",".join([f"*{chr(97 + i)}"] * 9) + "]" for i in range(12)]
    bomb = "\n".join(levels) + "\n"
    (tmp_path / "users.yaml").write_text(
        "- username: jane\n  email: jane@example.com\n  x:\n" + "".join(f"    {line}\n" for line in levels),
        encoding="utf-8",
    )
    (tmp_path / "groups.yaml").write_text(bomb, encoding="utf-8")
    lines, elapsed = problems_of(tmp_path)
    assert lines == [
        "groups.yaml:1:4: anchors and aliases (&name, *name) are not allowed in content files; write values out",
        "users.yaml:4:8: anchors and aliases (&name, *name) are not allowed in content files; write values out",
    ]
    assert elapsed < TIME_LIMIT


def test_missing_directory() -> None:
    with pytest.raises(ContentError, match="content directory not found"):
        load_content(Path("/nonexistent/cmssync/content"))
