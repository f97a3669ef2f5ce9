"""Headless Chromium driven over the Chrome DevTools Protocol, for the HTML report's browser tests.

Debian's ``chromium`` package, never a downloaded browser. The browser is started with a fresh profile and
``--remote-debugging-port=0``; the port it picked is read from ``DevToolsActivePort`` in the profile, the page's
websocket from ``/json/list``, and CDP commands are sent over a synchronous ``websockets`` connection. Events that
arrive while waiting for a reply are kept, so a test can wait for ``Page.loadEventFired`` after ``Page.navigate``.

Only what the tests need: navigate and wait for load, evaluate JavaScript, read the whole DOM including the
documents inside frames (``DOM.getDocument`` with ``pierce``), emulate dark mode or print media, take a screenshot.
"""

from __future__ import annotations

import base64
import contextlib
import json
import os
import shutil
import subprocess
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx

CANDIDATES = ("/usr/bin/chromium", "/usr/bin/chromium-browser")
FLAGS = (
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
    "--disable-dev-shm-usage",
    "--hide-scrollbars",
    "--remote-debugging-port=0",
)


def find_chromium() -> str | None:
    explicit = os.environ.get("CMSSYNC_TEST_CHROMIUM")
    if explicit:
        return explicit if Path(explicit).exists() else None
    for candidate in CANDIDATES:
        if Path(candidate).exists():
            return candidate
    return shutil.which("chromium")


class CdpError(RuntimeError):
    pass


