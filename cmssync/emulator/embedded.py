"""The sandbox in-process: a real uvicorn server on ``127.0.0.1:<free port>`` in a daemon thread.

Used by the test fixtures, by ``--sandbox`` and by the benchmarks::

    with Sandbox() as sandbox:
        httpx.post(sandbox.url + "/oauth/2.0/token", data={...})
        sandbox.reset(seed="empty")
        sandbox.set_faults(["503:0.5"], seed=1)

Control calls go through the ``/__emulator`` HTTP endpoints, so they are serialised with the requests the server is
handling (the database is only ever touched from the server's event loop while it runs).
"""

from __future__ import annotations

import threading
import time
from types import TracebackType
from typing import Any

import httpx
import uvicorn

from cmssync.emulator.app import build_app
from cmssync.emulator.runtime import Emulator
from cmssync.emulator.server import bind
from cmssync.emulator.settings import Settings

START_TIMEOUT = 10.0


class Sandbox:
    """A running emulator; stop it with :meth:`stop` or by leaving the ``with`` block."""

    def __init__(
        self,
        *,
        host: str = "127.0.0.1",
        port: int = 0,
        db: str | None = None,
        seed: str = "default",
        generate: str | None = None,
        dialect: str = "concrete",
        latency_ms: int = 0,
        workers: int = 0,
        service_ms: int = 0,
        faults: list[str] | None = None,
        client_id: str = "sandbox",
        client_secret: str = "sandbox-secret",
        admin_password: str = "sandbox-admin",
        token_ttl: int = 3600,
        fault_seed: int | None = None,
    ) -> None:
        self.settings = Settings(
            db=db,
            seed=seed,
            generate=generate,
            dialect=dialect,
            latency_ms=latency_ms,
            workers=workers,
            service_ms=service_ms,
            faults=list(faults or []),
            fault_seed=fault_seed,
            client_id=client_id,
            client_secret=client_secret,
            admin_password=admin_password,
            token_ttl=token_ttl,
        )
        self._emu = Emulator(self.settings)
        try:
            self._sock = bind(host, port)
        except OSError:
            self._emu.close()
            raise
        self.host = host
        self.port = int(self._sock.getsockname()[1])
        config = uvicorn.Config(build_app(self._emu), log_level="warning", lifespan="off", date_header=False)
        self._server = uvicorn.Server(config)
        self._thread = threading.Thread(
            target=self._server.run, kwargs={"sockets": [self._sock]}, name=f"cmssync-sandbox-{self.port}", daemon=True
        )
        self._stopped = False
        self._control_lock = threading.Lock()
        self._control_client: httpx.Client | None = None
        self._thread.start()
        deadline = time.monotonic() + START_TIMEOUT
        while not self._server.started:
            if not self._thread.is_alive() or time.monotonic() > deadline:
                self.stop()
                raise RuntimeError("the sandbox server did not start")
            time.sleep(0.002)  # uvicorn offers no start event to wait on, only this flag

    # --- addresses and credentials -----------------------------------------------------------------------------

    @property
    def url(self) -> str:
        return f"http://{self.host}:{self.port}"

    @property
    def dialect(self) -> str:
        return self._emu.dialect

    @property
    def api_prefix(self) -> str:
        return self._emu.api_prefix

    @property
    def api_url(self) -> str:
        return self.url + self.api_prefix

    @property
    def token_url(self) -> str:
        return self.url + "/oauth/2.0/token"

    @property
    def client_id(self) -> str:
        return self.settings.client_id

    @property
    def client_secret(self) -> str:
        return self.settings.client_secret

    @property
    def admin_username(self) -> str:
        return self.settings.admin_username

    @property
    def admin_password(self) -> str:
        return self.settings.admin_password

    # --- control -----------------------------------------------------------------------------------------------

    def _control(self, method: str, path: str, body: dict[str, Any] | None = None) -> dict[str, Any]:
        with self._control_lock:
            if self._control_client is None:
                # One client for all control calls: creating an httpx.Client loads the CA bundle (~50 ms).
                self._control_client = httpx.Client(base_url=self.url, timeout=60.0)
            response = self._control_client.request(method, "/__emulator" + path, json=body)
        if response.status_code != 200:
            raise ValueError(f"{method} /__emulator{path}: {response.status_code} {response.text}")
        result: dict[str, Any] = response.json()
        return result

    def reset(self, seed: str | None = None, dialect: str | None = None, generate: str | None = None) -> None:
        """Reseed and clear faults, stats and tokens. ``seed`` and ``dialect`` default to the current ones;
        nothing is generated unless ``generate`` is given."""
        given = (("seed", seed), ("dialect", dialect), ("generate", generate))
        self._control("POST", "/reset", {key: value for key, value in given if value is not None})

    def set_faults(self, rules: list[str], seed: int | None = None) -> None:
        """Replace the fault rules (``KIND:PROBABILITY[:key=value…]``); ``seed`` makes the dice repeatable."""
        self._control("POST", "/faults", {"rules": list(rules), "seed": seed, "replace": True})

    def clear_faults(self) -> None:
        self._control("DELETE", "/faults")

    def stats(self) -> dict[str, Any]:
        return self._control("GET", "/stats")

    def clear_stats(self) -> None:
        self._control("DELETE", "/stats")

    # --- lifecycle ---------------------------------------------------------------------------------------------

    def stop(self) -> None:
        if self._stopped:
            return
        self._stopped = True
        with self._control_lock:
            if self._control_client is not None:
                self._control_client.close()
        self._server.should_exit = True
        self._thread.join(timeout=30)
        self._sock.close()
        self._emu.close()

    def __enter__(self) -> Sandbox:
        return self

    def __exit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        self.stop()
