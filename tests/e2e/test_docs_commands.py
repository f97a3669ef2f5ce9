"""Every command block of README.md and docs/ runs as written (issue 27 item 9), so the docs cannot drift again.

The shell blocks (```` ```sh ````) and the indented command blocks are extracted; each command either runs here —
``cmssync`` against the sandbox, from a directory holding ``site`` and ``content-example`` (copies of the
example), with the settings in the environment as in CI — or is skipped for a named reason (Docker, Kubernetes,
a real site, the test suite itself, …). A command must exit 0 (or 2 with ``--detailed-exitcode``). The README's
quickstart, which installs cmssync, runs in a fresh virtual environment in its own (slow) test.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import pytest

from cmssync.emulator.embedded import Sandbox
from tests.support.sites import PASSWORDS, sandbox_environment

ROOT = Path(__file__).resolve().parents[2]
DOCS = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
COMMAND_START = re.compile(r"^(?:[A-Z_]+=\S+\s+)*(cmssync|docker|kubectl|curl|jq|pip|python3?|ruff|eval|_CMSSYNC)")

SKIPPED = {
    r"\bdocker\b": "needs Docker (the build is replayed by tests/daemon/test_dockerfile.py)",
    r"\bkubectl\b": "needs a Kubernetes cluster",
    r"\bcurl\b|\bjq\b": "talks to a running daemon or a state server",
    r"CMSSYNC_REALSITE_ENV": "needs the real Concrete site",
    r"\bpip install\b": "installs cmssync: test_the_readme_quickstart_works_in_a_fresh_venv",
    r"-m pytest|\bruff\b|\bmypy\b|lint-imports": "the project's own checks, run by CI",
    r"-m bench\.": "the benchmarks take minutes (bench/README.md)",
    r"cmssync daemon": "runs until SIGTERM (tests/daemon)",
    r"\bpull\b.*--commit": "needs a git repository with a remote (tests/e2e/test_pull_commit.py)",
    r"zsh_source|fish_source": "needs zsh or fish",
    r"\[[A-Z-]": "a synopsis, not a command",
}
PREPARE = {
    # The workflow downloads the reviewed plan as an artifact into reviewed/: here it is made the same way.
    "reviewed/plan.json": "cmssync plan site -o reviewed/plan.json",
}


@dataclass(frozen=True)
class Command:
    where: str
    text: str

    def skip_reason(self) -> str | None:
        return next((why for pattern, why in SKIPPED.items() if re.search(pattern, self.text)), None)


def commands() -> list[Command]:
    found: list[Command] = []
    for doc in DOCS:
        text = doc.read_text(encoding="utf-8")
        for match in re.finditer(r"^```(?:sh|bash|shell|console)\n(.*?)^```", text, flags=re.S | re.M):
            line = text.count("\n", 0, match.start()) + 2
            found += _logical(doc, line, match.group(1).splitlines())
        found += _indented(doc, text.splitlines())
    return found


def _indented(doc: Path, lines: list[str]) -> list[Command]:
    found: list[Command] = []
    fenced, block, start = False, [], 0
    for number, line in enumerate([*lines, ""], 1):
        if line.startswith("```"):
            fenced = not fenced
        if not fenced and line.startswith("    ") and (block or not lines[number - 2].strip()):
            block, start = [*block, line[4:]], start or number
            continue
        if block and COMMAND_START.match(block[0]):
            found += _logical(doc, start, block)
        block, start = [], 0
    return found


def _logical(doc: Path, first: int, lines: list[str]) -> list[Command]:
    """Commands with their continuations joined; comments and output lines (not starting a command) dropped."""
    found: list[Command] = []
    pending = ""
    for offset, line in enumerate(lines):
        if pending:
            pending += " " + line.strip()
        elif COMMAND_START.match(line.strip()):
            pending, first_line = line.strip(), first + offset
        if pending and not pending.endswith("\\"):
            found.append(Command(f"{doc.relative_to(ROOT)}:{first_line}", pending))
            pending = ""
        elif pending:
            pending = pending[:-1]
    return found


@pytest.fixture
def workdir(tmp_path: Path, sandbox: Sandbox) -> tuple[Path, dict[str, str]]:
    for name in ("site", "content-example"):
        shutil.copytree(ROOT / "content-example", tmp_path / name, ignore=shutil.ignore_patterns(".cmssync"))
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    launcher = bin_dir / "cmssync"
    launcher.write_text(f'#!/bin/sh\nexec "{sys.executable}" -m cmssync "$@"\n')
    launcher.chmod(0o755)
    env = {k: v for k, v in os.environ.items() if not k.startswith("CMSSYNC_")}
    env |= PASSWORDS | sandbox_environment(sandbox, tmp_path / "state" / "state.json")
    env |= {
        "CMSSYNC_TOKEN_STORE": str(tmp_path / "state" / "tokens.json"),
        "PATH": f"{bin_dir}{os.pathsep}{env['PATH']}",
        "PYTHONPATH": str(ROOT),
        "HOME": str(tmp_path),
    }
    return tmp_path, env


def test_the_docs_hold_commands_and_each_is_run_or_skipped_for_a_reason() -> None:
    found = commands()
    runnable = [c for c in found if c.skip_reason() is None]
    assert len(found) >= 20
    assert len(runnable) >= 10, [c.where for c in runnable]
    assert all(c.text.split()[0] in ("cmssync", "eval", "_CMSSYNC_COMPLETE=bash_source") for c in runnable), [
        c.text for c in runnable
    ]


def test_every_runnable_command_in_the_docs_works(workdir: tuple[Path, dict[str, str]]) -> None:
    cwd, env = workdir
    ran: list[str] = []
    for command in commands():
        if command.skip_reason() is not None:
            continue
        for path, setup in PREPARE.items():
            if path in command.text and not (cwd / path).exists():
                (cwd / path).parent.mkdir(parents=True, exist_ok=True)
                assert _bash(setup, cwd, env).returncode in (0, 2)
        result = _bash(command.text, cwd, env)
        allowed = (0, 2) if "--detailed-exitcode" in command.text else (0,)
        assert result.returncode in allowed, f"{command.where}: {command.text}\n{result.stdout[-800:]}{result.stderr}"
        ran.append(command.where)
    assert len(ran) >= 10


def _bash(text: str, cwd: Path, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        ["bash", "-c", text], cwd=cwd, env=env, capture_output=True, text=True, timeout=180, check=False
    )


@pytest.mark.slow
def test_the_readme_quickstart_works_in_a_fresh_venv(tmp_path: Path) -> None:
    """Step 1 of the README's quickstart, as written, in a copy of the repository: a new virtual environment,
    ``pip install .`` (from the package index), the example applied to the sandbox, the next plan empty."""
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    block = re.search(r"```sh\n# 1\..*?\n(.*?)\n\n# 2\.", readme, flags=re.S)
    assert block is not None
    steps = block.group(1)
    assert "python3 -m venv" in steps  # Debian's system Python refuses a plain pip install
    for name in ("pyproject.toml", "README.md", "cmssync", "content-example"):
        source = ROOT / name
        if source.is_dir():
            shutil.copytree(source, tmp_path / name, ignore=shutil.ignore_patterns(".cmssync", "__pycache__"))
        else:
            shutil.copy(source, tmp_path / name)
    env = {k: v for k, v in os.environ.items() if not k.startswith(("CMSSYNC_", "PYTHON", "VIRTUAL_ENV"))}
    env["HOME"] = str(tmp_path)
    result = subprocess.run(
        ["bash", "-ec", steps], cwd=tmp_path, env=env, capture_output=True, text=True, timeout=900, check=False
    )
    if result.returncode != 0 and re.search(r"(?i)no matching distribution|could not find a version", result.stderr):
        pytest.skip(f"no package index here: {result.stderr[-300:]}")
    assert result.returncode == 0, result.stdout[-2000:] + result.stderr[-3000:]
    assert "No changes. The site matches the content." in result.stdout
    assert (tmp_path / ".venv" / "lib").is_dir()


def test_the_dockerfiles_example_commands_have_no_comment_after_a_continuation() -> None:
    """``docker run … \\   # the content`` ends the command at the comment: the lines after it never ran."""
    example = [line.removeprefix("#").strip() for line in (ROOT / "Dockerfile").read_text().splitlines()]
    assert any(line.startswith("docker run") for line in example)
    assert not [line for line in example if re.search(r"\\\s+#", line)]
