"""State backends: where the state lives and how two runs are kept apart (docs/state.md).

A backend loads and saves the :class:`~cmssync.state.records.State` and holds the lock of a run. Three kinds:

* ``local`` (the string form ``state: PATH``, and the default): :class:`LocalStateBackend`, the file store of
  :mod:`cmssync.state.store` unchanged — journal, atomic snapshot, ``flock`` lock with a holder record.
* ``http`` (``state: {backend: http, address: …}``): :class:`~cmssync.state.http_backend.HttpStateBackend`,
  Terraform's HTTP state protocol (GitLab's managed Terraform state speaks it), with a lock id per run.
* ``postgresql`` (``state: postgresql://…#name``): :class:`~cmssync.state.postgres_backend.PostgresStateBackend`,
  the file backend's journal as rows, a session advisory lock that dies with its run.

What both promise (:class:`StateBackend`): ``load`` writes nothing; after ``save`` the changes are kept (the local
file at once; over HTTP at most ``save_interval`` seconds later, and always by ``compact`` and when the lock is
released); ``try_lock`` takes the lock or raises ``StateLockedError`` naming the holder at once. Waiting for a lock
(``lock_timeout``, ``--lock-timeout``) is built on that here, once for both: :func:`waiting_lock` sleeps (for
``pull`` and tests), :func:`holding_lock` awaits (for ``apply`` and the daemon, whose event loop also serves
``/healthz`` while it waits).

The password key (:class:`~cmssync.state.keyring.KeyRing`) never travels with the state: from ``CMSSYNC_STATE_KEY``
(hex, a CI secret) when it is set, whatever the backend; otherwise from the file ``<path>.key`` on this machine —
for ``http`` that file is lost with a CI runner, and every password then counts as changed once per run (set again,
harmlessly), which a warning says. The key is registered as a secret, so no log line or message can print it.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import socket
import time
from collections.abc import AsyncIterator, Callable, Iterator
from contextlib import AbstractContextManager
from pathlib import Path
from typing import TYPE_CHECKING, Final, Protocol

from cmssync.errors import StateError, StateLockedError
from cmssync.state.keyring import FixedKeyRing, key_from_environment
from cmssync.state.records import State
from cmssync.state.store import LockHolder, StateStore, read_lock_holder

if TYPE_CHECKING:
    from cmssync.config import Settings

log = logging.getLogger(__name__)

_FIRST_WAIT: Final = 0.2
_LONGEST_WAIT: Final = 2.0


class StateBackend(Protocol):
    """Where the state lives. Not thread-safe for mutation; one run uses one backend from one thread."""

    location: str
    """Where, for messages: a path, or a URL without credentials."""
    lock_timeout: float
    """Seconds :func:`waiting_lock` and :func:`holding_lock` wait for a held lock; 0: not at all."""

    def load(self) -> State: ...

    def save(self, state: State) -> None: ...

    def compact(self, state: State | None = None) -> None:
        """Make every save so far durable now (local: fold the journal; http: upload what is pending)."""

    def try_lock(self, command: str) -> AbstractContextManager[LockHolder]:
        """Hold the lock for ``command``, or raise ``StateLockedError`` naming the holder without waiting."""

    def lock_holder(self) -> LockHolder | None:
        """The recorded holder, read without taking the lock (``status``); None when free or unknowable."""

    def inspect_lock(self) -> LockHolder | None:
        """The holder now, for ``force-unlock`` (may take and release the lock to find out); None when free."""

    def force_unlock(self, lock_id: str) -> None:
        """Release the lock ``lock_id`` held by another run; raise ``StateError`` when it cannot be."""


class LocalStateBackend(StateStore):
    """The state file of :class:`~cmssync.state.store.StateStore`, as a :class:`StateBackend`.

    Its lock is the kernel's ``flock``: it goes the moment its holder exits, so there is never a stale lock to
    break, and ``force_unlock`` only explains that (a held flock cannot be taken from a running process)."""

    def __init__(self, path: Path, *, lock_timeout: float = 0.0, key: bytes | None = None) -> None:
        super().__init__(path)
        self.location = str(self.path)
        self.lock_timeout = lock_timeout
        self._key = key

    def load(self) -> State:
        state = super().load()
        if self._key is not None:
            state._keyring = FixedKeyRing(self._key)
        return state

    def try_lock(self, command: str) -> AbstractContextManager[LockHolder]:
        return StateStore.lock(self, command)

    def lock_holder(self) -> LockHolder | None:
        return read_lock_holder(self.path)

    def inspect_lock(self) -> LockHolder | None:
        try:
            with self.try_lock("cmssync force-unlock (inspecting the lock)"):
                return None
        except StateLockedError:
            holder = read_lock_holder(self.path)
            if holder is None:
                raise StateLockedError(
                    f"{self.lock_path}: locked by a process that has not recorded itself yet; try again"
                ) from None
            return holder

    def force_unlock(self, lock_id: str) -> None:
        holder = self.inspect_lock()
        if holder is None:
            return  # released meanwhile: nothing to do
        how = f"`kill {holder.pid}`" if holder.host == socket.gethostname() else f"stopping pid {holder.pid} there"
        raise StateError(
            f"{self.lock_path}: a local state lock is the kernel's flock, held by {holder.describe()}; it cannot be "
            f"taken from a running process and goes the moment it exits: wait for it, or end it with {how}"
        )


def open_state_backend(settings: Settings, base_dir: Path, *, lock_timeout: float | None = None) -> StateBackend:
    """The backend ``settings.state`` names; ``lock_timeout`` (``--lock-timeout``) wins over the setting."""
    from cmssync.state.http_backend import HttpStateBackend

    wait = settings.lock_timeout if lock_timeout is None else lock_timeout
    key = key_from_environment()
    chosen = settings.state_settings
    path = settings.state_path(base_dir)
    if chosen.backend == "local":
        return LocalStateBackend(path, lock_timeout=wait, key=key)
    if chosen.backend == "postgresql":
        from cmssync.state.postgres_backend import PostgresStateBackend

        return PostgresStateBackend(chosen, key_path=path.with_name(path.name + ".key"), key=key, lock_timeout=wait)
    return HttpStateBackend(
        chosen,
        key_path=path.with_name(path.name + ".key"),
        spool_path=path.with_name(path.name + ".spool"),
        key=key,
        lock_timeout=wait,
        timeout=settings.timeout,
    )


@contextlib.contextmanager
def waiting_lock(backend: StateBackend, command: str) -> Iterator[LockHolder]:
    """Hold the lock, waiting up to ``backend.lock_timeout`` seconds (sleeping) for a run that holds it."""
    with contextlib.ExitStack() as stack:
        attempts = _Attempts(backend, command, stack)
        for wait in attempts:
            time.sleep(wait)
        yield attempts.holder


@contextlib.asynccontextmanager
async def holding_lock(backend: StateBackend, command: str) -> AsyncIterator[LockHolder]:
    """:func:`waiting_lock` for async code: the event loop keeps running while it waits."""
    with contextlib.ExitStack() as stack:
        attempts = _Attempts(backend, command, stack)
        for wait in attempts:
            await asyncio.sleep(wait)
        yield attempts.holder


class _Attempts:
    """Tries to take the lock into ``stack``; iterating yields how long to wait before the next try, and ends
    once the lock is held (:attr:`holder`) or raises when the wait would pass ``backend.lock_timeout``."""

    def __init__(self, backend: StateBackend, command: str, stack: contextlib.ExitStack) -> None:
        self.backend, self.command, self.stack = backend, command, stack
        self.holder: LockHolder

    def __iter__(self) -> Iterator[float]:
        deadline = time.monotonic() + self.backend.lock_timeout
        wait = _FIRST_WAIT
        while True:
            try:
                self.holder = self.stack.enter_context(self.backend.try_lock(self.command))
                return
            except StateLockedError as exc:
                wait = _next_wait(self.backend, exc, deadline, wait)
                yield wait


def _next_wait(backend: StateBackend, exc: StateLockedError, deadline: float, wait: float) -> float:
    """The pause before the next attempt, or raise: the timeout is over (the message says how long it waited)."""
    left = deadline - time.monotonic()
    if left <= 0:
        if backend.lock_timeout > 0:
            raise StateLockedError(f"{exc} (waited {backend.lock_timeout:g} s for it: --lock-timeout)") from None
        raise exc
    if wait == _FIRST_WAIT:
        log.info("waiting up to %.0f s for the state lock: %s", left, exc)
    return min(wait * 2, _LONGEST_WAIT, left)


def force_unlock(backend: StateBackend, lock_id: str, *, confirm: Callable[[LockHolder], bool]) -> str:
    """Release the lock ``lock_id`` that a run left behind; what happened, as one line.

    Refuses (``StateError``) a lock held under another id, and one whose holder is a live process on this host
    (stop it instead: SIGTERM lets it save and release). ``confirm`` is asked last, with the holder; a no changes
    nothing. A holder on another host cannot be checked: the confirmation is the user's word that it is gone.
    """
    holder = backend.inspect_lock()
    if holder is None:
        return f"the state at {backend.location} is not locked; nothing to do"
    if holder.id != lock_id:
        named = f"lock id {holder.id}" if holder.id else "a lock without an id"
        raise StateError(
            f"the state at {backend.location} is locked by {holder.describe()} under {named}, not "
            f"{lock_id}; nothing unlocked"
        )
    if holder.pid > 0 and holder.host == socket.gethostname() and holder.is_alive():
        raise StateError(
            f"refusing to unlock the state at {backend.location}: its holder is running on this host, "
            f"{holder.describe()}; stop it with `kill {holder.pid}` (SIGTERM lets it save its state and release the "
            "lock) or wait for it"
        )
    if not confirm(holder):
        raise StateError("not confirmed; nothing unlocked")
    backend.force_unlock(lock_id)
    return f"released the lock {lock_id} of {holder.describe()} on the state at {backend.location}"
