"""The two apply rows of ``bench/run.py`` on their own, in-process, for profiling: ``python -m bench.apply_profile``.

    python -m bench.apply_profile [--only first-apply|edits] [--profile DIR] [--work DIR] [--pages 1000 ...]

``run.py`` takes ~4 minutes and measures each command as a child process; to see where an apply's CPU goes, this
script runs only the first apply of the bench site to an empty sandbox and then the 1,000 block edits, each as
``cmssync apply --yes`` called in this process (the command line's ``main``, output to a log file), so that
``cProfile`` sees exactly cmssync's event loop. The sandbox runs as **another process** (``cmssync emulator``,
20 ms latency), so the CPU time of this process is cmssync's alone and the profile holds no sandbox frames.

The content is made once and kept under ``--work`` (default ``/tmp/cmssync-apply-profile``): a sandbox generating
the site, ``cmssync pull`` of its pages, files and users written as ``run.py`` writes them. Later runs reuse it.

Besides wall time, CPU, requests (the sandbox's count), the lower bound and the ratio (as in ``run.py``, concurrency
8), it measures how busy the request limiter was: the time-weighted mean of requests in flight, the share of the
time with all ``concurrency`` slots taken, and the share with a free slot and no request waiting for one (the
client had nothing ready to send: CPU, or actions waiting for each other).
"""

from __future__ import annotations

import argparse
import contextlib
import cProfile
import io
import json
import os
import pstats
import shutil
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

from bench.common import REPO, lower_bound
from bench.emulator_process import ADMIN_PASSWORD, SECRET, Emulator, free_port
from bench.probes import Sampler, measuring_occupancy, measuring_phases
from bench.run import (
    DEFAULT_CONCURRENCY,
    OBSERVE_DEPTH,
    PAGE_CREATE_CHAIN,
    USER_PASSWORD,
    edit_blocks,
    write_files_and_users,
)


def write_settings(root: Path, url: str, state: Path) -> None:
    settings = {
        "site": {"url": url},
        "auth": {"grant": "password", "client_id": "sandbox", "username": "admin"},
        "state": str(state),
        "concurrency": DEFAULT_CONCURRENCY,
        "prune": {"enabled": False},
    }
    (root / "cmssync.yaml").write_text(json.dumps(settings, indent=2) + "\n", encoding="utf-8")


def command_environment() -> None:
    for name in [name for name in os.environ if name.startswith("CMSSYNC_")]:
        del os.environ[name]
    os.environ.update(
        CMSSYNC_CLIENT_SECRET=SECRET,
        CMSSYNC_PASSWORD=ADMIN_PASSWORD,
        BENCH_USER_PASSWORD=USER_PASSWORD,
        CMSSYNC_CONCURRENCY=str(DEFAULT_CONCURRENCY),
    )


def prepare(options: argparse.Namespace) -> tuple[Path, int]:
    """The pulled content (made once per site size) and the port its links name."""
    spec = f"pages={options.pages},blocks={options.blocks},files={options.files},users={options.users}"
    base = options.work / spec.replace(",", "-").replace("=", "")
    content, port_file = base / "content", base / "port"
    if (base / "ready").exists():
        return content, int(port_file.read_text())
    shutil.rmtree(base, ignore_errors=True)
    content.mkdir(parents=True)
    port = free_port()
    port_file.write_text(str(port))
    print(f"making the content once ({spec}) in {base}", flush=True)
    emulator = Emulator(port, base / "emulator.log", "--seed", "empty", "--generate", spec)
    try:
        write_settings(content, emulator.url, base / "pull-state" / "state.json")
        result = subprocess.run(
            [sys.executable, "-m", "cmssync", "pull", str(content)], cwd=REPO, capture_output=True, text=True
        )
        if result.returncode != 0:
            raise SystemExit(f"pull failed:\n{result.stdout[-2000:]}{result.stderr[-2000:]}")
    finally:
        emulator.close()
    write_files_and_users(content, options.files, options.users)
    (base / "ready").write_text("")
    return content, port


