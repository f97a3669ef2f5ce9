"""One rule maps a content file to the object it defines: the loader and the daemon's watch scope agree."""

from __future__ import annotations

from pathlib import Path

import pytest

from cmssync.content.loader import load_content
from cmssync.content.paths import page_file_names, page_named, page_path_of
from cmssync.plan.scope import scope_for_paths
from cmssync.plan.scope_model import Scope

PAGE = "name: A page\n"

#: file under the content directory -> the page path it defines (None: not a page; the loader reports it)
CASES = [
    ("pages/index.yaml", "/"),
    ("pages/x.yaml", "/x"),
    ("pages/x/index.yaml", "/x"),
    ("pages/x/y.yaml", "/x/y"),
    ("pages/x/y/index.yaml", "/x/y"),
    ("pages/x.yml", None),
    ("pages/Bad_Name.yaml", None),
]


@pytest.mark.parametrize(("name", "expected"), CASES)
def test_the_loader_and_the_watch_scope_agree(tmp_path: Path, name: str, expected: str | None) -> None:
    (tmp_path / "pages").mkdir()
    if name != "pages/index.yaml":
        (tmp_path / "pages" / "index.yaml").write_text("name: Home\n")
    for parent in (expected or "").strip("/").split("/")[:-1]:  # parents of nested pages must exist
        (tmp_path / "pages" / f"{parent}.yaml").write_text(PAGE)
    target = tmp_path / name
    target.parent.mkdir(parents=True, exist_ok=True)
    target.write_text(PAGE)
    scope = scope_for_paths([name])
    if expected is None:
        assert scope is None  # a full run, which reports the file
        with pytest.raises(ValueError, match="page"):
            page_path_of(name)
        return
    assert expected in load_content(tmp_path).pages
    assert scope == Scope(pages=frozenset({expected}))
    assert page_path_of(name) == expected
    assert name in page_file_names(expected)


@pytest.mark.parametrize(
    "name",
    [".git/config", "pages/.draft.yaml", "pages/.hidden/x.yaml", "files/.DS_Store"],
)
def test_dotfiles_are_not_content(tmp_path: Path, name: str) -> None:
    assert scope_for_paths([name]) == Scope()


@pytest.mark.parametrize(
    ("name", "scope"),
    [
        ("files/logo.png", Scope(files=frozenset({"logo.png"}))),
        ("files/img/logo.png.yaml", Scope(files=frozenset({"img/logo.png"}))),
        ("users.yaml", Scope(all_users=True)),
        ("users/editors.yaml", Scope(all_users=True)),
        ("groups.yaml", Scope(kinds=frozenset({"group:*"}))),
        ("cmssync.yaml", None),
        ("users.yml", None),
        ("README.md", None),
    ],
)
def test_the_scope_of_other_files(name: str, scope: Scope | None) -> None:
    assert scope_for_paths([name]) == scope


def test_messages_name_a_stack_by_its_handle_and_a_page_by_its_path() -> None:
    assert page_named("/!stacks/footer") == "stack footer"
    assert page_named("/about") == "page /about"
    assert page_named("/") == "page /"
