"""``bench/`` is a package: each bench runs as ``python -m bench.NAME`` with no ``sys.path`` edits, its modules import
each other without a cycle (function-level imports included), and mypy checks it (``[tool.mypy] files``)."""

from __future__ import annotations

import itertools
import os
import re
import subprocess
import sys
import tomllib
from pathlib import Path

import grimp
import pytest

ROOT = Path(__file__).resolve().parents[2]
BENCH = ROOT / "bench"
ENTRY_POINTS = sorted(p.stem for p in BENCH.glob("*.py") if 'if __name__ == "__main__"' in p.read_text())


def test_no_bench_edits_sys_path() -> None:
    edits = [
        f"{path.name}:{number}"
        for path in sorted(BENCH.glob("*.py"))
        for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1)
        if re.search(r"sys\.path\s*(\.(insert|append|extend)|\[.*\]\s*=|\+=)", line)
    ]
    assert edits == []


def test_the_bench_modules_import_each_other_without_a_cycle() -> None:
    graph = grimp.build_graph("bench", include_external_packages=False)
    modules = sorted(m for m in graph.modules if m != "bench")
    assert len(modules) >= 10
    cycles = [
        (a, b)
        for a, b in itertools.combinations(modules, 2)
        if graph.find_shortest_chain(importer=a, imported=b) and graph.find_shortest_chain(importer=b, imported=a)
    ]
    assert cycles == []


def test_mypy_checks_the_benches() -> None:
    config = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
    assert "bench" in config["tool"]["mypy"]["files"]


@pytest.mark.parametrize("name", [n for n in ENTRY_POINTS if n != "reliability_totals"])
def test_each_bench_starts_as_a_module(name: str) -> None:
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    result = subprocess.run(
        [sys.executable, "-m", f"bench.{name}", "--help"],
        cwd=ROOT, env=env, capture_output=True, text=True, timeout=60, check=False,
    )  # fmt: skip
    assert result.returncode == 0, result.stderr
    assert "usage:" in result.stdout