def run_apply(
    name: str, root: Path, emulator: Emulator, out: Path, profile: Path | None, sampler: Sampler | None
) -> dict[str, Any]:
    """``cmssync apply --yes ROOT`` in this process; measured, optionally profiled."""
    from cmssync.cli import main

    emulator.stats(reset=True)
    emulator_cpu = emulator.cpu()
    log = io.StringIO()
    profiler = cProfile.Profile() if profile else None
    sampling = sampler if sampler is not None else contextlib.nullcontext()
    with measuring_occupancy(DEFAULT_CONCURRENCY) as occupancy, measuring_phases() as phases, sampling:
        cpu, started = time.process_time(), time.perf_counter()
        with contextlib.redirect_stdout(log), contextlib.redirect_stderr(log):
            if profiler:
                profiler.enable()
            code = main(["apply", "--yes", str(root)])
            if profiler:
                profiler.disable()
        seconds, cpu = time.perf_counter() - started, time.process_time() - cpu
    (out / f"{name}.log").write_text(log.getvalue(), encoding="utf-8")
    if code != 0:
        raise SystemExit(f"{name}: apply exited {code}:\n{log.getvalue()[-3000:]}")
    emulator_cpu = emulator.cpu() - emulator_cpu
    stats = emulator.stats()
    if profiler and profile:
        profiler.dump_stats(profile)
    return {
        "name": name,
        "seconds": round(seconds, 2),
        "cpu_s": round(cpu, 2),
        "requests": int(stats["total"]),
        "cpu_ms_per_request": round(cpu / max(1, int(stats["total"])) * 1000, 2),
        "routes": dict(sorted(stats["by_route"].items(), key=lambda item: -int(item[1]))[:12]),
        "emulator_cpu_s": round(emulator_cpu, 2),
        **phases,
        **occupancy.summary(),
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--pages", type=int, default=1000)
    parser.add_argument("--blocks", type=int, default=5)
    parser.add_argument("--files", type=int, default=1000)
    parser.add_argument("--users", type=int, default=500)
    parser.add_argument("--latency-ms", type=int, default=20)
    parser.add_argument("--edit-pages", type=int, default=200)
    parser.add_argument("--edit-blocks", type=int, default=5)
    parser.add_argument("--only", choices=["first-apply", "edits"], help="Profile/report only this row.")
    parser.add_argument("--profile", type=Path, help="Write a cProfile of each apply here (DIR/<row>.prof).")
    parser.add_argument("--sample", action="store_true", help="Sample the main thread's stack every 1 ms.")
    parser.add_argument("--top", type=int, default=25, help="Print this many top functions (cumulative, own).")
    parser.add_argument("--work", type=Path, default=Path("/tmp/cmssync-apply-profile"))
    options = parser.parse_args(argv)
    command_environment()
    content, port = prepare(options)
    run = options.work / "run"
    shutil.rmtree(run, ignore_errors=True)
    (run / "out").mkdir(parents=True)
    root = run / "site"
    shutil.copytree(content, root)
    emulator = Emulator(port, run / "emulator.log", "--seed", "empty", "--latency-ms", str(options.latency_ms))
    write_settings(root, emulator.url, run / "state" / "state.json")
    rows = []
    try:
        chains = {
            "first-apply": OBSERVE_DEPTH + 2 * PAGE_CREATE_CHAIN,
            "edits": 1 + options.edit_blocks + 1,
        }
        for name in ("first-apply", "edits"):
            if name == "edits":
                edit_blocks(root, options.edit_pages, options.edit_blocks)
            profile = options.profile / f"{name}.prof" if options.profile and options.only in (None, name) else None
            if profile:
                profile.parent.mkdir(parents=True, exist_ok=True)
            sampler = Sampler() if options.sample and options.only in (None, name) else None
            row = run_apply(name, root, emulator, run / "out", profile, sampler)
            bound = lower_bound(row["requests"], DEFAULT_CONCURRENCY, options.latency_ms / 1000, chains[name])
            row.update(lower_bound_s=round(bound, 2), ratio=round(row["seconds"] / bound, 2))
            if options.only in (None, name):
                rows.append(row)
                print(json.dumps(row), flush=True)
            if sampler:
                print(sampler.report(options.top), flush=True)
            if profile:
                for sort in ("cumulative", "tottime"):
                    pstats.Stats(str(profile)).sort_stats(sort).print_stats(options.top)
    finally:
        emulator.close()
    return 0


if __name__ == "__main__":
    sys.exit(main())
