"""Bad input never reaches the site: every invalid content directory of the corpus makes ``cmssync apply --yes``
exit 1 with its located problems and without a single write request (issue 9).

The site settings come from the environment (``CMSSYNC_URL`` …), which leaves the cases about ``cmssync.yaml``
themselves as they are: the environment only adds what the case does not say.
"""

from __future__ import annotations

import os
import resource
import shutil
import signal
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

import cmssync.content.loader
from cmssync.emulator.embedded import Sandbox
from tests.reliability.cli import CliResult, run_cli
from tests.support.reliability_report import ReliabilityReport
from tests.support.sites import sandbox_environment

CORPUS = Path(__file__).resolve().parents[1] / "content" / "invalid"
HUGE = 6 * 1024 * 1024
REPO = Path(__file__).resolve().parents[2]
CPU_SECONDS = 30
"""The work a case run as a process may do: CPU time, its own whatever the machine's load (``apply`` refusing the
alias bomb takes 0.9 s of it, nearly all Python's start and imports, measured while its wall-clock time was 4.4 s on
a loaded machine; expanding the bomb takes minutes)."""
MEMORY = 3 * 1024**3
"""The address space it may take (its peak resident size is about 60 MB)."""
HANG_GUARD = 600.0
"""Wall-clock seconds after which a process that neither works nor ends (asleep) is killed; not the bound itself."""

IN_A_SUBPROCESS = {"config_alias_bomb"}
"""Cases that hung ``apply`` once (cmssync.yaml alias bomb, fixed in 8ade8eb): run as a process whose CPU time and
memory are bounded (the kernel stops it past them), so that a regression fails this test instead of hanging the suite,
and a loaded machine cannot fail it (a 5 s wall-clock limit did, with the imports alone taking longer)."""
CASES = sorted(p.name for p in CORPUS.iterdir() if p.is_dir())


def site_environment(monkeypatch: pytest.MonkeyPatch, sandbox: Sandbox, state: Path) -> None:
    for name, value in sandbox_environment(sandbox, state).items():
        monkeypatch.setenv(name, value)


def write_requests(stats: dict[str, Any]) -> list[str]:
    """Every request that could change the site: POST (except for a token), PUT, DELETE and anything else."""
    return [
        f"{r['method']} {r['route']} ({r['status']}) x{r['count']}"
        for r in stats["requests"]
        if r["method"] not in ("GET", "HEAD") and not (r["method"] == "POST" and r["route"] == "/oauth/2.0/token")
    ]


def _bounded() -> None:
    """In the child, before ``exec``: the kernel stops it past :data:`CPU_SECONDS` (SIGXCPU) or :data:`MEMORY`."""
    resource.setrlimit(resource.RLIMIT_CPU, (CPU_SECONDS, CPU_SECONDS + 5))
    resource.setrlimit(resource.RLIMIT_AS, (MEMORY, MEMORY))


def apply_in_a_subprocess(root: Path) -> CliResult:
    """``cmssync apply --yes ROOT`` as a process bounded in CPU time and memory (:func:`_bounded`)."""
    process = subprocess.Popen(
        [sys.executable, "-m", "cmssync", "apply", "--yes", str(root)],
        cwd=REPO,
        env=dict(os.environ),
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        preexec_fn=_bounded,
    )
    try:
        out, err = process.communicate(timeout=HANG_GUARD)
    except subprocess.TimeoutExpired:
        process.kill()
        out, err = process.communicate()
        err += f"\n(killed: neither done nor working after {HANG_GUARD} s)"
    finally:
        if process.poll() is None:
            process.kill()
            process.wait()
    if process.returncode in (-signal.SIGXCPU, -signal.SIGKILL):
        err += f"\n(stopped by the kernel: more than {CPU_SECONDS} s of CPU time; the input was expanded)"
    return CliResult(process.returncode, out, err)


def test_the_bound_stops_a_process_that_works_past_it() -> None:
    """What the bound does to a process that does expand its input: stopped, not left running."""
    spin = subprocess.run(
        [sys.executable, "-c", "while True: pass"],
        preexec_fn=lambda: resource.setrlimit(resource.RLIMIT_CPU, (1, 2)),
        timeout=HANG_GUARD,
    )
    assert spin.returncode == -signal.SIGXCPU


