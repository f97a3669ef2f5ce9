"""Issue 28: pull and the no-op plan of a large generated site, side by side with another checkout:
``python -m bench.scale_bench [--pages 10000 --files 2000 --users 1000] [--rate N] [--baseline DIR]``.

A sandbox generates the site (``pages`` x ``blocks`` in sections of 100, ``files``, ``users``; ``--rate N``: rows
dated N a second, as a site built through the API; default: every row in one second, as the issue's figures) and
injects ``--latency-ms``. For each code tree (``--baseline DIR``, e.g. ``git worktree add /tmp/base 0bb34d4``, then
this checkout): ``cmssync pull`` into an empty directory, a warm-up plan (fills the parse cache), then ``--runs``
no-op plans, then ``cmssync pull`` again (nothing changed: every file is there already) — each a process reaped with
``os.wait4`` (wall, CPU, peak RSS), its requests counted by the sandbox, and the sandbox's own CPU over it (it runs in
the bench's process, on the same cores). ``--keep-site DIR`` keeps the generated site's database there and reuses it
on a later run with the same sizes (generating 10,000 pages takes a while).
The table also splits the requests by route family: page lists (``/pages``), children lists, single pages, file and
user lists, files and users read one by one (the tie reads), and file downloads (static files, not API requests:
``requests`` counts them, ``API requests`` does not).
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import sys
import tempfile
from pathlib import Path
from typing import Any

import httpx

from bench.common import Measurement, run_measured, table
from bench.run import environment, site_settings
from cmssync.emulator.embedded import Sandbox

REPO = Path(__file__).resolve().parents[1]


def families(by_route: Any) -> dict[str, int]:
    """Requests by what they read (the sandbox counts by route template)."""
    names = {
        "GET /pages": "page list",
        "GET /pages/{pageID}/children": "children lists",
        "GET /pages/{pageID}": "single pages",
        "GET /files": "file list",
        "GET /files/{fID}": "files by id",
        "GET /users": "user list",
        "GET /users/{uID}": "users by id",
        "GET /application/files/{path}": "downloads",
    }
    found = dict.fromkeys(names.values(), 0)
    for route, count in dict(by_route).items():
        name = names.get(route)
        if name is not None:
            found[name] += int(count)
    return found


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--pages", type=int, default=10000)
    parser.add_argument("--blocks", type=int, default=5)
    parser.add_argument("--files", type=int, default=2000)
    parser.add_argument("--users", type=int, default=1000)
    parser.add_argument("--rate", type=int, default=0, help="rows dated N a second (0: all in one second)")
    parser.add_argument("--latency-ms", type=int, default=5)
    parser.add_argument("--runs", type=int, default=1)
    parser.add_argument("--baseline", type=Path, help="Another checkout of cmssync, measured first.")
    parser.add_argument("--skip-baseline-pull", action="store_true", help="Baseline: plan only (pull with this tree).")
    parser.add_argument(
        "--keep-site", type=Path, help="Keep the generated site in this directory and reuse it on later runs."
    )
    options = parser.parse_args(argv)
    trees = [("this checkout", REPO)]
    if options.baseline is not None:
        trees.insert(0, ("baseline", options.baseline.resolve()))
    spec = f"pages={options.pages},blocks={options.blocks},files={options.files},users={options.users}"
    if options.rate:
        spec += f",rate={options.rate}"
    print(f"sandbox: generate {spec}; latency {options.latency_ms} ms", flush=True)
    rows: list[list[object]] = []
    db = None
    if options.keep_site is not None:  # one SQLite file per site: a later run with the same sizes reuses it
        options.keep_site.mkdir(parents=True, exist_ok=True)
        db = str(options.keep_site / f"scale-{spec.replace(',', '-').replace('=', '')}.sqlite3")
    with (
        tempfile.TemporaryDirectory(prefix="cmssync-scale-bench-") as temp,
        Sandbox(seed="empty", generate=spec, db=db) as sb,
    ):
        faults = httpx.post(sb.url + "/__emulator/faults", json={"rules": [], "latency_ms": options.latency_ms})
        faults.raise_for_status()
        work = Path(temp)
        for index, (label, tree) in enumerate(trees):
            root = work / f"site-{index}"
            root.mkdir()
            site_settings(root, sb, work / f"state-{index}" / "state.json")
            env = {**environment(sb), "PYTHONPATH": str(tree)}
            own_pull = not (options.skip_baseline_pull and label == "baseline")
            puller = env if own_pull else {**env, "PYTHONPATH": str(REPO)}
            pulled = _measure(f"{label}: pull", ["pull", str(root)], sb, puller, work / f"pull-{index}.log")
            rows.append(_row(f"{label}: pull", [pulled]))
            warm = _measure("warm-up", ["plan", "--detailed-exitcode", str(root)], sb, env, work / "warm.log")
            if warm.code != 0:
                raise SystemExit(f"{label}: the warm-up plan is not a no-op ({warm.code}):\n{warm.tail(40)}")
            plans = [
                _measure(f"{label}: plan", ["plan", "--detailed-exitcode", str(root)], sb, env, work / "plan.log")
                for _ in range(options.runs)
            ]
            rows.append(_row(f"{label}: no-op plan", plans))
            again = _measure(f"{label}: pull again", ["pull", str(root)], sb, puller, work / f"again-{index}.log")
            rows.append(_row(f"{label}: pull again (nothing changed)", [again]))
            shutil.rmtree(root, ignore_errors=True)
    headers = ["command", "wall s (min-max)", "CPU s", "sandbox CPU s", "peak RSS MiB", "requests", "API requests"]
    headers += ["by family", "exit"]
    print()
    print(f"{spec}, {options.latency_ms} ms latency, concurrency {environment(sb)['CMSSYNC_CONCURRENCY']}")
    print(table(headers, rows))
    return 0


def _measure(name: str, args: list[str], sandbox: Sandbox, env: dict[str, str], log: Path) -> Measurement:
    measured = run_measured(name, args, sandbox=sandbox, env=env, log=log, python_args=["-P"])
    print(f"{name}: {measured.seconds:.1f} s, {measured.requests} requests, {measured.rss_mib:.0f} MiB", flush=True)
    if measured.code not in (0, 1):
        raise SystemExit(f"{name} failed ({measured.code}):\n{measured.tail(40)}")
    return measured


def _row(label: str, runs: list[Measurement]) -> list[object]:
    walls = [m.seconds for m in runs]
    last = runs[-1]
    split = ", ".join(f"{name} {count}" for name, count in families(last.by_route).items() if count)
    return [
        label,
        f"{statistics.median(walls):.1f}" + (f" ({min(walls):.1f}-{max(walls):.1f})" if len(runs) > 1 else ""),
        f"{statistics.median(m.cpu for m in runs):.1f}",
        f"{statistics.median(m.emulator_cpu for m in runs):.1f}",
        f"{max(m.rss_mib for m in runs):.0f}",
        last.requests,
        last.requests - families(last.by_route)["downloads"],
        split,
        last.code,
    ]


if __name__ == "__main__":
    os.environ.setdefault("PYTHONHASHSEED", "0")
    sys.exit(main())
