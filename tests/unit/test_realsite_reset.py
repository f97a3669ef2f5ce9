"""The real-site suite resets the instance its env file names, never the default one (issue 36, smaller items)."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.realsite.harness import read_env_file, reset_environment


def test_the_reset_script_gets_the_tested_sites_directory_and_database(tmp_path: Path) -> None:
    env_file = tmp_path / "site-8092.env"
    env_file.write_text(
        "CONCRETE_BASE=http://127.0.0.1:8092\nCONCRETE_SITE_DIR=/srv/s8092\n"
        'CONCRETE_DB="mysql -uconcrete -pconcrete-db-pw -h127.0.0.1 s8092"\n',
        encoding="utf-8",
    )
    env = reset_environment(read_env_file(env_file))
    assert (env["SITE_DIR"], env["DB_NAME"]) == ("/srv/s8092", "s8092")


def test_an_env_file_without_them_leaves_the_callers_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("SITE_DIR", "/srv/mine")
    monkeypatch.delenv("DB_NAME", raising=False)
    env = reset_environment({"CONCRETE_BASE": "http://127.0.0.1:8090"})
    assert env["SITE_DIR"] == "/srv/mine"
    assert "DB_NAME" not in env