class Browser:
    """One headless Chromium process with one page; use as a context manager."""

    def __init__(self, executable: str, *, width: int = 1280, height: int = 900) -> None:
        self.executable = executable
        self.size = (width, height)
        self.events: list[dict[str, Any]] = []
        self._next_id = 0

    def __enter__(self) -> Browser:
        from websockets.sync.client import connect

        self.profile = tempfile.mkdtemp(prefix="cmssync-chromium-")
        self._stack = contextlib.ExitStack()
        self._stack.callback(shutil.rmtree, self.profile, ignore_errors=True)
        self.process = subprocess.Popen(
            [self.executable, *FLAGS, f"--user-data-dir={self.profile}", "about:blank"],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        self._stack.callback(self._stop)
        try:
            port = self._port()
            targets = httpx.get(f"http://127.0.0.1:{port}/json/list", timeout=10).json()
            page = next(t for t in targets if t.get("type") == "page")
            self.socket = self._stack.enter_context(
                connect(page["webSocketDebuggerUrl"], max_size=None, open_timeout=10)
            )
        except BaseException:
            self._stack.close()
            raise
        self.send("Page.enable")
        self.send("Runtime.enable")
        width, height = self.size
        self.send("Emulation.setDeviceMetricsOverride", width=width, height=height, deviceScaleFactor=1, mobile=False)
        return self

    def _port(self) -> int:
        marker = Path(self.profile) / "DevToolsActivePort"
        deadline = time.monotonic() + 20
        while time.monotonic() < deadline:
            if self.process.poll() is not None:
                raise CdpError(f"chromium exited with {self.process.returncode} before it listened")
            try:
                return int(marker.read_text().splitlines()[0])
            except (OSError, ValueError, IndexError):
                time.sleep(0.05)  # the browser writes the file once it listens; there is no event to await
        raise CdpError("chromium did not open its debugging port within 20 s")

    def __exit__(self, *exc: object) -> None:
        self._stack.close()

    def _stop(self) -> None:
        self.process.terminate()
        try:
            self.process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait()

    def send(self, method: str, session: str | None = None, **params: Any) -> dict[str, Any]:
        """One CDP command (to a frame's session when given), waiting for its reply."""
        self._next_id += 1
        ident = self._next_id
        message: dict[str, Any] = {"id": ident, "method": method, "params": params}
        if session is not None:
            message["sessionId"] = session
        self.socket.send(json.dumps(message))
        while True:
            message = json.loads(self.socket.recv(timeout=60))
            if message.get("id") == ident:
                if "error" in message:
                    raise CdpError(f"{method}: {message['error']}")
                result: dict[str, Any] = message.get("result", {})
                return result
            if "method" in message:
                self.events.append(message)

    def wait_event(self, method: str, timeout: float = 30) -> dict[str, Any]:
        deadline = time.monotonic() + timeout
        while True:
            for index, event in enumerate(self.events):
                if event["method"] == method:
                    return self.events.pop(index)
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                raise CdpError(f"no {method} within {timeout} s")
            message = json.loads(self.socket.recv(timeout=remaining))
            if "method" in message:
                self.events.append(message)

    def open(self, url: str) -> float:
        """Navigate and wait for the load event; the wall-clock seconds it took."""
        self.events.clear()
        started = time.perf_counter()
        self.send("Page.navigate", url=url)
        self.wait_event("Page.loadEventFired")
        return time.perf_counter() - started

    def evaluate(self, expression: str) -> Any:
        reply = self.send("Runtime.evaluate", expression=expression, returnByValue=True, awaitPromise=True)
        if "exceptionDetails" in reply:
            raise CdpError(f"{expression[:60]}…: {reply['exceptionDetails']}")
        return reply["result"].get("value")

    def wait_for(self, expression: str, timeout: float = 20) -> Any:
        """Poll a JavaScript condition until it is truthy (frames load asynchronously, with no event to the page)."""
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            value = self.evaluate(expression)
            if value:
                return value
            time.sleep(0.05)
        raise CdpError(f"still false after {timeout} s: {expression}")

    def frames(self) -> list[Frame]:
        """The page's child frames that run in their own process (Chromium isolates sandboxed frames), read
        through their own CDP sessions: the owner ``<iframe>``'s attributes and the frame's DOM."""
        found = []
        for target in self.send("Target.getTargets")["targetInfos"]:
            if target["type"] != "iframe":
                continue
            session = self.send("Target.attachToTarget", targetId=target["targetId"], flatten=True)["sessionId"]
            try:
                try:
                    owner = self.send("DOM.getFrameOwner", frameId=target["targetId"])["backendNodeId"]
                    node = self.send("DOM.describeNode", backendNodeId=owner)["node"]
                except CdpError:  # a frame inside a frame: its owner is in the other frame's document
                    node = {}
                root = self.send("DOM.getDocument", session, depth=-1, pierce=True)["root"]
            finally:
                self.send("Target.detachFromTarget", sessionId=session)
            found.append(Frame(attributes(node), root))
        return found

    def dom_nodes(self) -> Iterator[dict[str, Any]]:
        """Every node of the page, frames' documents included."""
        root = self.send("DOM.getDocument", depth=-1, pierce=True)["root"]
        stack = [root]
        while stack:
            node = stack.pop()
            yield node
            stack.extend(node.get("children", ()))
            stack.extend(node.get("shadowRoots", ()))
            if "contentDocument" in node:
                stack.append(node["contentDocument"])

    def emulate(self, *, dark: bool = False, media: str = "") -> None:
        features = [{"name": "prefers-color-scheme", "value": "dark" if dark else "light"}]
        self.send("Emulation.setEmulatedMedia", media=media, features=features)

    def screenshot(self, path: Path, *, full_page: bool = False) -> None:
        """A PNG of the viewport, or of the whole page (the viewport grown to the page's height, so that
        ``content-visibility: auto`` sections are rendered, which ``captureBeyondViewport`` does not do)."""
        width, height = self.size
        if full_page:
            height = int(self.evaluate("document.documentElement.scrollHeight"))
            self.send(
                "Emulation.setDeviceMetricsOverride", width=width, height=height, deviceScaleFactor=1, mobile=False
            )
            self.evaluate("new Promise(r => requestAnimationFrame(() => requestAnimationFrame(r)))")
        try:
            data = self.send("Page.captureScreenshot", format="png")["data"]
        finally:
            if full_page:
                width, height = self.size
                self.send(
                    "Emulation.setDeviceMetricsOverride", width=width, height=height, deviceScaleFactor=1, mobile=False
                )
        path.write_bytes(base64.b64decode(data))


def walk(root: dict[str, Any]) -> Iterator[dict[str, Any]]:
    stack = [root]
    while stack:
        node = stack.pop()
        yield node
        stack.extend(reversed(node.get("children", ())))
        if "contentDocument" in node:
            stack.append(node["contentDocument"])


class Frame:
    """A child frame as :meth:`Browser.frames` read it."""

    def __init__(self, owner: dict[str, str], document: dict[str, Any]) -> None:
        self.owner = owner
        self.document = document

    def nodes(self) -> Iterator[dict[str, Any]]:
        return walk(self.document)

    @property
    def text(self) -> str:
        """The text of the frame's body, whitespace collapsed (style and script elements left out)."""
        words: list[str] = []
        stack = [self.document]
        while stack:
            node = stack.pop()
            if node.get("nodeType") == 3:
                words.append(node["nodeValue"])
            if node.get("nodeName") not in ("STYLE", "SCRIPT", "HEAD"):
                stack.extend(reversed(node.get("children", ())))
        return " ".join(" ".join(words).split())

    @property
    def loaded(self) -> bool:
        return any(n.get("nodeName") == "BODY" for n in self.nodes())


def attributes(node: dict[str, Any]) -> dict[str, str]:
    flat = node.get("attributes", [])
    return dict(zip(flat[::2], flat[1::2], strict=True))
