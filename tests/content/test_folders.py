"""File-manager folders by path (issue 14): sidecars say ``folder: /images``; ``folders:`` in cmssync.yaml gives each
path's id on the target site, because ids differ between sites and the API cannot look a folder up by name."""

from __future__ import annotations

from pathlib import Path

import pytest

from cmssync.config import Settings, folder_path
from cmssync.content.loader import load_content
from cmssync.errors import ContentError


@pytest.mark.parametrize(
    ("written", "path"),
    [
        ("images", "/images"),
        ("/images", "/images"),
        ("/images/", "/images"),
        ("Images/Team", "/Images/Team"),
        ("/Hero Images", "/Hero Images"),
        ("/", "/"),
        ("", "/"),
    ],
)
def test_folder_paths_have_one_written_form(written: str, path: str) -> None:
    assert folder_path(written) == path


@pytest.mark.parametrize("written", ["/images//team", "/ images", "/images /team"])
def test_a_folder_path_with_an_empty_or_padded_name_is_refused(written: str) -> None:
    with pytest.raises(ValueError, match="invalid folder path"):
        folder_path(written)


def test_settings_key_folders_by_path() -> None:
    settings = Settings.model_validate({"folders": {"images": 10, "/documents/": 11}})
    assert settings.folders == {"/images": 10, "/documents": 11}


@pytest.mark.parametrize(
    ("folders", "message"),
    [
        ({"images": 10, "/images": 11}, "both the folder /images"),
        ({"/a": 10, "/b": 10}, "folder id 10"),
        ({"/a": 0}, "greater than or equal to 1"),
    ],
)
def test_settings_refuse_ambiguous_folders(folders: dict[str, int], message: str) -> None:
    with pytest.raises(ValueError, match=message):
        Settings.model_validate({"folders": folders})


def _site(tmp_path: Path, sidecars: dict[str, str]) -> Path:
    root = tmp_path / "site"
    (root / "files").mkdir(parents=True)
    (root / "cmssync.yaml").write_text("folders:\n  /images: 12\n  /images/team: 14\n", encoding="utf-8")
    for name, sidecar in sidecars.items():
        (root / "files" / name).write_bytes(b"bytes of " + name.encode())
        (root / "files" / f"{name}.yaml").write_text(sidecar, encoding="utf-8")
    return root


def test_sidecars_name_folders_by_path(tmp_path: Path) -> None:
    root = _site(
        tmp_path,
        {
            "a.png": "folder: /images\n",
            "b.png": "folder: images\n",
            "c.png": "folder: /images/team/\n",
            "d.png": "folder: /\n",
            "e.png": "folder: 33\n",
            "f.png": "title: no folder\n",
        },
    )
    content = load_content(root)
    folders = {path: spec.folder_id for path, spec in content.files.items()}
    assert folders == {"a.png": 12, "b.png": 12, "c.png": 14, "d.png": None, "e.png": 33, "f.png": None}


def test_an_unknown_folder_path_is_located_and_names_the_known_ones(tmp_path: Path) -> None:
    root = _site(tmp_path, {"a.png": "title: A\nfolder: /Images\n"})
    with pytest.raises(ContentError) as raised:
        load_content(root)
    assert [str(problem) for problem in raised.value.problems] == [
        "files/a.png.yaml:2:9: folder: unknown folder '/Images': give its id on this site in folders: of "
        "cmssync.yaml (folders defined there: /images, /images/team)"
    ]