@pytest.mark.parametrize("case", CASES)
def test_invalid_content_is_refused_before_any_write(
    case: str,
    sandbox_server: Sandbox,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
    reliability_report: ReliabilityReport,
) -> None:
    root = tmp_path / case
    shutil.copytree(CORPUS / case, root)
    expected = (root / "expected.txt").read_text(encoding="utf-8").splitlines()
    (root / "expected.txt").unlink()
    site_environment(monkeypatch, sandbox_server, tmp_path / "state" / "state.json")
    sandbox_server.clear_stats()

    in_a_subprocess = case in IN_A_SUBPROCESS
    result = apply_in_a_subprocess(root) if in_a_subprocess else run_cli(capsys, "apply", "--yes", str(root))

    reliability_report.add(cases_tried=1)
    assert result.code == 1, result.text
    for line in expected:
        assert line in result.err, f"missing located problem {line!r} in:\n{result.err}"
    assert "Traceback" not in result.text
    assert write_requests(sandbox_server.stats()) == []
    assert not (tmp_path / "state" / "state.json").exists()


def test_a_huge_content_file_is_refused_before_any_write(
    sandbox_server: Sandbox,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
    reliability_report: ReliabilityReport,
) -> None:
    root = tmp_path / "site"
    (root / "pages").mkdir(parents=True)
    with (root / "pages" / "index.yaml").open("w", encoding="utf-8") as stream:
        stream.write("name: Home\ndescription: ")
        stream.write("x" * HUGE)
        stream.write("\n")
    size = (root / "pages" / "index.yaml").stat().st_size

    result = refused_apply(root, sandbox_server, monkeypatch, capsys)

    reliability_report.add(cases_tried=1)
    assert f"pages/index.yaml: file is too large ({size} bytes;" in result.err


def test_a_missing_content_directory_is_refused_without_a_request(
    sandbox_server: Sandbox,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
    reliability_report: ReliabilityReport,
) -> None:
    site_environment(monkeypatch, sandbox_server, tmp_path / "state.json")
    sandbox_server.clear_stats()

    result = run_cli(capsys, "apply", "--yes", "--prune", "--allow-mass-delete", str(tmp_path / "not-mounted"))

    reliability_report.add(cases_tried=1)
    assert result.code == 1
    assert "does not exist" in result.err
    assert sandbox_server.stats()["total"] == 0


def refused_apply(
    root: Path, sandbox: Sandbox, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> CliResult:
    """``cmssync apply --yes ROOT`` on the sandbox, which must exit 1 without a traceback or a write request."""
    site_environment(monkeypatch, sandbox, root.parent / "state.json")
    sandbox.clear_stats()
    result = run_cli(capsys, "apply", "--yes", str(root))
    assert result.code == 1, result.text
    assert "Traceback" not in result.text
    assert write_requests(sandbox.stats()) == []
    return result


@pytest.mark.parametrize("case", ["values in a file", "bytes in all", "values in all"])
def test_content_too_large_for_memory_is_refused_before_any_write(
    case: str,
    sandbox_server: Sandbox,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
    reliability_report: ReliabilityReport,
) -> None:
    """Issue 29 item 7: four legal 4.8 MB files of 400,000 attribute keys took 751 MB. Values per file, values and
    YAML bytes of the whole content are bounded, with a clear error, before more is built from them."""
    pages = tmp_path / "site" / "pages"
    pages.mkdir(parents=True)
    if case == "values in a file":  # 100,001 values in one file, no mapping over the key limit
        lines = ["name: Home", "areas:", "  Main:"] + ["    - type: content", "      value: {content: x}"] * 20_000
        (pages / "index.yaml").write_text("\n".join(lines) + "\n", encoding="utf-8")
        expected = "pages/index.yaml:"
        reason = "too many values in one file (at most 100,000)"
    elif case == "bytes in all":  # seven files of 4.8 MB: each under the 5 MiB a file may have
        for number in range(7):
            (pages / f"p{number}.yaml").write_text(f"name: P{number}\ndescription: {'x' * 4_800_000}\n", "utf-8")
        expected = ".: the content's YAML files hold"
        reason = "at most 32 MiB in all are read (memory)"
    else:  # the budget lowered to 2,000 so the test stays fast; the real one, 500,000, is reached the same way
        monkeypatch.setattr(cmssync.content.loader, "MAX_CONTENT_VALUES", 2_000)
        attributes = "".join(f"  a{key}: x\n" for key in range(300))  # 605 values a file
        for number in range(10):
            (pages / f"p{number}.yaml").write_text(f"name: P{number}\nattributes:\n{attributes}", "utf-8")
        expected = "pages/p3.yaml: the content holds more than 2,000 values"
        reason = "at most that many are read in all (memory)"

    result = refused_apply(tmp_path / "site", sandbox_server, monkeypatch, capsys)

    reliability_report.add(cases_tried=1)
    assert expected in result.err
    assert reason in result.err
