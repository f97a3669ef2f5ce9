"""A hostile server cannot take cmssync's memory (issue 15, item 7).

A server on loopback answers with a 200 MB body — to the token request, or to the first API read once a token was
given, with and without a ``Content-Length`` — streamed in chunks, so the server itself holds little. A real
``cmssync plan`` runs in a subprocess and reports its peak RSS (``ru_maxrss``). Before the cap, reading the body,
decoding it and parsing it took RSS to about 700 MB; the shipped Kubernetes limit is 512 MiB.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest

from tests.support.reliability_report import ReliabilityReport
from tests.support.sites import copy_example

HUGE = 200 * 1024 * 1024
CHUNK = b"x" * (1024 * 1024)
RSS_LIMIT_MIB = 200
"""Far below the 512 MiB container limit; a ``cmssync validate`` of the example takes about 70 MiB."""

PEAK = """
def peak_kib():
    # VmHWM: this process's own peak. Not ru_maxrss, which Linux carries over an exec from the forked parent, so a
    # large test process would be measured instead of the command.
    with open("/proc/self/status") as status:
        return int(next(line for line in status if line.startswith("VmHWM:")).split()[1])
"""
MEASURE = (
    PEAK
    + """
import sys
from cmssync.cli import main
code = main(sys.argv[1:])
print(f"peak-rss-kib {peak_kib()}", file=sys.stderr)
sys.exit(code)
"""
)


class HostileHandler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    huge_on = "token"
    declared = True

    def log_message(self, format: str, *args: object) -> None:
        return None

    def do_POST(self) -> None:
        self.rfile.read(int(self.headers.get("content-length", "0")))
        if self.huge_on == "token":
            self.huge('{"access_token": "')
        else:
            token = {"access_token": "tok-hostile-aaaaaaaa", "token_type": "Bearer", "expires_in": 3600}
            body = json.dumps(token).encode()
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

    def do_GET(self) -> None:
        self.huge('{"data": {"id": 1, "name": "')

    def huge(self, prefix: str) -> None:
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        if self.declared:
            self.send_header("Content-Length", str(HUGE))
        else:
            self.send_header("Connection", "close")  # the body ends when the connection does
        self.end_headers()
        try:
            self.wfile.write(prefix.encode())
            for _ in range(HUGE // len(CHUNK)):
                self.wfile.write(CHUNK)
        except (BrokenPipeError, ConnectionResetError):
            pass  # the client stopped reading: what it should do
        self.close_connection = True


@pytest.fixture
def hostile(request: pytest.FixtureRequest) -> Iterator[str]:
    huge_on, declared = request.param
    handler = type("Handler", (HostileHandler,), {"huge_on": huge_on, "declared": declared})
    server = ThreadingHTTPServer(("127.0.0.1", 0), handler)
    server.daemon_threads = True
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{server.server_address[1]}"
    server.shutdown()
    server.server_close()


@pytest.mark.parametrize(
    "hostile",
    [("token", True), ("token", False), ("api", True), ("api", False)],
    ids=["token-declared", "token-streamed", "api-declared", "api-streamed"],
    indirect=True,
)
def test_a_huge_answer_is_refused_with_bounded_memory(
    hostile: str, tmp_path: Path, reliability_report: ReliabilityReport
) -> None:
    root = tmp_path / "site"
    copy_example(root)
    env = {
        **os.environ,
        "CMSSYNC_URL": hostile,
        "CMSSYNC_CLIENT_SECRET": "hostile-client-secret",
        "CMSSYNC_PASSWORD": "hostile-password",
        "CMSSYNC_STATE": str(tmp_path / "state.json"),
    }
    result = subprocess.run(
        [sys.executable, "-c", MEASURE, "plan", str(root)],
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    rss_mib = _peak_rss_mib(result.stderr)
    reliability_report.add(cases_tried=1, faults_injected=1)
    reliability_report.maximum(peak_rss_mib_hostile_server=rss_mib)
    assert result.returncode == 1, result.stderr[-2000:]
    assert "the answer is too large" in result.stderr, result.stderr[-2000:]
    assert "Traceback" not in result.stderr
    assert rss_mib < RSS_LIMIT_MIB, f"peak RSS {rss_mib} MiB"


def _peak_rss_mib(stderr: str) -> int:
    lines = [line for line in stderr.splitlines() if line.startswith("peak-rss-kib ")]
    assert lines, stderr[-2000:]
    kib = int(lines[-1].split()[1])
    return kib // 1024  # Linux reports KiB


def test_the_measurement_sees_a_large_allocation() -> None:
    """The RSS figure above means something: a child that holds 300 MB reports more than the limit."""
    code = PEAK + "b = bytearray(300 << 20); b[::4096] = b'x' * len(b[::4096]); print(peak_kib())"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert int(out) // 1024 > RSS_LIMIT_MIB
    small = subprocess.run([sys.executable, "-c", PEAK + "print(peak_kib())"], capture_output=True, text=True)
    assert int(small.stdout) // 1024 < 100  # and a small one less, whatever this test process holds
