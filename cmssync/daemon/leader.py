"""Leader election between daemon replicas of one site: exactly one writes, the others stand by and take over.

The election is the state backend's own lock, under a key of its own (:meth:`PostgresStateBackend.try_lead`): a
PostgreSQL session advisory lock held by the leader's connection for as long as it leads. It goes the moment that
session ends — the leader exits, is killed, or its host is gone (TCP keepalives end a silent session in about 25 s)
— so a standby that asks again every ``RETRY`` seconds takes over within ``RETRY`` seconds of a leader that died
(plus the keepalive time when its host vanished). No lease to renew, no clock to trust.

A standby serves ``/livez``, ``/readyz`` (200: ready to take over), ``/metrics`` and ``/status``, which say
``"role": "standby"`` and who leads; it starts no run, no watcher, no schedule and no feed. The leader checks its
session every ``CHECK`` seconds: when the database ended it (a restart, a network cut), the lock is gone and another
replica may lead already, so the daemon stops (exit 1, to be restarted by its orchestrator and stand by) instead of
writing unlocked. A backend without leadership (``local``, ``http``) runs every daemon as the leader, as before:
run one replica per site there.
"""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
from typing import Any, Final, Literal, Protocol, runtime_checkable

import structlog

from cmssync.errors import StateError, StateLockedError
from cmssync.state.store import LockHolder

log = structlog.get_logger("cmssync.daemon")

RETRY: Final = 2.0
"""Seconds between a standby's attempts to lead."""
CHECK: Final = 5.0
"""Seconds between the leader's checks that its session (and so its lock) is alive."""

Role = Literal["leader", "standby", "single"]


@runtime_checkable
class Electing(Protocol):
    """A state backend that can elect a leader (the PostgreSQL one)."""

    location: str

    def try_lead(self, command: str) -> contextlib.AbstractContextManager[LockHolder]: ...

    def still_leading(self) -> bool: ...

    def leader(self) -> LockHolder | None: ...


class Leadership:
    """This replica's role, and the lock that makes it the leader while it is held."""

    def __init__(self, backend: Electing | None, *, retry: float = RETRY, check: float = CHECK) -> None:
        self.backend = backend
        self.role: Role = "single" if backend is None else "standby"
        self.leader: LockHolder | None = None
        """Who leads (this replica once it does); None while unknown."""
        self.since: str | None = None
        self._retry, self._check = retry, check
        self._held = contextlib.ExitStack()

    async def campaign(self, stop: asyncio.Event) -> bool:
        """Wait until this replica leads (True) or ``stop`` is set (False); a backend without leadership leads at
        once. Errors of the database while standing by are logged and tried again."""
        if self.backend is None:
            return True
        backend = self.backend
        told: str | None = None
        while not stop.is_set():
            try:
                holder = await asyncio.to_thread(self._held.enter_context, backend.try_lead("cmssync daemon"))
            except StateLockedError:
                self.leader = await asyncio.to_thread(_quietly, backend.leader)
                now = self.leader.describe() if self.leader is not None else "a replica starting"
                if now != told:
                    log.info("standing by: another replica leads", state=backend.location, leader=now)
                    told = now
            except StateError as exc:
                log.warning("standing by: cannot reach the state to campaign", state=backend.location, error=str(exc))
            else:
                self.role, self.leader, self.since = "leader", holder, holder.since
                log.info("leading: this replica writes", state=backend.location, lock_id=holder.id)
                return True
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(stop.wait(), self._retry)
        return False

    async def watch(self) -> None:
        """Return once the leader's session is gone (the lock with it); never, for a backend without leadership."""
        if self.backend is None:
            await asyncio.Event().wait()
            return
        backend = self.backend
        alive = True
        while alive:
            await asyncio.sleep(self._check)  # a check of the session, not a wait for an event of this process
            alive = await asyncio.to_thread(backend.still_leading)
        log.error("lost the leadership: the database ended this replica's session; stopping", state=backend.location)

    def release(self) -> None:
        """Step down (closing the session releases the lock at once, for a standby to take over)."""
        self._held.close()
        if self.role == "leader":
            self.role, self.leader = "standby", None

    def document(self) -> dict[str, Any]:
        """What ``/readyz`` and ``/status`` say about the election."""
        body: dict[str, Any] = {"role": self.role}
        if self.backend is not None:
            body["leader"] = None if self.leader is None else dataclasses.asdict(self.leader)
        return body


def _quietly(read: Any) -> LockHolder | None:
    try:
        holder: LockHolder | None = read()
    except StateError:
        return None
    return holder


def electing(backend: object) -> Electing | None:
    """``backend`` when it can elect a leader, else None."""
    return backend if isinstance(backend, Electing) else None
