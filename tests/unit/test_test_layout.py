"""What tests share lives in ``tests/support`` (or in a helper module of their folder): no test file imports a
``conftest`` or another test module, whose fixtures and collection hooks would then run twice or leak across
folders."""

from __future__ import annotations

import ast
from pathlib import Path

TESTS = Path(__file__).resolve().parents[1]


def _imported(tree: ast.Module) -> list[str]:
    """The modules a file imports (``from . import x`` and ``from .x import y`` named relative to ``tests``)."""
    names: list[str] = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names += [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = ("." * node.level) + (node.module or "")
            names += [base] + [f"{base}.{alias.name}" for alias in node.names]
    return names


def _forbidden(name: str) -> bool:
    last = name.rsplit(".", 1)[-1]
    return last == "conftest" or (last.startswith("test_") and (name.startswith("tests.") or name.startswith(".")))


def offending_imports(root: Path) -> list[str]:
    found = []
    for path in sorted(root.rglob("*.py")):
        tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
        found += [f"{path.relative_to(root)}: {name}" for name in _imported(tree) if _forbidden(name)]
    return found


def test_no_test_imports_a_conftest_or_a_test_module() -> None:
    assert offending_imports(TESTS) == []


def test_the_check_finds_each_kind_of_forbidden_import(tmp_path: Path) -> None:
    (tmp_path / "a").mkdir()
    (tmp_path / "a" / "test_one.py").write_text(
        "from tests.b.conftest import Report\nfrom .conftest import data\nfrom tests.b.test_two import helper\n"
        "from tests.b import test_two\nimport tests.b.conftest\nfrom tests.support.sites import Site\n",
        encoding="utf-8",
    )
    assert offending_imports(tmp_path) == [
        "a/test_one.py: tests.b.conftest",
        "a/test_one.py: .conftest",
        "a/test_one.py: tests.b.test_two",
        "a/test_one.py: tests.b.test_two",
        "a/test_one.py: tests.b.conftest",
    ]
