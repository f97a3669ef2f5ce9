"""``cmssync daemon`` as a real subprocess against the session sandbox, with its JSON log lines at hand.

``DaemonProcess`` starts ``python -m cmssync --log-format json daemon DIR`` on a copy of ``content-example`` whose
``cmssync.yaml`` points at the sandbox (secrets through the environment, as in a container), reads its log lines
on a thread, and offers bounded waits for log events (a condition variable: no polling), the health port it
logged, ``/metrics`` parsed as Prometheus text, and signals. Every test stops the process in ``finally``.
"""

from __future__ import annotations

import io
import json
import os
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import httpx
from prometheus_client.parser import text_string_to_metric_families
from ruamel.yaml import YAML

from cmssync.emulator.embedded import Sandbox
from tests.support.rawsite import RawSite
from tests.support.tokens import sandbox_token

REPO = Path(__file__).resolve().parents[2]
EXAMPLE = REPO / "content-example"
PASSWORDS = {"JANE_EDITOR_PASSWORD": "jane-secret-1", "SAM_WRITER_PASSWORD": "sam-secret-1"}
TIMEOUT = 30.0
"""Upper bound of any wait for the daemon; normal waits end in well under a second or two."""

LogLine = dict[str, Any]


def write_settings(
    root: Path, sandbox: Sandbox, state_dir: Path, daemon: dict[str, Any], other: dict[str, Any] | None = None
) -> None:
    """Point the copied example at the sandbox; secrets stay out of the file (they come from the environment).
    ``other``: top-level settings besides ``daemon`` (``proposals``, ``drift``)."""
    yaml = YAML()
    path = root / "cmssync.yaml"
    settings = yaml.load(path.read_text())
    settings["site"] = {"url": sandbox.url, "api_prefix": "/ccm/api/1.0"}
    settings["auth"] = {
        "grant": "password",
        "client_id": sandbox.client_id,
        "username": sandbox.admin_username,
        "token_store": str(state_dir / "tokens.json"),
    }
    settings["state"] = str(state_dir / "state.json")
    # the drift feed only where a test asks for it: its polls would add requests and runs to what others count
    settings["daemon"] = {
        "watch": True,
        "debounce": "0.2s",
        "interval": None,
        "feed": None,
        "health": "127.0.0.1:0",
        **daemon,
    }
    settings.update(other or {})
    buffer = io.StringIO()
    yaml.dump(settings, buffer)
    path.write_text(buffer.getvalue())


def daemon_environment(sandbox: Sandbox) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("CMSSYNC_")}
    env.update(PASSWORDS)
    env["CMSSYNC_CLIENT_SECRET"] = sandbox.client_secret
    env["CMSSYNC_PASSWORD"] = sandbox.admin_password
    env["PYTHONPATH"] = os.pathsep.join([str(REPO), env.get("PYTHONPATH", "")]).rstrip(os.pathsep)
    return env


class DaemonProcess:
    def __init__(self, root: Path, env: dict[str, str], args: tuple[str, ...] = (), *, debug: bool = False) -> None:
        self.root = root
        self.lines: list[LogLine] = []
        self.raw: list[str] = []
        self._changed = threading.Condition()
        options = ["--log-format", "json", *(["--debug"] if debug else [])]
        command = [sys.executable, "-m", "cmssync", *options, "daemon", str(root), *args]
        self.process = subprocess.Popen(
            command, env=env, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True
        )
        self._reader = threading.Thread(target=self._read, name="daemon-log", daemon=True)
        self._reader.start()
        self.port = int(self.wait_for("health server listening")["port"])
        self.url = f"http://127.0.0.1:{self.port}"

    def _read(self) -> None:
        assert self.process.stderr is not None
        for text in self.process.stderr:
            with self._changed:
                self.raw.append(text)
                try:
                    line = json.loads(text)
                except ValueError:
                    line = {"event": text.rstrip("\n"), "unparsed": True}
                self.lines.append(line if isinstance(line, dict) else {"event": str(line)})
                self._changed.notify_all()
        with self._changed:
            self._changed.notify_all()

    # -- waiting ----------------------------------------------------------------------------------------------------

    def wait_for(self, event: str, timeout: float = TIMEOUT, after: int = 0, **fields: Any) -> LogLine:
        """The first log line (from index ``after``) with this event and these fields; fails after ``timeout``."""

        def match(line: LogLine) -> bool:
            return line.get("event") == event and all(line.get(k) == v for k, v in fields.items())

        return self.wait_until(lambda lines: next((ln for ln in lines[after:] if match(ln)), None), timeout, event)

    def wait_until(self, find: Callable[[list[LogLine]], LogLine | None], timeout: float, what: str) -> LogLine:
        deadline = time.monotonic() + timeout
        with self._changed:
            while True:
                found = find(self.lines)
                if found is not None:
                    return found
                left = deadline - time.monotonic()
                if left <= 0 or (self.process.poll() is not None and not self._reader.is_alive()):
                    raise AssertionError(f"no log line {what!r} within {timeout}s; log:\n{''.join(self.raw[-40:])}")
                self._changed.wait(left)

    def runs(self, **fields: Any) -> list[LogLine]:
        with self._changed:
            return [ln for ln in self.lines if ln.get("event") == "run finished" and _has(ln, fields)]

    def mark(self) -> int:
        """An index into the log: wait for lines after this point with ``wait_for(..., after=mark)``."""
        with self._changed:
            return len(self.lines)

    # -- endpoints --------------------------------------------------------------------------------------------------

    def get(self, path: str) -> httpx.Response:
        return httpx.get(self.url + path, timeout=5)

    def metrics(self) -> dict[tuple[str, tuple[tuple[str, str], ...]], float]:
        response = self.get("/metrics")
        response.raise_for_status()
        found: dict[tuple[str, tuple[tuple[str, str], ...]], float] = {}
        for family in text_string_to_metric_families(response.text):
            for sample in family.samples:
                found[(sample.name, tuple(sorted(sample.labels.items())))] = sample.value
        return found

    def runs_total(self, **labels: str) -> float:
        return sum(
            value
            for (name, found), value in self.metrics().items()
            if name == "cmssync_sync_runs_total" and _has(dict(found), labels)
        )

    # -- lifecycle --------------------------------------------------------------------------------------------------

    def signal(self, sig: signal.Signals) -> None:
        self.process.send_signal(sig)

    def terminate(self, timeout: float = 15.0) -> tuple[int, float]:
        """SIGTERM; the exit code and the seconds it took to exit."""
        started = time.monotonic()
        self.process.send_signal(signal.SIGTERM)
        code = self.process.wait(timeout)
        return code, time.monotonic() - started

    def kill(self) -> None:
        if self.process.poll() is None:
            self.process.kill()
            self.process.wait(10)
        self._reader.join(5)
        if self.process.stderr is not None:
            self.process.stderr.close()


