"""Fault matrix: under every fault the sandbox can inject, alone and together, repeated applies converge, nothing is
duplicated or lost, and every state record points at a live object (issue 9; issue 7 for the named combination).

A run may fail under faults (a create whose outcome is unknown is never blindly repeated, so it fails and the next
run finishes it); "converged after N runs" means that the plan made without faults after the Nth apply is empty.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from cmssync.emulator.embedded import Sandbox
from tests.reliability.scenarios import Scenario, ScenarioResult, count_duplicates, run_scenario
from tests.support.reliability_report import ReliabilityReport

SINGLE_KINDS = {
    "500": ("500:0.1",),
    "503": ("503:0.1",),
    "429": ("429:0.1:retry-after=0",),
    "drop": ("drop:0.05",),
    "commit-then-500": ("commit-then-500:0.05",),
    "revoke-token": ("revoke-token:0.05",),
    "latency": ("latency:0.5:ms=5",),
}
ALL_TOGETHER = (
    "500:0.03",
    "503:0.03",
    "429:0.03:retry-after=0",
    "drop:0.02",
    "commit-then-500:0.02",
    "revoke-token:0.02",
    "latency:0.2:ms=5",
)
ISSUE_7 = ("500:0.1", "429:0.05:retry-after=0", "drop:0.02", "commit-then-500:0.02")
ISSUE_7_SEEDS = (1, 2, 3, 4, 5)


async def _scenario(scenario: Scenario, sandbox: Sandbox, tmp_path: Path, report: ReliabilityReport) -> ScenarioResult:
    result, fresh = await run_scenario(scenario, sandbox, tmp_path)
    if fresh:
        report.add(
            cases_tried=1,
            faults_injected=result.faults_injected,
            applies=result.convergence.runs,
            duplicates_found=count_duplicates(result),
        )
    return result


@pytest.mark.parametrize("kind", sorted(SINGLE_KINDS))
async def test_one_fault_kind_converges_within_three_runs(
    kind: str, sandbox_server: Sandbox, tmp_path: Path, reliability_report: ReliabilityReport
) -> None:
    result = await _scenario(Scenario(SINGLE_KINDS[kind], seed=11), sandbox_server, tmp_path, reliability_report)
    assert result.problems == [], result.explain()
    assert result.convergence.converged_after is not None, result.explain()
    assert result.convergence.converged_after <= 3, result.explain()
    if kind != "latency":
        assert result.faults_injected > 0


@pytest.mark.parametrize("content", ["example", "generated"])
async def test_all_faults_together_converge_without_duplicates(
    content: str, sandbox_server: Sandbox, tmp_path: Path, reliability_report: ReliabilityReport
) -> None:
    scenario = Scenario(ALL_TOGETHER, seed=21, content=content)
    result = await _scenario(scenario, sandbox_server, tmp_path, reliability_report)
    assert result.problems == [], result.explain()
    assert result.convergence.converged_after is not None, result.explain()
    assert result.faults_injected > 0


@pytest.mark.parametrize("seed", ISSUE_7_SEEDS)
@pytest.mark.parametrize("dialect", ["concrete", "documented"])
async def test_issue_7_faults_converge_without_duplicates(
    dialect: str, seed: int, sandbox_server: Sandbox, tmp_path: Path, reliability_report: ReliabilityReport
) -> None:
    """Issue 7: `--fault 500:0.1 --fault 429:0.05 --fault drop:0.02 --fault commit-then-500:0.02` (seeded):
    no duplicated block, file, user, group or page, nothing lost, the state consistent, and the site converges."""
    result = await _scenario(
        Scenario(ISSUE_7, seed=seed, dialect=dialect), sandbox_server, tmp_path, reliability_report
    )
    assert result.problems == [], result.explain()
    assert result.convergence.converged_after is not None, result.explain()
    assert result.faults_injected > 0


@pytest.mark.parametrize("dialect", ["concrete", "documented"])
async def test_issue_7_faults_converge_within_three_runs(
    dialect: str, sandbox_server: Sandbox, tmp_path: Path, reliability_report: ReliabilityReport
) -> None:
    """Issue 7's acceptance: repeated apply converges within 3 runs (the 4th plan is empty), for every seed."""
    slow: list[str] = []
    for seed in ISSUE_7_SEEDS:
        result = await _scenario(
            Scenario(ISSUE_7, seed=seed, dialect=dialect), sandbox_server, tmp_path / f"seed-{seed}", reliability_report
        )
        after = result.convergence.converged_after
        if after is None or after > 3:
            slow.append(f"seed {seed}: converged after {after} runs\n{result.explain()}")
    assert slow == [], "\n\n".join(slow)


async def test_issue_7_faults_at_the_default_concurrency(
    sandbox_server: Sandbox, tmp_path: Path, reliability_report: ReliabilityReport
) -> None:
    """Four requests at a time (content-example's setting): the order varies, so only what holds for any order is
    asserted — no duplicate, nothing lost, and convergence within ten runs."""
    scenario = Scenario(ISSUE_7, seed=7, concurrency=None, max_runs=10)
    result = await _scenario(scenario, sandbox_server, tmp_path, reliability_report)
    assert result.problems == [], result.explain()
    assert result.convergence.converged_after is not None, result.explain()
