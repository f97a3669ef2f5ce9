"""A write-ahead copy, on this machine, of the records a run keeps in a remote state (``state.backend: http``).

Why: the HTTP backend uploads at most every ``save_interval`` seconds, so a run killed between two uploads (SIGKILL,
OOM, a power cut) leaves records only in its memory. The next run re-derives identities from natural keys, but not
everything comes back that way: a page's pending draft, recorded only in the lost state, looks like someone else's
and is refused (docs/state.md). So every save is also written here first, with the local store's journal (one
append, about 60 µs: :mod:`cmssync.state.journal`), and the next run *on this machine* — the daemon's host, a
self-hosted runner, a laptop — loads the remote state, finds the spool of the interrupted run and carries on from
it; its next upload sends the recovered records. An ephemeral CI runner takes its spool with it: there the natural
keys are all there is.

Files, beside the working path ``state.path`` (default ``.cmssync/state.json``): ``state.json.spool`` (a state
snapshot, with ``.journal`` beside it) and ``state.json.spool.meta`` — the address it belongs to, the ``serial``
of the remote document the run started from, the run's pid and host. A spool is used only when

* its address is this backend's (one working directory may have pointed at another state before),
* the run that wrote it is not alive on this host (a live run's spool is its own business; ``plan`` beside a
  running ``apply`` reads the remote state), and
* the remote document is still the one it started from (``serial`` equal) or the one it uploaded itself: the serial
  of each upload the server took is written into the meta file (:meth:`Spool.uploaded`), and only that serial is
  taken for the run's own. Any other serial — also "one more than the start" when the run never uploaded, which is
  what another checkout's run leaves — means another run has written since: the spool is stale, dropped with a
  warning, and the other run's records stand.

A spool that cannot be written (a read-only directory) is given up with one warning: the run goes on with the
remote state alone. It is removed when the run's last upload succeeds.
"""

from __future__ import annotations

import contextlib
import json
import logging
import os
import socket
from pathlib import Path
from typing import Any

from cmssync.errors import StateError
from cmssync.fileio import write_atomically
from cmssync.state.records import State
from cmssync.state.store import LockHolder, StateStore

log = logging.getLogger(__name__)


class Spool:
    """The write-ahead copy of one backend's records at ``path`` (see the module docstring)."""

    def __init__(self, path: Path, address: str) -> None:
        self.path = path
        self.address = address
        self.meta_path = path.with_name(path.name + ".meta")
        self._store = StateStore(path)
        self._started = False
        self._broken = False

    def save(self, state: State, *, base_serial: int) -> None:
        """Write the changes of ``state``; the first save of a run records where it started. Never raises."""
        if self._broken:
            return
        try:
            if not self._started:
                meta = {"address": self.address, "serial": base_serial, "pid": os.getpid(), "host": _host()}
                self.path.parent.mkdir(parents=True, exist_ok=True)
                write_atomically(self.meta_path, json.dumps(meta).encode("utf-8"), mode=0o600)
                self._started = True
            self._store.save(state)
        except (OSError, StateError) as exc:
            self._broken = True
            log.warning(
                "cannot keep a local copy of the state's records in %s (%s); a killed run loses the records of "
                "the last save_interval",
                self.path,
                exc,
            )

    def uploaded(self, serial: int) -> None:
        """Note that the server took this run's upload of ``serial``: the one later serial :meth:`recover` accepts."""
        meta = self._meta()
        if self._broken or not self._started or meta is None:
            return
        try:
            write_atomically(self.meta_path, json.dumps({**meta, "uploaded": serial}).encode("utf-8"), mode=0o600)
        except OSError as exc:
            self._broken = True
            log.warning("cannot note the upload in %s (%s)", self.meta_path, exc)

    def recover(self, remote_serial: int) -> State | None:
        """The state an interrupted run left here, when it may be used (see the module docstring); else None."""
        meta = self._meta()
        if meta is None or meta.get("address") != self.address:
            return None
        pid, host, base, uploaded = meta.get("pid"), meta.get("host"), meta.get("serial"), meta.get("uploaded")
        if isinstance(pid, int) and pid != os.getpid() and host == _host():
            holder = LockHolder(pid=pid, host=str(host), command="", since="")
            if pid > 0 and holder.is_alive():
                return None  # a live run on this host: its spool, not a leftover
        if not isinstance(base, int) or remote_serial not in (base, uploaded):
            log.warning(
                "dropping %s: the state at %s was written by another run since this one was interrupted "
                "(serial %s, the spool started from %s)",
                self.path,
                self.address,
                remote_serial,
                base,
            )
            self.remove()
            return None
        try:
            state = self._store.load()
        except StateError as exc:
            log.warning("dropping %s: %s", self.path, exc)
            self.remove()
            return None
        log.warning(
            "recovered the records of an interrupted run from %s; they go to %s with the next apply",
            self.path,
            self.address,
        )
        return state

    def remove(self) -> None:
        """Forget the spool (its records are on the server, or stale)."""
        self._started = False
        self._store._close_journal()  # the store of this package: no descriptor left on an unlinked journal
        for leftover in (self.meta_path, self.path, self.path.with_name(self.path.name + ".journal")):
            with contextlib.suppress(OSError):
                leftover.unlink()

    def _meta(self) -> dict[str, Any] | None:
        try:
            meta = json.loads(self.meta_path.read_bytes())
        except (OSError, ValueError):
            return None
        return meta if isinstance(meta, dict) else None


def _host() -> str:
    return socket.gethostname()
