"""The no-op plan of the bench site, as a process and phase by phase: ``python -m bench.plan_bench`` (~1-2 min).

Issue 17's target: a no-op ``plan`` of the bench site (1,000 pages x 5 blocks in 10 sections, 1,000 files, 500
users; sandbox with 20 ms latency) in <= 1.5 s wall. ``bench/run.py`` measures it too, but only after a first apply
of the whole site (a minute or more); this bench builds the site in seconds and looks only at the plan:

1. a sandbox generates the site (``generate="pages=…,blocks=…,files=…,users=…"``, no latency while building);
2. ``cmssync pull`` writes it as content and records everything it wrote in the state. The generated files and
   users share one timestamp, so every list walk returns only part of them, and not always the same part
   (concrete-api.md §13): a no-op plan then reads the state-known ones its walks missed by id, ~300 "tie reads",
   as on ``run.py``'s site (the table shows how many);
3. a warm-up plan (fills the content's parse cache, as on any machine that planned before), then the latency is
   switched on;
4. per code tree (this checkout, and with ``--baseline DIR`` another checkout of cmssync, e.g. a
   ``git worktree add /tmp/base HEAD~3``, measured in the same run, the trees taking turns run by run so that a
   change in the machine's load hits both alike): ``--runs`` no-op plans as processes (``python -m cmssync plan
   --detailed-exitcode``: wall, CPU, requests counted by the sandbox), and ``--runs`` child processes timing the
   phases in-process: imports, content load (``open_workspace``), state load, observe
   (``cmssync.sync.observe.observe``), plan (``cmssync.plan.planner.plan``), wall and CPU each, and the child's
   peak RSS at the end of each phase (what the process held at most so far). The median of the runs is printed
   (the largest peak).

``--profile N`` also prints the N heaviest functions (cumulative and own time) of observe + plan in one more child
per code tree. The sandbox runs in this process; the measured commands are separate processes on the same cores.
"""

from __future__ import annotations

import argparse
import cProfile
import io
import json
import os
import pstats
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]
PHASES = ("imports", "content", "state", "observe", "plan")


# --- the child: phases in-process -----------------------------------------------------------------------------


def phases(root: Path, profile_top: int) -> dict[str, Any]:
    """Time the no-op plan of ``root`` phase by phase in this process (run as a child, so imports are cold)."""
    timings: dict[str, Any] = {}

    def lap(name: str, started: tuple[float, float]) -> tuple[float, float]:
        now = (time.perf_counter(), time.process_time())
        peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024  # KiB on Linux
        timings[name] = {"wall": now[0] - started[0], "cpu": now[1] - started[1], "peak_mib": peak}
        return now

    mark = (time.perf_counter(), time.process_time())
    import asyncio
    import logging

    import cmssync.cli  # noqa: F401  (what the command imports too)
    from cmssync.logs import configure_logging
    from cmssync.plan import planner
    from cmssync.plan.request import PlanRequest
    from cmssync.sync.observe import observe
    from cmssync.sync.workspace import open_workspace

    mark = lap("imports", mark)
    configure_logging(level=logging.INFO)  # as the command does: no debug line per request
    workspace = open_workspace(root)
    mark = lap("content", mark)
    state = workspace.load_state()
    mark = lap("state", mark)
    profiler = cProfile.Profile() if profile_top else None

    observed: list[Any] = []

    async def observe_site() -> None:
        # Returns nothing: on Python 3.11, asyncio.run's SIGINT handling reprs the main task, result included, when
        # it restores the handler (a full repr of a 1,000-page snapshot), which the CLI's commands (an int) avoid.
        async with workspace.client() as client:
            observed.append(await observe(client, workspace.content, state))
            timings["requests"] = client.stats.total

    if profiler is not None:
        profiler.enable()
    asyncio.run(observe_site())
    snapshot = observed[0]
    mark = lap("observe", mark)
    plan = planner.plan(workspace.content, snapshot, state, workspace.plan_options(state, PlanRequest()))
    lap("plan", mark)
    if profiler is not None:
        profiler.disable()
        timings["profile"] = _profile_text(profiler, profile_top)
    timings["actions"] = len(plan.actions)
    timings["pages"] = len(snapshot.pages)
    return timings


