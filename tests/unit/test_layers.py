from __future__ import annotations

from pathlib import Path

import pytest

from tests.layering import check_tree

PACKAGE = Path(__file__).resolve().parents[2] / "cmssync"


def test_the_package_respects_its_layers() -> None:
    violations = check_tree(PACKAGE)
    assert violations == [], "\n".join(str(v) for v in violations)


@pytest.mark.parametrize(
    ("module", "source", "fragment"),
    [
        ("api/client.py", "from cmssync.sync import planner\n", "layer api may not import the higher layer sync"),
        ("content/loader.py", "import cmssync.daemon.watch\n", "layer content may not import the higher layer"),
        ("config.py", "from cmssync.api import client\n", "layer base may not import the higher layer api"),
        ("sync/planner.py", "from cmssync.api.models import Page\n", "pure"),
        ("sync/report.py", "from ..api import errors\n", "pure"),
        ("emulator/app.py", "from cmssync.api.models import Page\n", "the emulator imports nothing"),
        ("emulator/app.py", "from cmssync import errors\n", "the emulator imports nothing"),
        ("sync/apply.py", "from cmssync.emulator import embedded\n", "only the CLI may start"),
        ("daemon/run.py", "from cmssync.cli import main\n", "layer daemon may not import the higher layer cli"),
    ],
)
def test_a_forbidden_import_is_caught(tmp_path: Path, module: str, source: str, fragment: str) -> None:
    root = tmp_path / "cmssync"
    target = root / module
    target.parent.mkdir(parents=True, exist_ok=True)
    target.write_text(source)
    violations = check_tree(root)
    assert len(violations) == 1
    assert fragment in str(violations[0])
    assert str(violations[0]).startswith(f"cmssync/{module}:1: imports ")


@pytest.mark.parametrize(
    ("module", "source"),
    [
        ("cli.py", "from cmssync.emulator.embedded import Sandbox\nfrom cmssync.sync import apply\n"),
        ("sync/apply.py", "from cmssync.api.client import Client\nfrom cmssync.content import loader\n"),
        ("sync/planner.py", "from cmssync.content.models import Page\nfrom . import blocks\n"),
        ("api/client.py", "from cmssync.errors import ApiError\nfrom .models import Page\n"),
        ("emulator/app.py", "from cmssync.emulator import store\nfrom .faults import Faults\n"),
    ],
)
def test_an_allowed_import_passes(tmp_path: Path, module: str, source: str) -> None:
    target = tmp_path / "cmssync" / module
    target.parent.mkdir(parents=True, exist_ok=True)
    target.write_text(source)
    assert check_tree(tmp_path / "cmssync") == []
