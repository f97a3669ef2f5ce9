"""Probes of ``bench/apply_profile.py``: what the main thread is doing while cmssync applies, measured in-process.

* :func:`measuring_phases`: CPU seconds of the content load, the planning and the execution of the actions (it
  wraps ``load_content``, ``plan_site`` and ``execute`` where ``cmssync.sync`` calls them);
* :func:`measuring_occupancy`: how busy the transport's request limiter was while the actions ran;
* :class:`Sampler`: a sampling profiler of the main thread, whose overhead does not grow with the number of calls.
"""

from __future__ import annotations

import contextlib
import sys
import threading
import time
from collections.abc import AsyncIterator, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

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
    async def slot(self: limiter.FixedLimit, *args: Any, **kwargs: Any) -> AsyncIterator[limiter.Slot]:
        occupancy.change(waiting=1)
        async with original(self, *args, **kwargs) as held:  # the transport passes the method (since fbc0ca2)
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
    not grow with the number of calls, so the shares of call-heavy code (the HTTP stack) are not inflated.

    Its own bias: a sample is taken when the sampler thread gets the GIL, which is often the moment the main thread
    releases it for a system call, so time in system calls (``socket.send``, ``os.write``, ``epoll``) is
    over-represented against pure Python code; compare shares between runs, not across kinds of code. Idle time
    (``selectors.py:select``) is wall time, not CPU."""

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
