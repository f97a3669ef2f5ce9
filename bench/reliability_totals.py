"""Run the reliability suite and print its totals: ``python -m bench.reliability_totals [pytest args…]``.

Runs ``pytest tests/reliability`` with ``CMSSYNC_RELIABILITY_REPORT`` pointing at a temporary file, where the suite's
session writes its counters (``tests/reliability/conftest.py``): cases tried, faults injected, kills, duplicates
found, secrets leaked, applies, and peaks (RSS under a hostile server, pages in flight). Prints them with
pytest's own outcome counts, and exits with pytest's exit code.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
LABELS = {
    "cases_tried": "cases tried",
    "faults_injected": "faults injected (answers the faults and the corrupting proxy changed)",
    "kills": "SIGKILLs of a running apply",
    "duplicates_found": "duplicates found",
    "secrets_leaked": "secrets leaked",
    "applies": "applies run under faults",
    "duplicates_in_known_bugs": "duplicates made by known bugs (strict xfail tests)",
    "peak_rss_mib_hostile_server": "peak RSS of `cmssync plan` against a server answering 200 MB (MiB)",
    "peak_pages_in_flight": "most page actions in flight at once (concurrency 2)",
    "half_built_pages_after_sigterm": "half-built pages left by a SIGTERM to apply",
    "lost_writes": "writes of the content missing on the site after a kill and the next run",
    "orphaned_files": "site files a killed upload left recorded nowhere",
    "planted_caches": "cache keys and signed caches planted in a repository or a state folder",
    "code_executed_from_planted_cache": "code executed from a planted cache",
}


def main(argv: list[str]) -> int:
    with tempfile.TemporaryDirectory(prefix="cmssync-reliability-") as temp:
        report = Path(temp) / "totals.json"
        env = {**os.environ, "CMSSYNC_RELIABILITY_REPORT": str(report)}
        started = time.perf_counter()
        result = subprocess.run(
            [sys.executable, "-m", "pytest", "tests/reliability", "-q", "-p", "no:cacheprovider", "-rxX", *argv],
            cwd=REPO,
            env=env,
            capture_output=True,
            text=True,
            check=False,
        )
        seconds = time.perf_counter() - started
        totals = json.loads(report.read_text(encoding="utf-8")) if report.exists() else {}
    outcome = _outcome(result.stdout)
    rows = [(LABELS.get(key, key.replace("_", " ")), str(value)) for key, value in totals.items()]
    rows += [("pytest outcome", outcome), ("wall time", f"{seconds:.1f} s")]
    width = max(len(label) for label, _ in rows)
    print("| total | value |")
    print("|---|---|")
    for label, value in rows:
        print(f"| {label:<{width}} | {value} |")
    expected = [line for line in result.stdout.splitlines() if line.startswith(("XFAIL", "XPASS"))]
    if expected:
        print("\nknown product bugs (strict xfail):")
        for line in expected:
            print("  " + line.split(" - ")[0])
    if result.returncode != 0:
        print("\n" + result.stdout[-4000:] + result.stderr[-2000:], file=sys.stderr)
    return result.returncode


def _outcome(output: str) -> str:
    lines = [line for line in output.splitlines() if re.search(r"\d+ (passed|failed|error)", line)]
    return lines[-1].strip("= ") if lines else "(no summary)"


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
