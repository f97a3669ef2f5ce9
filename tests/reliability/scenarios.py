"""One fault scenario: a fresh sandbox, a content directory, repeated applies under seeded faults, then the checks.

Scenarios are cached per pytest session: the tests that assert different things about the same scenario (that it
converges at all, that it converges within three runs) share one execution.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from cmssync.emulator.embedded import Sandbox
from tests.reliability.inventory import duplicates, problems, take_inventory
from tests.reliability.sites import (
    Convergence,
    ReliabilitySite,
    apply_until_converged,
    fault_answers,
    write_generated_content,
)
from tests.support.rawsite import RawSite
from tests.support.sites import copy_example


@dataclass(frozen=True)
class Scenario:
    faults: tuple[str, ...]
    seed: int
    dialect: str = "concrete"
    content: str = "example"
    """``example`` (a copy of content-example) or ``generated`` (a small generated site)."""
    concurrency: int | None = 1
    """None: the content's own setting (content-example: 4) — the request order then varies between runs."""
    max_runs: int = 8


@dataclass
class ScenarioResult:
    convergence: Convergence
    problems: list[str] = field(default_factory=list)
    faults_injected: int = 0

    def explain(self) -> str:
        lines = [
            f"converged after {self.convergence.converged_after} of {self.convergence.runs} runs",
            f"{self.faults_injected} faults injected",
            *(f"problem: {p}" for p in self.problems),
            *(f"remaining: {r}" for r in self.convergence.remaining),
            *self.convergence.failures,
        ]
        return "\n".join(lines)


_RESULTS: dict[Scenario, ScenarioResult] = {}


def write_small_generated_site(root: Path) -> None:
    write_generated_content(root, sections=2, pages_per_section=4, blocks=3, files=5, users=3, groups=3)


async def run_scenario(scenario: Scenario, sandbox: Sandbox, workdir: Path) -> tuple[ScenarioResult, bool]:
    """The scenario's result, and whether it was computed now (False: from the cache)."""
    if scenario in _RESULTS:
        return _RESULTS[scenario], False
    sandbox.reset(seed="default", dialect=scenario.dialect)
    root = workdir / "site"
    if scenario.content == "example":
        copy_example(root)
    else:
        write_small_generated_site(root)
    settings = {} if scenario.concurrency is None else {"concurrency": scenario.concurrency}
    site = ReliabilitySite(root, sandbox, settings=settings)
    raw = RawSite(sandbox)
    try:
        before = take_inventory(raw, block_pages=set())
        sandbox.clear_stats()
        convergence = await apply_until_converged(
            site, max_runs=scenario.max_runs, faults=list(scenario.faults), seed=scenario.seed
        )
        injected = fault_answers(sandbox.stats())
        content = site.content()
        after = take_inventory(raw, block_pages=set(content.pages))
        found = problems(before, after, content, site.state())
    finally:
        raw.close()
    result = ScenarioResult(convergence, found, injected)
    _RESULTS[scenario] = result
    return result, True


def count_duplicates(result: ScenarioResult) -> int:
    return duplicates(result.problems)
