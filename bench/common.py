"""Helpers of ``bench/run.py``: run a cmssync command as a child process and measure it, lower bounds, tables.

A measured command runs as ``python -m cmssync …`` in its own process, so that its peak memory is its own: the
child is reaped with ``os.wait4``, whose ``ru_maxrss`` is the peak resident set of exactly that child (KiB on
Linux). Its requests are counted by the sandbox (``/__emulator/stats``), not by cmssync. The sandbox runs in this
process (a uvicorn thread); ``emulator_cpu`` is this process's CPU time over the command, almost all of it the
sandbox's, so a sandbox that saturates its core shows up as ``emulator_cpu`` close to the wall time.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from types import TracebackType
from typing import Any

import httpx
import uvicorn
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route

from cmssync.emulator.embedded import Sandbox
from cmssync.emulator.server import bind

REPO = Path(__file__).resolve().parents[1]


@dataclass(frozen=True)
class Measurement:
    name: str
    seconds: float
    requests: int
    rss_mib: float
    code: int
    cpu: float
    """CPU time (user + system) of the cmssync process."""
    emulator_cpu: float
    output: str
    by_method: Mapping[str, int]
    by_route: Mapping[str, int]

    def tail(self, lines: int = 15) -> str:
        return "\n".join(self.output.splitlines()[-lines:])


def run_measured(
    name: str,
    args: Sequence[str],
    *,
    sandbox: Sandbox | None,
    env: Mapping[str, str],
    log: Path,
    python_args: Sequence[str] = (),
) -> Measurement:
    """Run ``python [python_args] -m cmssync ARGS``; wall time, peak RSS, requests the sandbox saw, exit code."""
    if sandbox is not None:
        sandbox.clear_stats()
    log.parent.mkdir(parents=True, exist_ok=True)
    cpu = time.process_time()
    started = time.perf_counter()
    with log.open("w", encoding="utf-8") as sink:
        process = subprocess.Popen(
            [sys.executable, *python_args, "-m", "cmssync", *args], cwd=REPO, env=dict(env), stdout=sink, stderr=sink
        )
        try:
            _, status, usage = os.wait4(process.pid, 0)
        except BaseException:
            process.kill()
            process.wait()
            raise
        process.returncode = os.waitstatus_to_exitcode(status)
    seconds = time.perf_counter() - started
    emulator_cpu = time.process_time() - cpu
    stats: dict[str, Any] = sandbox.stats() if sandbox is not None else {"total": 0, "by_method": {}, "by_route": {}}
    return Measurement(
        name=name,
        seconds=seconds,
        requests=int(stats["total"]),
        rss_mib=usage.ru_maxrss / 1024,
        code=process.returncode,
        cpu=usage.ru_utime + usage.ru_stime,
        emulator_cpu=emulator_cpu,
        output=log.read_text(encoding="utf-8", errors="replace"),
        by_method=dict(stats["by_method"]),
        by_route=dict(stats["by_route"]),
    )


def lower_bound(requests: int, concurrency: int, latency_s: float, chain: int = 1) -> float:
    """The fastest any client could be: every request costs the latency, ``concurrency`` at a time, and a chain of
    ``chain`` requests that must follow each other (one page's changes) cannot be shortened."""
    return max(requests / concurrency, chain) * latency_s


def table(headers: Sequence[str], rows: Sequence[Sequence[object]]) -> str:
    """A Markdown table (readable as plain text too)."""
    cells = [[str(h) for h in headers], *[[str(c) for c in row] for row in rows]]
    widths = [max(len(row[i]) for row in cells) for i in range(len(headers))]
    lines = ["| " + " | ".join(c.ljust(w) for c, w in zip(row, widths, strict=True)) + " |" for row in cells]
    lines.insert(1, "|" + "|".join("-" * (w + 2) for w in widths) + "|")
    return "\n".join(lines)


def machine() -> dict[str, str]:
    """What the numbers were measured on."""

    def command(*args: str) -> str:
        try:
            return subprocess.run(args, capture_output=True, text=True, check=False).stdout.strip()
        except OSError:
            return "(unavailable)"

    memory = command("free", "-h").splitlines()
    return {
        "date": time.strftime("%Y-%m-%d %H:%M %Z"),
        "nproc": command("nproc"),
        "memory": memory[1].split()[1] if len(memory) > 1 else "(unavailable)",
        "python": sys.version.split()[0],
        "platform": command("uname", "-srm"),
        "cpu": next(
            (
                line.split(":", 1)[1].strip()
                for line in Path("/proc/cpuinfo").read_text().splitlines()
                if line.startswith("model name")
            ),
            "(unknown)",
        )
        if Path("/proc/cpuinfo").exists()
        else "(unknown)",
    }


def fmt_s(seconds: float) -> str:
    return f"{seconds:.2f} s"


class UploadSink:
    """A loopback server in front of a sandbox that takes uploads of any size.

    The sandbox, like a PHP site with its default ``upload_max_filesize``, refuses a file over 20 MiB. This server
    forwards every request to the sandbox, except ``POST …/files``: it reads the whole multipart body (counting
    ``received`` bytes, keeping none), then uploads a small stand-in file of the same name to the sandbox and
    answers with the sandbox's answer. What is measured is the client streaming the big body.
    """

    def __init__(self, sandbox: Sandbox, filename: str) -> None:
        self.sandbox = sandbox
        self.filename = filename
        self.received = 0
        app = Starlette(routes=[Route("/{path:path}", self._handle, methods=["GET", "POST", "PUT", "DELETE"])])
        self._sock = bind("127.0.0.1", 0)
        self.url = f"http://127.0.0.1:{self._sock.getsockname()[1]}"
        self._server = uvicorn.Server(uvicorn.Config(app, log_level="warning", lifespan="off"))
        self._thread = threading.Thread(target=self._server.run, kwargs={"sockets": [self._sock]}, daemon=True)
        self._thread.start()
        deadline = time.monotonic() + 10
        while not self._server.started:
            if time.monotonic() > deadline:
                raise RuntimeError("the upload sink did not start")
            time.sleep(0.005)  # uvicorn offers no start event

    async def _handle(self, request: Request) -> Response:
        target = self.sandbox.url + request.url.path
        headers = {k: v for k, v in request.headers.items() if k.lower() not in ("host", "content-length")}
        async with httpx.AsyncClient(timeout=60) as upstream:
            if request.method == "POST" and request.url.path.endswith("/files"):
                async for chunk in request.stream():
                    self.received += len(chunk)
                headers.pop("content-type", None)
                answer = await upstream.post(
                    target, headers=headers, files={"file": (self.filename, b"stand-in", "video/mp4")}
                )
            else:
                answer = await upstream.request(
                    request.method, target, params=request.query_params, headers=headers, content=await request.body()
                )
        passed = {k: v for k, v in answer.headers.items() if k.lower() not in ("content-length", "content-encoding")}
        return Response(answer.content, status_code=answer.status_code, headers=passed)

    def __enter__(self) -> UploadSink:
        return self

    def __exit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        self._server.should_exit = True
        self._thread.join(timeout=30)
        self._sock.close()


class DaemonProcess:
    """``cmssync daemon`` as a process; its JSON log lines with the monotonic time they were read."""

    def __init__(self, root: Path, env: dict[str, str]) -> None:
        command = [sys.executable, "-m", "cmssync", "--log-format", "json", "daemon", str(root)]
        self.process = subprocess.Popen(command, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
        self.lines: list[tuple[float, dict[str, Any]]] = []
        self.changed = threading.Condition()
        threading.Thread(target=self._read, daemon=True).start()

    def _read(self) -> None:
        assert self.process.stderr is not None
        for text in self.process.stderr:
            try:
                line = json.loads(text)
            except ValueError:
                line = {"event": text.strip()}
            with self.changed:
                self.lines.append((time.monotonic(), line))
                self.changed.notify_all()

    def mark(self) -> int:
        with self.changed:
            return len(self.lines)

    def find(self, event: str, after: int, **fields: Any) -> tuple[float, dict[str, Any]] | None:
        with self.changed:
            for seen, line in self.lines[after:]:
                if line.get("event") == event and all(line.get(k) == v for k, v in fields.items()):
                    return seen, line
        return None

    def wait_for(
        self, event: str, after: int = 0, timeout: float = 120.0, **fields: Any
    ) -> tuple[float, dict[str, Any]]:
        with self.changed:
            self.changed.wait_for(
                lambda: self.find(event, after, **fields) is not None or self.process.poll() is not None, timeout
            )
        found = self.find(event, after, **fields)
        if found is None:
            raise SystemExit(f"daemon: no {event!r} (exit {self.process.poll()}); last lines: {self.lines[-5:]}")
        return found

    def stop(self) -> int:
        if self.process.poll() is None:
            self.process.send_signal(signal.SIGTERM)
            try:
                return self.process.wait(30)
            except subprocess.TimeoutExpired:
                self.process.kill()
        return self.process.wait()
