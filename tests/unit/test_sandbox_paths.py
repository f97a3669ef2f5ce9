"""``--sandbox`` with a relative content directory: the sandbox's state, tokens and database land in
``DIR/.cmssync/sandbox/`` once, not in ``DIR/DIR/.cmssync/sandbox/`` (the override's paths used to be relative to
the working directory and were then taken relative to the content directory again)."""

from __future__ import annotations

from pathlib import Path

import pytest

from cmssync.cli import site_overrides
from cmssync.config import load_settings


def test_sandbox_paths_with_a_relative_content_dir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    (tmp_path / "site").mkdir()
    relative = Path("site")
    with site_overrides(relative, sandbox=True) as overrides:
        assert overrides is not None
        settings = load_settings(relative, secrets_dir=None, overrides=overrides)
        home = tmp_path / "site" / ".cmssync" / "sandbox"
        assert settings.state_path(relative) == home / "state.json"
        assert settings.resolve(relative, settings.auth.token_store) == home / "tokens.json"
        assert (home / "site.sqlite3").is_file()
        assert (home / "port").is_file()
    assert not (tmp_path / "site" / "site").exists()