def _has(line: dict[str, Any], fields: dict[str, Any]) -> bool:
    return all(line.get(k) == v for k, v in fields.items())


class DaemonSite:
    """A copy of content-example pointed at the sandbox; ``start()`` runs the daemon on it."""

    def __init__(self, root: Path, sandbox: Sandbox) -> None:
        self.root = root
        self.sandbox = sandbox
        self.state_dir = root.parent / "state"
        self.env = daemon_environment(sandbox)
        self.processes: list[DaemonProcess] = []

    def start(
        self, *args: str, debug: bool = False, settings: dict[str, Any] | None = None, **daemon: Any
    ) -> DaemonProcess:
        """Start the daemon (``debug``: with every API request in the log); ``daemon`` overrides settings of the
        ``daemon`` section, ``settings`` top-level ones."""
        write_settings(self.root, self.sandbox, self.state_dir, daemon, settings)
        process = DaemonProcess(self.root, self.env, args, debug=debug)
        self.processes.append(process)
        return process

    def reverting(self) -> DaemonSite:
        """``drift: revert`` in cmssync.yaml: editors' changes are written over (the behaviour before issue 34)."""
        settings = self.root / "cmssync.yaml"
        settings.write_text(settings.read_text() + "drift: revert\n")
        return self

    def edit(self, relative: str, old: str, new: str) -> None:
        """An editor's atomic save: a temporary file renamed over the target."""
        path = self.root / relative
        text = path.read_text()
        assert old in text, f"{old!r} not in {relative}"
        temp = path.with_name(f".{path.name}.swp-tmp")
        temp.write_text(text.replace(old, new))
        os.replace(temp, path)


class DriftMaker:
    """Someone editing the live site behind cmssync's back: a block changed and the version approved."""

    SCOPES = "pages:read pages:areas:update_block pages:versions:read pages:versions:update"

    def __init__(self, sandbox: Sandbox) -> None:
        token = sandbox_token(sandbox, self.SCOPES)
        self.http = httpx.Client(base_url=sandbox.api_url, headers={"Authorization": f"Bearer {token}"}, timeout=10)
        self.reader = RawSite(sandbox)

    def change_block(self, path: str, area: str, index: int, html: str) -> None:
        page = self.reader.page_by_path(path)
        assert page is not None, path
        areas = page["areas"]["data"] if isinstance(page["areas"], dict) else page["areas"]
        blocks = next(a["blocks"] for a in areas if a["name"] == area)
        blocks = blocks["data"] if isinstance(blocks, dict) else blocks
        block = blocks[index]
        response = self.http.put(f"/pages/{page['id']}/{area}/{block['id']}", json={"value": {"content": html}})
        response.raise_for_status()
        versions = self.reader.get(f"/page_versions/{page['id']}")
        newest = versions[0]
        assert not newest["is_approved"], versions[:2]
        self.http.put(f"/page_versions/{page['id']}/{newest['id']}", json={"is_approved": True}).raise_for_status()

    def close(self) -> None:
        self.http.close()
        self.reader.close()


# -- the drift feed, measured from the daemon's metrics and the sandbox's request counts ---------------------------

POLL = "0.25s"
TOKEN_ROUTE = "/oauth/2.0/token"


def polls(daemon: DaemonProcess, kind: str | None = None) -> float:
    """Polls of the drift feed (of one list only: ``page``, ``file``)."""
    return sum(
        value
        for (name, labels), value in daemon.metrics().items()
        if name == "cmssync_drift_feed_polls_total" and (kind is None or ("list", kind) in labels)
    )


def api_requests(sandbox: Sandbox) -> int:
    return sum(e["count"] for e in sandbox.stats()["requests"] if e["route"] != TOKEN_ROUTE)


def wait_for_poll(daemon: DaemonProcess, kind: str | None = None) -> None:
    """Until the drift feed polled (``kind``'s list, when given) at least once."""
    deadline = time.monotonic() + 10
    while polls(daemon, kind) < 1:
        assert time.monotonic() < deadline, "the drift feed never polled"
        time.sleep(0.05)


def idle(daemon: DaemonProcess, sandbox: Sandbox, seconds: float = 1.5) -> tuple[float, int]:
    """Polls made and requests the sandbox answered over ``seconds`` with nothing changing."""
    before = polls(daemon)
    sandbox.clear_stats()
    time.sleep(seconds)
    requests = api_requests(sandbox)
    return polls(daemon) - before, requests
