"""``.pre-commit-hooks.yaml``: cmssync validate as a pre-commit hook (issue 27 item 8). The hook is read as
pre-commit reads it, and its ``entry`` plus the ``args`` a user gives is run as pre-commit would run it."""

from __future__ import annotations

import os
import shlex
import shutil
import subprocess
import sys
from pathlib import Path

from ruamel.yaml import YAML

ROOT = Path(__file__).resolve().parents[2]
EXAMPLE = ROOT / "content-example"


def hook() -> dict[str, object]:
    [found] = YAML(typ="safe").load((ROOT / ".pre-commit-hooks.yaml").read_text())
    return dict(found)


def run_entry(*args: str) -> subprocess.CompletedProcess[str]:
    entry = shlex.split(str(hook()["entry"]))
    assert entry[0] == "cmssync"  # the console script of the package pre-commit installs (language: python)
    command = [sys.executable, "-m", "cmssync", *entry[1:], *args]
    env = {k: v for k, v in os.environ.items() if not k.endswith("_PASSWORD") and not k.startswith("CMSSYNC_")}
    env["PYTHONPATH"] = str(ROOT)
    return subprocess.run(command, capture_output=True, text=True, timeout=60, check=False, env=env)


def test_the_hook_is_declared_as_pre_commit_expects() -> None:
    found = hook()
    assert {"id", "name", "entry", "language"} <= set(found)
    assert (found["id"], found["language"], found["pass_filenames"]) == ("cmssync-validate", "python", False)
    assert str(found["entry"]).startswith("cmssync validate")


def test_the_hook_passes_valid_content_without_secrets_and_fails_invalid(tmp_path: Path) -> None:
    result = run_entry(str(EXAMPLE))
    assert result.returncode == 0, result.stderr  # the example's password variables are not set here
    broken = tmp_path / "site"
    shutil.copytree(EXAMPLE, broken, ignore=shutil.ignore_patterns(".cmssync"))
    (broken / "pages/about.yaml").write_text("name: About\nareas: {Main: [{type: contnet}]}\n")
    result = run_entry(str(broken))
    assert result.returncode == 1
    assert "pages/about.yaml" in result.stderr
