"""One running emulator: settings, database, current dialect, faults and request statistics.

Created when the app starts (``--db`` is reused if it already holds a site; otherwise the seed is loaded) and
reset through ``POST /__emulator/reset``, which reseeds the same database file and clears faults, stats and tokens.
"""

from __future__ import annotations

import contextlib
import os
import random
import tempfile
from collections import Counter
from typing import Any

from cmssync.emulator import generator, seeds
from cmssync.emulator.caller import Caller
from cmssync.emulator.capacity import WorkerPool
from cmssync.emulator.faults import FaultEngine
from cmssync.emulator.settings import CONCRETE_PREFIX, DIALECTS, DOCUMENTED_PREFIX, Settings
from cmssync.emulator.store import Store, now


class Stats:
    """Request counts by method, route template and status."""

    def __init__(self) -> None:
        self.counts: Counter[tuple[str, str, int]] = Counter()

    def record(self, method: str, route: str, status: int) -> None:
        self.counts[(method, route, status)] += 1

    def clear(self) -> None:
        self.counts.clear()

    def snapshot(self) -> dict[str, Any]:
        by_method: Counter[str] = Counter()
        by_route: Counter[str] = Counter()
        by_status: Counter[str] = Counter()
        for (method, route, status), count in self.counts.items():
            by_method[method] += count
            by_route[f"{method} {route}"] += count
            by_status[str(status)] += count
        return {
            "total": sum(self.counts.values()),
            "by_method": dict(by_method),
            "by_route": dict(by_route),
            "by_status": dict(by_status),
            "requests": [
                {"method": m, "route": r, "status": s, "count": c} for (m, r, s), c in sorted(self.counts.items())
            ],
        }


class Emulator:
    def __init__(self, settings: Settings) -> None:
        self.settings = settings
        self.dialect = settings.dialect
        self.seed = settings.seed
        self.generate = settings.generate
        self._temp_path: str | None = None
        if settings.db is None:
            handle, self._temp_path = tempfile.mkstemp(prefix="cmssync-emulator-", suffix=".sqlite3")
            os.close(handle)
            path = self._temp_path
        else:
            path = settings.db
        self.store = Store(path)
        self.faults = FaultEngine(settings.latency_ms, settings.fault_seed)
        self.faults.set_rules(settings.faults, settings.fault_seed)
        self.stats = Stats()
        self.capacity = WorkerPool(settings.workers, settings.service_ms)
        self.upload_rng = random.Random()
        #: Verified bearer tokens -> (caller, expiry); dropped whenever a token may have been revoked.
        self.token_cache: dict[str, tuple[Caller, int]] = {}
        if self.store.is_empty():
            self.reseed(settings.seed, settings.generate)
        else:
            with self.store.transaction():
                seeds.apply_credentials(self.store, settings)
        self.signing_key = bytes.fromhex(self.store.get_meta("signing_key"))

    @property
    def prefixes(self) -> tuple[str, ...]:
        if self.dialect == "documented":
            return (DOCUMENTED_PREFIX, CONCRETE_PREFIX)
        return (CONCRETE_PREFIX,)

    @property
    def api_prefix(self) -> str:
        return self.prefixes[0]

    def forget_tokens(self) -> None:
        """Drop the verified-token cache (call after revoking tokens or deleting users)."""
        self.token_cache.clear()

    def reseed(self, seed: str, generate: str | None, dialect: str | None = None) -> None:
        if dialect is not None and dialect not in DIALECTS:
            raise ValueError(f"unknown dialect {dialect!r}")
        seeds.load_seed(seed)  # fail before wiping anything
        if generate:
            generator.parse_generate(generate)
        self.forget_tokens()
        self.store.wipe()
        with self.store.transaction():
            seeds.populate(self.store, self.settings, seed, generate, now())
        self.signing_key = bytes.fromhex(self.store.get_meta("signing_key"))
        self.seed, self.generate = seed, generate
        if dialect is not None:
            self.dialect = dialect

    def close(self) -> None:
        self.store.close()
        if self._temp_path is not None:
            for suffix in ("", "-wal", "-shm"):
                with contextlib.suppress(FileNotFoundError):
                    os.unlink(self._temp_path + suffix)