def _profile_text(profiler: cProfile.Profile, top: int) -> str:
    out = io.StringIO()
    stats = pstats.Stats(profiler, stream=out)
    stats.sort_stats("cumulative").print_stats(top)
    stats.sort_stats("tottime").print_stats(top)
    return "\n".join(line for line in out.getvalue().splitlines() if line.strip())


# --- the parent: site, runs, table ----------------------------------------------------------------------------


def _median(runs: list[dict[str, Any]], phase: str, clock: str) -> float:
    return float(statistics.median(run[phase][clock] for run in runs))


def _env_for(tree: Path, base: dict[str, str]) -> dict[str, str]:
    env = dict(base)
    env["PYTHONPATH"] = str(tree) + (os.pathsep + env["PYTHONPATH"] if env.get("PYTHONPATH") else "")
    return env


def _run_phases(tree: Path, root: Path, env: dict[str, str], profile_top: int = 0) -> dict[str, Any]:
    """The in-process phases of one plan, in a child running ``tree``'s code (``env`` from :func:`_env_for`)."""
    result = subprocess.run(
        [sys.executable, str(Path(__file__).resolve()), "--phases", str(root), "--profile", str(profile_top)],
        cwd=tree,
        env=env,
        capture_output=True,
        text=True,
        check=False,
    )
    if result.returncode != 0:
        raise SystemExit(f"the phases child failed in {tree}:\n{result.stdout[-3000:]}{result.stderr[-3000:]}")
    timings: dict[str, Any] = json.loads(result.stdout.strip().splitlines()[-1])
    return timings


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--pages", type=int, default=1000)
    parser.add_argument("--blocks", type=int, default=5)
    parser.add_argument("--files", type=int, default=1000)
    parser.add_argument("--users", type=int, default=500)
    parser.add_argument("--latency-ms", type=int, default=20)
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--baseline", type=Path, help="Another checkout of cmssync to measure side by side.")
    parser.add_argument("--profile", type=int, default=0, metavar="N", help="Print the N heaviest functions.")
    parser.add_argument("--phases", type=Path, help=argparse.SUPPRESS)  # the child's mode
    options = parser.parse_args(argv)
    if options.phases is not None:
        print(json.dumps(phases(options.phases, options.profile)))
        return 0

    import httpx

    from bench.common import run_measured, table
    from bench.run import environment, site_settings, tie_reads
    from cmssync.emulator.embedded import Sandbox

    trees = [("this checkout", REPO)]
    if options.baseline is not None:
        trees.insert(0, ("baseline " + str(options.baseline), options.baseline.resolve()))
    spec = f"pages={options.pages},blocks={options.blocks},files={options.files},users={options.users}"
    print(f"sandbox: generate {spec}; latency {options.latency_ms} ms while measuring", flush=True)
    with (
        tempfile.TemporaryDirectory(prefix="cmssync-plan-bench-") as temp,
        Sandbox(seed="empty", generate=spec) as sandbox,
    ):
        work = Path(temp)
        root = work / "site"
        root.mkdir()
        site_settings(root, sandbox, work / "state" / "state.json")
        env = environment(sandbox)
        started = time.perf_counter()
        pulled = run_measured("pull", ["pull", str(root)], sandbox=sandbox, env=env, log=work / "pull.log")
        if pulled.code != 0:
            raise SystemExit(f"pull failed:\n{pulled.tail(40)}")
        warm = run_measured(
            "warm-up", ["plan", "--detailed-exitcode", str(root)], sandbox=sandbox, env=env, log=work / "warm.log"
        )
        if warm.code != 0:
            raise SystemExit(f"the warm-up plan is not a no-op ({warm.code}):\n{warm.tail(40)}")
        counts = {
            "pages": len(list((root / "pages").rglob("*.yaml"))),
            "files": len([p for p in (root / "files").rglob("*") if p.is_file()]) if (root / "files").exists() else 0,
        }
        print(f"built in {time.perf_counter() - started:.1f} s: content {counts}", flush=True)
        faults = httpx.post(sandbox.url + "/__emulator/faults", json={"rules": [], "latency_ms": options.latency_ms})
        faults.raise_for_status()

        # Each code tree plans from its own copy of the state directory and its own per-user cache (older trees keep
        # the parse cache beside the state, newer ones in $XDG_CACHE_HOME): the parse cache is keyed by the code's
        # version, so a shared one would be rebuilt (a cold load) by every other tree's run.
        tree_envs: dict[str, dict[str, str]] = {}
        for index, (label, tree) in enumerate(trees):
            own = work / f"state-{index}"
            shutil.copytree(work / "state", own)
            tree_envs[label] = {
                **_env_for(tree, env),
                "CMSSYNC_STATE": str(own / "state.json"),
                "XDG_CACHE_HOME": str(work / f"cache-{index}"),
            }
            _run_phases(tree, root, tree_envs[label])  # warms this tree's parse cache
        # The code trees take turns, run by run, so a change in the machine's load hits each of them alike.
        measured_runs: dict[str, list[Any]] = {label: [] for label, _ in trees}
        phase_runs: dict[str, list[dict[str, Any]]] = {label: [] for label, _ in trees}
        for run in range(options.runs):
            for label, tree in trees:
                measured = run_measured(
                    "plan",
                    ["plan", "--detailed-exitcode", str(root)],
                    sandbox=sandbox,
                    env=tree_envs[label],
                    log=work / f"plan-{run}.log",
                    python_args=["-P"],  # the command runs in this checkout: -P keeps it off sys.path, PYTHONPATH picks
                )
                if measured.code != 0:
                    raise SystemExit(f"{label}: the plan is not a no-op ({measured.code}):\n{measured.tail(40)}")
                measured_runs[label].append(measured)
                phase_runs[label].append(_run_phases(tree, root, tree_envs[label]))
        rows: list[list[object]] = []
        profiles: list[tuple[str, str]] = []
        for label, tree in trees:
            walls = [m.seconds for m in measured_runs[label]]
            runs = phase_runs[label]
            phase_cells = [f"{_median(runs, p, 'wall'):.2f} / {_median(runs, p, 'cpu'):.2f}" for p in PHASES]
            peaks = " / ".join(f"{max(r[p]['peak_mib'] for r in runs):.0f}" for p in PHASES)
            total = statistics.median(sum(r[p]["wall"] for p in PHASES) for r in runs)
            rows.append(
                [
                    label,
                    f"{statistics.median(walls):.2f} s ({min(walls):.2f}-{max(walls):.2f})",
                    f"{statistics.median(m.cpu for m in measured_runs[label]):.2f} s",
                    f"{max(m.requests for m in measured_runs[label])} "
                    f"({max(tie_reads(m.by_route) for m in measured_runs[label])})",
                    *phase_cells,
                    f"{total:.2f} s",
                    peaks,
                ]
            )
            if options.profile:
                profiles.append((label, _run_phases(tree, root, tree_envs[label], options.profile)["profile"]))
        shutil.rmtree(work / "state", ignore_errors=True)
    headers = [
        "code",
        "process wall (min-max)",
        "process CPU",
        "requests (tie reads)",
        *[f"{p} wall/CPU s" for p in PHASES],
        "in-process total",
        "peak RSS MiB after each phase",
    ]
    print()
    print(f"no-op plan, {spec}, {options.latency_ms} ms latency, median of {options.runs} runs")
    print(table(headers, rows))
    for label, text in profiles:
        print(f"\nprofile of observe + plan, {label}:\n{text}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
