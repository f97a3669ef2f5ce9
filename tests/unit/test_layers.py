"""The layer contracts of ``pyproject.toml`` (``[tool.importlinter]``) hold, and they catch what they promise to.

``lint-imports`` runs on the package itself, then on copies of it with one forbidden import added: an upward import
(a planner or the execution layer importing a renderer among them), the pure planner or a renderer importing the HTTP
client, httpx outside ``api/``, the plan model (or the kinds' facts it is named from) importing a planner, an
execution step importing an entry point, page apply importing a planner or the content models, a block type
descriptor importing pydantic, the emulator importing the client, ``content`` importing ``api``, the git code
importing the content, a git library instead of the git binary, an import cycle inside a package (a module-level,
a function-level or a typing-only import closing it). Each copy must break the named contract and no other but the
cycle contract, where the import also closes a cycle.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
CYCLES = "No import cycles inside a package"


def lint_imports(project: Path) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PYTHONPATH": str(project)}
    return subprocess.run(
        [sys.executable, "-c", "from importlinter.cli import lint_imports_command; lint_imports_command()",
         "--config", str(project / "pyproject.toml"), "--no-cache"],
        cwd=project, env=env, capture_output=True, text=True, timeout=120, check=False,
    )  # fmt: skip


def test_the_package_keeps_its_contracts() -> None:
    result = lint_imports(ROOT)
    assert result.returncode == 0, result.stdout + result.stderr
    assert "0 broken" in result.stdout


@pytest.mark.parametrize(
    ("module", "source", "contract"),
    [
        ("plan/planner.py", "from cmssync.sync import engine\n", "Layers"),
        ("api/client.py", "from cmssync.plan import planner\n", "Layers"),
        ("content/loader.py", "from cmssync.api import models\n", "Layers"),
        ("config/loading.py", "import cmssync.daemon.watch\n", "Layers"),
        ("daemon/main.py", "from cmssync.commands import apply\n", "Layers"),
        ("plan/planner.py", "from cmssync.render import text\n", "Layers"),
        ("sync/pull.py", "from cmssync.render.pull import render_pull\n", "Layers"),
        ("plan/pages.py", "from cmssync.state import store\n", "Planning is pure"),
        ("render/text.py", "from cmssync.api import client\n", "Renderers are pure"),
        ("render/markdown.py", "from cmssync import fileio\n", "Renderers are pure"),
        ("sync/observe.py", "import httpx\n", "Requests to the site go through api/"),
        ("commands/status.py", "import httpx\n", "Requests to the site go through api/"),
        ("plan/actions.py", "from cmssync.plan import pages\n", "The plan model imports no planner"),
        ("plan/kinds.py", "from cmssync.plan import files\n", "The plan model imports no planner"),
        ("sync/apply_pages.py", "from cmssync.sync import applying\n", "Execution steps do not import"),
        ("emulator/app.py", "from cmssync.api.models import Page\n", "The sandbox shares no code"),
        ("sync/apply_pages.py", "from cmssync.content.models import PageSpec\n", "Apply executes the plan"),
        ("sync/apply_pages.py", "from cmssync.plan import pages\n", "Apply executes the plan"),
        ("sync/apply_assets.py", "from cmssync.content.site import SiteContent\n", "Apply executes the plan"),
        ("content/blocktypes/image.py", "import pydantic\n", "Block type descriptors are plain data"),
        ("gitrepo/repo.py", "from cmssync.content import writer\n", "Layers"),
        ("sync/pull_commit.py", "import dulwich\n", "Git is the git binary"),
        ("plan/blocks.py", "from cmssync.plan.page_form import PageForm\n", "No import cycles inside a package"),
        (
            "state/keyring.py",
            "def _backends():\n    from cmssync.state import backends\n",
            "No import cycles inside a package",
        ),
        (
            "emulator/caller.py",
            "import typing\nif typing.TYPE_CHECKING:\n    from cmssync.emulator import runtime\n",
            "No import cycles inside a package",
        ),
    ],
)
def test_a_forbidden_import_breaks_its_contract(tmp_path: Path, module: str, source: str, contract: str) -> None:
    shutil.copytree(ROOT / "cmssync", tmp_path / "cmssync", ignore=shutil.ignore_patterns("__pycache__"))
    shutil.copy(ROOT / "pyproject.toml", tmp_path / "pyproject.toml")
    target = tmp_path / "cmssync" / module
    target.write_text(target.read_text(encoding="utf-8") + "\n" + source, encoding="utf-8")
    result = lint_imports(tmp_path)
    assert result.returncode == 1, result.stdout + result.stderr
    broken = [line for line in result.stdout.splitlines() if line.endswith(" BROKEN")]
    assert [line for line in broken if line.startswith(contract)], result.stdout
    # An upward import inside a package (an entry point, a planner) also closes a cycle there: that may break too.
    assert all(line.startswith((contract, CYCLES)) for line in broken), result.stdout
