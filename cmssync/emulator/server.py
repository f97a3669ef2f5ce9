"""``cmssync emulator``: run the sandbox in the foreground until Ctrl-C."""

from __future__ import annotations

import signal
import socket
import sys
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from types import FrameType

import uvicorn

from cmssync.emulator.app import build_app
from cmssync.emulator.runtime import Emulator
from cmssync.emulator.settings import Settings


def bind(host: str, port: int) -> socket.socket:
    """A listening TCP socket (bound here so that port 0 can be reported as the port actually used)."""
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    # proto=IPPROTO_TCP matters: asyncio only sets TCP_NODELAY on accepted sockets whose proto says TCP, and
    # without it every response waits ~40 ms for a delayed ACK between its header and body writes.
    sock = socket.socket(family, socket.SOCK_STREAM, socket.IPPROTO_TCP)
    try:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        sock.bind((host, port))
        sock.listen(128)
        sock.setblocking(False)
    except OSError:
        sock.close()
        raise
    return sock


def run_emulator(settings: Settings, *, host: str, port: int) -> None:
    """Serve an emulator of ``settings`` on ``host:port`` until interrupted (Ctrl-C propagates as
    ``KeyboardInterrupt`` after a clean shutdown, so the caller can choose its exit code)."""
    emu = Emulator(settings)
    try:
        sock = bind(host, port)
        actual_port = sock.getsockname()[1]
        server = uvicorn.Server(uvicorn.Config(build_app(emu), log_level="warning", lifespan="off", date_header=False))
        shown = f"[{host}]" if ":" in host else host
        with _interrupts(server) as interrupted:
            print(
                f"cmssync emulator listening on http://{shown}:{actual_port}"
                f" (dialect {settings.dialect}, seed {settings.seed})",
                file=sys.stderr,
                flush=True,
            )
            try:
                server.run(sockets=[sock])
            finally:
                sock.close()
        if interrupted:
            raise KeyboardInterrupt
    finally:
        emu.close()


@contextmanager
def _interrupts(server: uvicorn.Server) -> Iterator[list[int]]:
    """Ctrl-C from the moment the address is printed: it stops the server whenever it comes, and is raised as
    ``KeyboardInterrupt`` once the server has stopped. (uvicorn takes SIGINT over only once it runs; one that came
    while it started was taken by asyncio's runner, which cancelled the server, and the process exited 0 — on a
    busy machine, where starting takes longer.) Off the main thread signals cannot be handled: nothing changes."""
    interrupted: list[int] = []
    if threading.current_thread() is not threading.main_thread():
        yield interrupted
        return

    def stop(sig: int, _frame: FrameType | None) -> None:
        interrupted.append(sig)
        server.should_exit = True

    previous = signal.signal(signal.SIGINT, stop)
    try:
        yield interrupted
    finally:
        signal.signal(signal.SIGINT, previous)
