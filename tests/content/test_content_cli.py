from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from cmssync.cli import main
from tests.support.sites import PASSWORDS

INVALID = Path(__file__).parent / "invalid"


def test_validate_the_example(
    example: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    for name, value in PASSWORDS.items():
        monkeypatch.setenv(name, value)
    assert main(["validate", str(example)]) == 0
    out = capsys.readouterr().out
    assert "valid (7 pages, 4 files, 2 users, 2 groups)" in out


def test_validate_an_invalid_directory(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["validate", str(INVALID / "block_field_typo")]) == 1
    err = capsys.readouterr().err
    assert "pages/index.yaml:6:9: areas.Main[0].value: unknown key 'contnet' (did you mean 'content'?)" in err
    assert "pages/index.yaml:6:9: areas.Main[0].value: missing required key 'content'" in err


def test_validate_reports_every_file_at_once(capsys: pytest.CaptureFixture[str]) -> None:
    case = INVALID / "many_problems_in_many_files"
    assert main(["validate", str(case)]) == 1
    err = capsys.readouterr().err
    for line in (case / "expected.txt").read_text(encoding="utf-8").splitlines():
        assert line in err


def test_schema_command_prints_the_schema(capsys: pytest.CaptureFixture[str]) -> None:
    import json

    assert main(["schema"]) == 0
    schema = json.loads(capsys.readouterr().out)
    assert schema["$schema"] == "https://json-schema.org/draft/2020-12/schema"
    assert {"page", "file_sidecar", "users", "groups", "settings"} <= set(schema["$defs"])


# --- issue 27 item 3: passwords, machine-readable output, annotations ------------------------------------------


def test_validate_refuses_unset_and_short_passwords(
    example: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("JANE_EDITOR_PASSWORD", raising=False)
    monkeypatch.setenv("SAM_WRITER_PASSWORD", "ab")
    assert main(["validate", str(example)]) == 1
    err = capsys.readouterr().err
    assert "users.yaml:2:3: user 'jane.editor': environment variable JANE_EDITOR_PASSWORD is not set" in err
    assert "user 'sam_writer': the password in SAM_WRITER_PASSWORD has 2 characters; the site accepts 5 to 128" in err
    assert main(["validate", str(example), "--no-secrets"]) == 0  # a job without the secrets


def test_validate_as_json_and_as_github_annotations(
    example: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("JANE_EDITOR_PASSWORD", raising=False)
    monkeypatch.setenv("SAM_WRITER_PASSWORD", "long-enough")
    assert main(["validate", str(example), "--format", "json"]) == 1
    document = json.loads(capsys.readouterr().out)
    assert document["valid"] is False
    [problem] = document["problems"]
    assert (problem["file"], problem["line"], problem["column"]) == (f"{example.as_posix()}/users.yaml", 2, 3)
    case = INVALID / "block_field_typo"
    monkeypatch.chdir(INVALID.parent)  # the workspace: GitHub attaches annotations only to paths relative to it
    assert main(["validate", str(case), "--format", "github"]) == 1
    lines = capsys.readouterr().out.splitlines()
    expected = (
        "::error file=invalid/block_field_typo/pages/index.yaml,line=6,col=9,title=cmssync validate::"
        "areas.Main[0].value: unknown key 'contnet' (did you mean 'content'?)"
    )
    assert expected in lines
    assert all(line.startswith("::error file=") for line in lines)
    monkeypatch.chdir(example)  # a directory outside the working directory keeps the path as given
    assert main(["validate", str(case), "--format", "github"]) == 1
    assert f"::error file={case.as_posix()}/pages/index.yaml,line=6" in capsys.readouterr().out
    monkeypatch.setenv("JANE_EDITOR_PASSWORD", "long-enough")
    assert main(["validate", str(example), "--format", "json"]) == 0
    assert json.loads(capsys.readouterr().out)["valid"] is True


def test_a_settings_typo_is_named_with_the_closest_setting(
    example: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """pydantic's "Extra inputs are not permitted" used to be all a typo in cmssync.yaml got."""
    root = tmp_path / "site"
    shutil.copytree(example, root, ignore=shutil.ignore_patterns(".cmssync"))
    config = root / "cmssync.yaml"
    config.write_text(config.read_text() + "prnue: {enabled: true}\non_foreign_draft: skp\n", encoding="utf-8")
    assert main(["validate", str(root), "--no-secrets"]) == 1
    err = capsys.readouterr().err
    assert "prnue: unknown setting 'prnue' (did you mean 'prune'?)" in err
    assert "on_foreign_draft: 'skp' is not one of fail, skip, merge (did you mean 'skip'?)" in err
    assert "Extra inputs" not in err


def test_many_files_with_one_problem_print_a_few_lines_and_a_count(
    example: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    root = tmp_path / "site"
    shutil.copytree(example, root, ignore=shutil.ignore_patterns(".cmssync"))
    for n in range(40):
        (root / f"pages/broken-{n}.yaml").write_text("name: Broken\ntemplate: [full]\n", encoding="utf-8")
    assert main(["validate", str(root), "--no-secrets"]) == 1
    lines = capsys.readouterr().err.splitlines()
    assert len(lines) < 15, lines
    assert "… and 35 more with the same problem: template: Input should be a valid string" in lines
    assert lines[-1] == "error: 40 problems in the content"
    assert main(["validate", str(root), "--no-secrets", "--format", "json"]) == 1
    assert len(json.loads(capsys.readouterr().out)["problems"]) == 40  # the machine formats keep every one


def test_a_blocks_field_beside_its_type_says_where_it_belongs(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (tmp_path / "pages").mkdir()
    (tmp_path / "pages" / "index.yaml").write_text(
        "name: Home\nareas:\n  Main:\n    - type: content\n      content: <p>Hi</p>\n", encoding="utf-8"
    )
    assert main(["validate", str(tmp_path)]) == 1
    err = capsys.readouterr().err
    assert (
        "pages/index.yaml:5:7: areas.Main[0]: unknown key 'content' here: a block's fields go under its value: " in err
    )
    assert "(value: {content: …})" in err
    assert "did you mean 'content'" not in err


def test_validate_of_an_empty_directory_is_no_valid_content(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["validate", str(tmp_path)]) == 1
    assert "no content to check" in capsys.readouterr().err
    (tmp_path / "cmssync.yaml").write_text("publish: approve\n", encoding="utf-8")
    assert main(["validate", str(tmp_path)]) == 0  # settings alone: valid, and said to be empty
    assert "warning: no content to check" in capsys.readouterr().err
