"""The two apply rows of ``bench/run.py`` on their own, in-process, for profiling: ``python bench/apply_profile.py``.

    python bench/apply_profile.py [--only first-apply|edits] [--profile DIR] [--work DIR] [--pages 1000 ...]

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
import socket
import subprocess
import sys
import threading
import time
from collections.abc import AsyncIterator, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import httpx

from bench.common import REPO, lower_bound
from bench.run import (
    DEFAULT_CONCURRENCY,
    OBSERVE_DEPTH,
    PAGE_CREATE_CHAIN,
    USER_PASSWORD,
    edit_blocks,
    write_files_and_users,
)

SECRET, ADMIN_PASSWORD = "sandbox-secret", "sandbox-admin"
PHASE = ["start"]
"""The phase the main thread is in (``measuring_phases``), read by the sampler."""


@dataclass
class Occupancy:
    """Time-weighted requests in flight in the transport's limiter (``FixedLimit.slot``), and requests waiting,
    while the actions are executed."""

    limit: int
    holding: int = 0
    waiting: int = 0
    last: float = field(default_factory=time.perf_counter)
    weighted: float = 0.0
    full: float = 0.0
    starved: float = 0.0
    total: float = 0.0

    def _tick(self) -> None:
        now = time.perf_counter()
        span = now - self.last
        self.last = now
        if PHASE[0] != "execute":  # only the execution of the actions: planning has its own, other, pattern
            return
        self.total += span
        self.weighted += self.holding * span
        if self.holding >= self.limit:
            self.full += span
        elif self.waiting == 0:
            self.starved += span

    def change(self, holding: int = 0, waiting: int = 0) -> None:
        self._tick()
        self.holding += holding
        self.waiting += waiting

    def summary(self) -> dict[str, float]:
        total = self.total or 1.0
        return {
            "mean_in_flight": round(self.weighted / total, 2),
            "all_slots_busy_pct": round(self.full / total * 100, 1),
            "nothing_ready_pct": round(self.starved / total * 100, 1),
        }


@contextlib.contextmanager
def measuring_occupancy(limit: int) -> Iterator[Occupancy]:
    from cmssync.api import limiter

    occupancy = Occupancy(limit)
    original = limiter.FixedLimit.slot

    @contextlib.asynccontextmanager
    async def slot(self: limiter.FixedLimit) -> AsyncIterator[limiter.Slot]:
        occupancy.change(waiting=1)
        async with original(self) as held:
            occupancy.change(holding=1, waiting=-1)
            try:
                yield held
            finally:
                occupancy.change(holding=-1)

    limiter.FixedLimit.slot = slot  # type: ignore[method-assign]
    try:
        yield occupancy
    finally:
        limiter.FixedLimit.slot = original  # type: ignore[method-assign]


class Emulator:
    """``cmssync emulator`` as a child process on a fixed port (the pulled content's absolute links name it)."""

    def __init__(self, port: int, log: Path, *args: str) -> None:
        self.url = f"http://127.0.0.1:{port}"
        command = [sys.executable, "-m", "cmssync", "emulator", "--port", str(port), *args]
        self.process = subprocess.Popen(command, cwd=REPO, stdout=log.open("w"), stderr=subprocess.STDOUT)
        deadline = time.monotonic() + 120  # generating a big site takes a while
        while True:
            with contextlib.suppress(httpx.HTTPError):
                httpx.get(self.url + "/__emulator/stats", timeout=2).raise_for_status()
                return
            if self.process.poll() is not None or time.monotonic() > deadline:
                raise SystemExit(f"the emulator did not start; see {log}")
            time.sleep(0.2)

    def stats(self, *, reset: bool = False) -> dict[str, Any]:
        answer = httpx.get(self.url + "/__emulator/stats", params={"reset": "1"} if reset else None, timeout=30)
        answer.raise_for_status()
        return dict(answer.json())

    def cpu(self) -> float:
        """The emulator process's CPU time so far (user + system), from ``/proc``."""
        fields = Path(f"/proc/{self.process.pid}/stat").read_text().rsplit(")", 1)[1].split()
        return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")

    def close(self) -> None:
        self.process.terminate()
        self.process.wait(timeout=30)


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


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


@contextlib.contextmanager
def measuring_phases() -> Iterator[dict[str, float]]:
    """CPU seconds of the content load, the planning (observe + plan) and the execution of the actions: the event
    loop runs nothing else during each, so the process's CPU time over a phase is that phase's."""
    from cmssync.sync import applying, workspace

    phases: dict[str, float] = {}
    names = ((workspace, "load_content"), (applying, "plan_site"), (applying, "execute"))
    originals = tuple(getattr(module, name) for module, name in names)

    def load_content(*args: Any, **kwargs: Any) -> Any:
        started, PHASE[0] = time.process_time(), "load"
        try:
            return originals[0](*args, **kwargs)
        finally:
            phases["load_cpu_s"], PHASE[0] = round(time.process_time() - started, 2), "start"

    async def plan_site(*args: Any, **kwargs: Any) -> Any:
        started, PHASE[0] = time.process_time(), "plan"
        try:
            return await originals[1](*args, **kwargs)
        finally:
            phases["plan_cpu_s"], PHASE[0] = round(time.process_time() - started, 2), "start"

    async def execute(*args: Any, **kwargs: Any) -> Any:
        started, wall, PHASE[0] = time.process_time(), time.perf_counter(), "execute"
        try:
            return await originals[2](*args, **kwargs)
        finally:
            phases["execute_cpu_s"] = round(time.process_time() - started, 2)
            phases["execute_wall_s"], PHASE[0] = round(time.perf_counter() - wall, 2), "end"

    for (module, name), wrapper in zip(names, (load_content, plan_site, execute), strict=True):
        setattr(module, name, wrapper)
    try:
        yield phases
    finally:
        for (module, name), original in zip(names, originals, strict=True):
            setattr(module, name, original)


class Sampler:
    """A sampling profiler of the main thread (``--sample``): every ``interval`` s a thread reads the main thread's
    stack and counts it by what it is doing, named by the innermost frame of cmssync's that is on the stack
    (``cmssync/api/...`` as ``client``: the HTTP client and everything under it). Unlike cProfile, its overhead does
    not grow with the number of calls, so the shares of call-heavy code (the HTTP stack) are not inflated."""

    def __init__(self, interval: float = 0.001) -> None:
        self.interval = interval
        self.counts: dict[str, int] = {}
        self.frames: dict[str, int] = {}
        self.categories: dict[str, int] = {}
        self._stop = threading.Event()
        self._main = threading.main_thread().ident
        self._thread = threading.Thread(target=self._run, daemon=True)

    def __enter__(self) -> Sampler:
        self._switch = sys.getswitchinterval()
        sys.setswitchinterval(self.interval / 4)
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        self._thread.join()
        sys.setswitchinterval(self._switch)

    def _run(self) -> None:
        while not self._stop.wait(self.interval):
            frame = sys._current_frames().get(self._main or 0)
            if frame is not None:
                self._count(frame)

    def _count(self, frame: Any) -> None:
        stack = []
        while frame is not None:
            stack.append(frame.f_code)
            frame = frame.f_back
        leaf = f"{Path(stack[0].co_filename).name}:{stack[0].co_name}"
        label = "outside cmssync (event loop, selectors)"
        for code in stack:  # innermost first
            path = code.co_filename
            if "/cmssync/" in path and "/bench/" not in path:
                module = path.split("/cmssync/", 1)[1]
                label = "client (cmssync/api and below)" if module.startswith("api/") else f"{module}:{code.co_name}"
                if any("/cmssync/api/" in c.co_filename for c in stack):
                    label = "client (cmssync/api and below)"
                break
        if leaf == "selectors.py:select":
            category = "idle (waiting in epoll)"
        elif label.startswith("client"):
            category = "client"
        elif "/cmssync/" not in label and ":" in label:
            category = label.split("/", 1)[0] if "/" in label else label.split(".py", 1)[0]
        else:
            category = "event loop and outside cmssync"
        label, leaf, category = (f"{PHASE[0]:7} {text}" for text in (label, leaf, category))
        self.counts[label] = self.counts.get(label, 0) + 1
        self.frames[leaf] = self.frames.get(leaf, 0) + 1
        self.categories[category] = self.categories.get(category, 0) + 1

    def report(self, top: int) -> str:
        total = sum(self.counts.values()) or 1
        lines = [f"samples: {total} (every {self.interval * 1000:g} ms)"]
        for title, counts in (
            ("by package of the innermost cmssync frame", self.categories),
            ("by innermost cmssync frame", self.counts),
            ("by leaf frame", self.frames),
        ):
            lines.append(title + ":")
            for label, count in sorted(counts.items(), key=lambda item: -item[1])[:top]:
                lines.append(f"  {count / total * 100:5.1f}%  {label}")
        return "\n".join(lines)


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
