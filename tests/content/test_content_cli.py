from __future__ import annotations

from pathlib import Path

import pytest

from cmssync.cli import main

INVALID = Path(__file__).parent / "invalid"


def test_validate_the_example(example: Path, capsys: pytest.CaptureFixture[str]) -> None:
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
