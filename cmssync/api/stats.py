"""Counts of the requests a client made: by method, route template and status.

Route templates (``/pages/{page_id}``) rather than paths keep the number of series small; a transport failure is
counted under the status ``"error"``. The daemon exports these as Prometheus counters; plan and apply print totals.
"""

from __future__ import annotations

import threading
from collections import Counter
from dataclasses import dataclass, field


@dataclass(frozen=True, order=True)
class RequestKey:
    method: str
    route: str
    status: str
    """The HTTP status as text ("200", "404"), or "error" when no answer came."""


@dataclass
class RequestStats:
    """Thread-safe request counters; read with :meth:`snapshot`, :attr:`total` or :meth:`count`."""

    _counts: Counter[RequestKey] = field(default_factory=Counter)
    retries: int = 0
    reauthentications: int = 0
    token_requests: int = 0
    _lock: threading.Lock = field(default_factory=threading.Lock, repr=False)

    def record(self, method: str, route: str, status: int | str) -> None:
        with self._lock:
            self._counts[RequestKey(method.upper(), route, str(status))] += 1

    def record_retry(self) -> None:
        with self._lock:
            self.retries += 1

    def record_reauthentication(self) -> None:
        with self._lock:
            self.reauthentications += 1

    def record_token_request(self) -> None:
        with self._lock:
            self.token_requests += 1

    def snapshot(self) -> dict[RequestKey, int]:
        with self._lock:
            return dict(self._counts)

    @property
    def total(self) -> int:
        with self._lock:
            return sum(self._counts.values())

    def count(self, method: str | None = None, route: str | None = None, status: int | str | None = None) -> int:
        """Requests matching every filter given."""
        with self._lock:
            return sum(
                n
                for key, n in self._counts.items()
                if (method is None or key.method == method.upper())
                and (route is None or key.route == route)
                and (status is None or key.status == str(status))
            )

    def by_method(self) -> dict[str, int]:
        totals: Counter[str] = Counter()
        for key, n in self.snapshot().items():
            totals[key.method] += n
        return dict(totals)

    def reset(self) -> None:
        with self._lock:
            self._counts.clear()
            self.retries = self.reauthentications = self.token_requests = 0
