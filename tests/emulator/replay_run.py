"""Running a replay (``replay.py``) of one recording against a fresh sandbox, and its summary table."""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import httpx

from cmssync.emulator.embedded import Sandbox
from tests.emulator.replay import RECORDED_BASE, Replayer, Result

#: Recording name -> summary lines, printed by ``pytest_terminal_summary`` in this directory's conftest.
SUMMARIES: dict[str, list[str]] = {}


def run_replay(
    name: str,
    exchanges: list[dict[str, Any]],
    seed: dict[str, Any],
    work: Path,
    allowed: dict[int, str],
    *,
    recorded_base: str = RECORDED_BASE,
    theme_markers: Mapping[str, str] | None = None,
) -> list[Result]:
    """Replay ``exchanges`` against a sandbox seeded with ``seed``; write the per-exchange results and summary."""
    seed_file = work / f"{name}-site.json"
    seed_file.write_text(json.dumps(seed), encoding="utf-8")
    with Sandbox(seed=str(seed_file)) as sandbox, httpx.Client(base_url=sandbox.url, timeout=30.0) as client:
        replayer = Replayer(
            client,
            client_id=sandbox.client_id,
            client_secret=sandbox.client_secret,
            admin_password=sandbox.admin_password,
            recorded_base=recorded_base,
            theme_markers=theme_markers,
        )
        results = [replayer.replay(exchange) for exchange in exchanges]
    report = work / f"{name}-results.jsonl"
    with report.open("w", encoding="utf-8") as out:
        for r in results:
            row = {
                "seq": r.seq,
                "step": r.step,
                "ok": r.ok,
                "allowed": allowed.get(r.seq),
                "status": r.status,
                "recorded_status": r.recorded_status,
                "problems": r.problems,
            }
            out.write(json.dumps(row) + "\n")
    SUMMARIES[name] = summary(name, results, report, allowed)
    return results


def summary(name: str, results: list[Result], report: Path, allowed: dict[int, str]) -> list[str]:
    groups: Counter[str] = Counter()
    matched: Counter[str] = Counter()
    for r in results:
        group = r.step.split(".")[0]
        groups[group] += 1
        matched[group] += r.ok
    lines = [
        "",
        f"replay of {len(results)} exchanges of {name} ({report})",
        f"{'group':<16}{'matched':>10}{'total':>8}",
    ]
    lines += [f"{g:<16}{matched[g]:>10}{groups[g]:>8}" for g in sorted(groups)]
    ok = sum(r.ok for r in results)
    lines.append(f"{'all':<16}{ok:>10}{len(results):>8}   ({100 * ok / len(results):.1f}% match)")
    for r in results:
        if not r.ok:
            tag = "allowed" if r.seq in allowed else "MISMATCH"
            lines.append(f"  {tag} #{r.seq} {r.step}: {allowed.get(r.seq) or '; '.join(r.problems[:3])}")
    return lines
