from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from cmssync.content.files import HashCache
from cmssync.content.loader import load_content
from cmssync.content.models import RawBlock, block_model
from cmssync.content.passwords import resolve_password
from cmssync.content.text import FileUrlRef
from cmssync.errors import ContentError
from tests.support.files import write_files


def test_the_example_loads(example: Path) -> None:
    content = load_content(example)
    assert content.summary() == "7 pages, 4 files, 2 users, 2 groups"
    assert list(content.pages) == [
        "/",
        "/about",
        "/about/team",
        "/contact",
        "/services",
        "/services/consulting",
        "/services/training",
    ]
    assert set(content.files) == {
        "documents/brochure.pdf",
        "documents/price-list.txt",
        "images/logo.png",
        "images/team-photo.png",
    }
    assert set(content.users) == {"jane.editor", "sam_writer"}
    assert set(content.of("group")) == {"Content Team", "Reviewers"}
    home = content.pages["/"]
    assert home.source is not None
    assert home.source.file == "pages/index.yaml"
    kinds = [type(block) for block in home.areas["Main"]]
    expected = [block_model(handle) for handle in ("page_title", "content", "horizontal_rule")]
    assert kinds == [*expected, type(home.areas["Main"][3])]
    block = home.areas["Main"][1]
    assert isinstance(block, block_model("content"))
    assert block.value.content.references == (FileUrlRef("images/logo.png"),)
    assert isinstance(content.pages["/contact"].areas["Main"][1], RawBlock)
    logo = content.files["images/logo.png"]
    assert (logo.folder_id, logo.meta.attributes.width) == (10, 16)
    assert content.files["documents/price-list.txt"].folder_id == 11
    assert content.pages["/about"].attributes["is_featured"] is True


def test_page_paths_come_from_file_places(tmp_path: Path) -> None:
    write_files(
        tmp_path,
        {
            "pages/index.yaml": "name: Home\n",
            "pages/about/index.yaml": "name: About\n",
            "pages/about/team.yaml": "name: Team\n",
            "pages/x-y-2.yaml": "name: Odd\n",
        },
    )
    assert list(load_content(tmp_path).pages) == ["/", "/about", "/about/team", "/x-y-2"]


def test_existing_pages_may_be_parents(tmp_path: Path) -> None:
    write_files(
        tmp_path,
        {
            "cmssync.yaml": "existing_pages: [/blog]\n",
            "pages/blog/first-post.yaml": "name: First\ndescription: ${page-id:/blog}\n",
        },
    )
    content = load_content(tmp_path)
    assert list(content.pages) == ["/blog/first-post"]


def test_hidden_entries_and_other_top_level_files_are_ignored(tmp_path: Path) -> None:
    write_files(
        tmp_path,
        {
            "README.md": "# my site\n",
            ".git/config.yaml": "anything: [",
            ".cmssync/state.json": "{}",
            "pages/.draft.yaml": "not: valid: yaml",
            "files/.DS_Store": b"\0",
            "notes/todo.txt": "not content",
        },
    )
    assert load_content(tmp_path).summary() == "0 pages, 0 files, 0 users, 0 groups"


def test_users_and_groups_from_directories(tmp_path: Path) -> None:
    write_files(
        tmp_path,
        {
            "users.yaml": "- {username: jane, email: jane@example.com}\n",
            "users/team.yaml": "- {username: sam_writer, email: sam@example.com, password: '${env:SAM}'}\n",
            "groups/all.yaml": "- name: Editors 2\n",
            "groups.yaml": "",
        },
    )
    content = load_content(tmp_path)
    assert list(content.users) == ["jane", "sam_writer"]
    assert list(content.of("group")) == ["Editors 2"]
    assert content.summary() == "0 pages, 0 files, 2 users, 1 group"


def test_resolve_password(example: Path) -> None:
    jane = load_content(example).users["jane.editor"]
    assert resolve_password(jane, {"JANE_EDITOR_PASSWORD": "s3cret!"}) == "s3cret!"
    with pytest.raises(ContentError) as caught:
        resolve_password(jane, {})
    assert [str(p) for p in caught.value.problems] == [
        "users.yaml:2:3: user 'jane.editor': environment variable JANE_EDITOR_PASSWORD is not set"
    ]


def test_digest_ignores_layout_but_not_values(tmp_path: Path, example: Path) -> None:
    site = tmp_path / "site"
    shutil.copytree(example, site)
    before = load_content(site).digest()
    about = site / "pages" / "about.yaml"
    about.write_text("# a comment\n" + about.read_text(encoding="utf-8"), encoding="utf-8")
    assert load_content(site).digest() == before
    about.write_text(about.read_text(encoding="utf-8").replace("Who we are", "Who we were"), encoding="utf-8")
    changed = load_content(site).digest()
    assert changed != before
    (site / "files" / "images" / "logo.png").write_bytes(b"another logo")
    assert load_content(site).digest() != changed


def test_hash_cache_skips_unchanged_files(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    root = write_files(tmp_path / "site", {"files/a.txt": "alpha", "files/b.txt": "beta"})
    cache = tmp_path / "cache" / "hashes.json"
    first = load_content(root, hash_cache=cache)
    stored = json.loads(cache.read_text(encoding="utf-8"))
    assert len(stored["files"]) == 2

    hashed: list[Path] = []
    original = HashCache.sha256

    def counting(self: HashCache, path: Path) -> tuple[int, str]:
        before = self.changed
        result = original(self, path)
        if self.changed and not before:
            hashed.append(path)
        return result

    monkeypatch.setattr(HashCache, "sha256", counting)
    second = load_content(root, hash_cache=cache)
    assert hashed == []
    assert second.files == first.files
    (root / "files" / "b.txt").write_text("beta, longer", encoding="utf-8")
    third = load_content(root, hash_cache=cache)
    assert [p.name for p in hashed] == ["b.txt"]
    assert third.files["b.txt"].sha256 != first.files["b.txt"].sha256


def test_unreadable_hash_cache_is_ignored(tmp_path: Path) -> None:
    root = write_files(tmp_path / "site", {"files/a.txt": "alpha"})
    cache = tmp_path / "hashes.json"
    cache.write_text("{not json", encoding="utf-8")
    content = load_content(root, hash_cache=cache)
    assert content.files["a.txt"].sha256 == "8ed3f6ad685b959ead7022518e1af76cd816f8e8ec7ccdda1ed4018e8f2223f8"
    assert json.loads(cache.read_text(encoding="utf-8"))["version"] == 1


def test_no_cache_is_written_by_default(tmp_path: Path) -> None:
    root = write_files(tmp_path, {"files/a.txt": "alpha"})
    load_content(root)
    assert sorted(p.relative_to(root).as_posix() for p in root.rglob("*")) == ["files", "files/a.txt"]


def test_settings_problems_are_reported_with_content_problems(tmp_path: Path) -> None:
    write_files(
        tmp_path,
        {
            "cmssync.yaml": "concurrency: many\n",
            "pages/index.yaml": "name: Home\nareas: {Main: [{type: html}]}\n",
        },
    )
    with pytest.raises(ContentError) as caught:
        load_content(tmp_path)
    assert [str(p) for p in caught.value.problems] == [
        "cmssync.yaml:1:14: concurrency: Input should be a valid integer, unable to parse string as an integer",
        "pages/index.yaml:2:16: areas.Main[0]: missing required key 'value'",
    ]
