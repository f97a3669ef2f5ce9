"""``cmssync emulator`` as a child process, for the benches that measure cmssync in-process against it."""

from __future__ import annotations

import contextlib
import os
import socket
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import httpx

from bench.common import REPO

SECRET, ADMIN_PASSWORD = "sandbox-secret", "sandbox-admin"


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
