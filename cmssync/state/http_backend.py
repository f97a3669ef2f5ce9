"""The state on an HTTP server speaking Terraform's HTTP state protocol (``state: {backend: http, …}``).

Why this protocol: it is documented (developer.hashicorp.com/terraform/language/backend/http), small, and already
served by what CI users have — GitLab's managed Terraform state (``/api/v4/projects/ID/terraform/state/NAME``, job
token auth, locking, versions kept), and the self-hosted Terraform state servers; it needs no library beyond httpx.
The exchanges (``address`` = ``state.address``):

* ``GET address`` → 200 with the state document (the JSON of ``state.json`` plus Terraform's ``serial``, which
  GitLab requires and versions by: one more per run); 204, 404 or an empty body: no state yet.
* ``POST address?ID=<lock id>`` (``update_method``) with the document → 200/201/204. The lock id lets the server
  refuse a write from a run that does not hold the lock.
* ``LOCK lock_address`` (``lock_method``; GitLab: ``POST …/lock``) with a lock info document → 200: locked; 409 or
  423 with the holder's lock info: held by another run. ``UNLOCK unlock_address`` (``unlock_method``; GitLab:
  ``DELETE …/lock``) with the same document → 200/204. Lock info is Terraform's: ``ID``, ``Operation``, ``Info``
  (cmssync writes ``pid N``), ``Who`` (``user@host``), ``Version``, ``Created``, ``Path``.

Cost and crash safety: the executor saves after every completed remote change; one upload of the whole document
per change would be one request per change. Saves are batched instead: an upload at most every
``state.save_interval`` seconds (default 5), and always when the run's lock is released (its end, an error,
SIGTERM's clean stop, Ctrl-C). Every save is also appended to a spool on this machine (:mod:`cmssync.state.spool`),
from which the next run here recovers the records a killed run had not uploaded. A lost runner loses them with its
disk; the next run finds those objects again by their natural keys (page path, file content, username, group name;
see ``cmssync.sync.file_adoption``) and adopts them instead of creating them twice (docs/state.md). An upload that
fails during the run is retried after the next interval and is not fatal; one that still fails at the end is: the
run fails naming the server's answer, and the records stay in the spool for the next run.

Requests are retried (three attempts) on connection errors, 429 and 5xx: reads and whole-document writes are
idempotent, and a lock request whose answer was lost is recognised on the retry (the server names our own lock id
as the holder). Every other answer is an error naming the method, the URL (credentials removed) and the status.
"""

from __future__ import annotations

import base64
import contextlib
import hashlib
import json
import logging
import os
import re
import socket
import time
import uuid
from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any, Final

import httpx

from cmssync import __version__
from cmssync.errors import StateError, StateLockedError
from cmssync.secrets import url_without_credentials
from cmssync.state.keyring import FixedKeyRing, WarningKeyRing
from cmssync.state.records import State, migrate_document, validated_state
from cmssync.state.spool import Spool
from cmssync.state.store import LockHolder, current_user

if TYPE_CHECKING:
    from cmssync.config import StateSettings

log = logging.getLogger(__name__)

ATTEMPTS: Final = 3
_RETRY_WAITS: Final = (0.5, 1.5)
_SNIPPET: Final = 200


class StateServerError(StateError):
    """The state server failed or could not be reached (worth retrying later: the daemon retries with backoff)."""

    temporary = True


class HttpStateBackend:
    """The state at ``settings.address``; see the module docstring for the protocol."""

    def __init__(
        self,
        settings: StateSettings,
        *,
        key_path: Path,
        spool_path: Path,
        key: bytes | None = None,
        lock_timeout: float = 0.0,
        timeout: float = 30.0,
    ) -> None:
        assert settings.address is not None
        self.settings = settings
        self.address = settings.address
        self.lock_address = settings.lock_address
        self.unlock_address = settings.unlock_address or settings.lock_address
        self.location = url_without_credentials(settings.address)
        self.lock_timeout = lock_timeout
        self.save_interval = settings.save_interval
        self.spool = Spool(spool_path, self.location)
        self._key = key
        self._key_path = key_path
        self._auth: httpx.BasicAuth | None = None
        if settings.username is not None or settings.password is not None:
            password = "" if settings.password is None else settings.password.get_secret_value()
            self._auth = httpx.BasicAuth(settings.username or "", password)
        self._timeout = timeout
        self._lock_id: str | None = None
        self._pending: State | None = None
        self._last_upload = time.monotonic()
        self._serial = 0
        """The ``serial`` of the document loaded; this store's uploads carry the next one."""

    # -- state ---------------------------------------------------------------------------------------------------

    def load(self) -> State:
        response = self._request("GET", self.address)
        self._serial = 0
        if response.status_code in (204, 404) or (response.status_code == 200 and not response.content.strip()):
            state = State()
        elif response.status_code == 200:
            state = self._parse(response.content)
        else:
            raise self._refused("GET", self.address, response, "read the state")
        recovered = self.spool.recover(self._serial)
        if recovered is not None:
            state = recovered
        state._keyring = (
            FixedKeyRing(self._key) if self._key is not None else WarningKeyRing(self._key_path, self.location)
        )
        state._changes.clear()
        self._pending = recovered  # recovered records go up with the next upload
        self._last_upload = time.monotonic()
        return state

    def _parse(self, data: bytes) -> State:
        where = f"state at {self.location}"
        try:
            raw: Any = json.loads(data)
        except (UnicodeDecodeError, json.JSONDecodeError) as exc:
            raise StateError(f"{where}: the server's answer is not JSON ({exc}): {_snippet(data)}") from None
        if isinstance(raw, dict) and "terraform_version" in raw:
            raise StateError(f"{where}: this address holds a Terraform state; give cmssync a state name of its own")
        if isinstance(raw, dict):
            serial = raw.pop("serial", 0)
            self._serial = serial if isinstance(serial, int) and not isinstance(serial, bool) else 0
        version = raw.get("format_version") if isinstance(raw, dict) else None
        if not isinstance(version, int) or isinstance(version, bool):
            raise StateError(f"{where}: not a cmssync state (no integer format_version): {_snippet(data)}")
        return validated_state(migrate_document(raw, where), where)

    def save(self, state: State) -> None:
        """Keep ``state`` to upload; upload it when ``save_interval`` has passed since the last upload.

        A failed upload here is logged and retried at the next save: the run goes on, and the end of the run
        (:meth:`compact`) reports it if it still fails."""
        self.spool.save(state, base_serial=self._serial)  # first, on this machine (it consumes the change set)
        state._changes.clear()  # the whole document is uploaded: no journal of changes to keep here
        self._pending = state
        if time.monotonic() - self._last_upload < self.save_interval:
            return
        try:
            self._upload(state)
        except StateError as exc:
            self._last_upload = time.monotonic()  # the next try after another interval, not on every save
            log.warning("could not save the state yet, will try again: %s", exc)

    def compact(self, state: State | None = None) -> None:
        """Upload ``state`` (or what is pending) now; raise StateError if the server does not take it."""
        target = state if state is not None else self._pending
        if target is None:
            return
        try:
            self._upload(target)
        except StateError as exc:
            raise StateError(
                f"{exc}; the records of this run are kept in {self.spool.path}, and the next run on this machine "
                "uploads them (elsewhere, the next run finds its objects again by path, content and name)"
            ) from None

    def _upload(self, state: State) -> None:
        ordered = state.sorted_copy()
        # ``serial`` (GitLab refuses a document without one and keeps one version per serial): one more than the
        # document loaded, the same for every upload of this store, so a run leaves one version, updated in place.
        document = {"serial": self._serial + 1, **ordered.model_dump(mode="json")}
        body = json.dumps(document, indent=1, ensure_ascii=False).encode("utf-8") + b"\n"
        params = {"ID": self._lock_id} if self._lock_id is not None else None
        headers = {
            "Content-Type": "application/json",
            "Content-MD5": base64.b64encode(hashlib.md5(body, usedforsecurity=False).digest()).decode(),
        }
        response = self._request(
            self.settings.update_method, self.address, content=body, params=params, headers=headers
        )
        if response.status_code not in (200, 201, 204):
            raise self._refused(self.settings.update_method, self.address, response, "save the state")
        self.spool.uploaded(document["serial"])
        self._pending = None if state is self._pending else self._pending
        self._last_upload = time.monotonic()

    # -- lock ----------------------------------------------------------------------------------------------------

    @contextlib.contextmanager
    def try_lock(self, command: str) -> Iterator[LockHolder]:
        info = _lock_info(command, self.location)
        holder = _holder(info)
        if self.lock_address is None:
            log.warning("the state at %s has no state.lock_address: two runs are not kept apart", self.location)
        else:
            self._lock(info)
        self._lock_id = info["ID"] if self.lock_address is not None else None
        try:
            yield holder
        finally:
            self._release(info)

    def _release(self, info: dict[str, Any]) -> None:
        """The end of a run: upload what is pending while the lock is still held, then release the lock. When both
        fail (the server is gone), the error says both, the upload's first: where the records were kept is what the
        user needs, and an unlock error must not hide it."""
        failure: StateError | None = None
        try:
            self.compact()
            self.spool.remove()  # everything is on the server now
        except StateError as exc:
            failure = exc
        self._lock_id = None
        if self.lock_address is not None:
            try:
                self._unlock(info)
            except StateError as exc:
                if failure is None:
                    raise
                raise type(failure)(f"{failure}; the lock was not released either: {exc}") from None
        if failure is not None:
            raise failure

    def _lock(self, info: dict[str, Any]) -> None:
        conflict = self._lock_request(info)
        if conflict is not None:
            raise StateLockedError(_locked_message(self.location, *conflict))

    def _lock_request(self, info: dict[str, Any]) -> tuple[LockHolder | None, httpx.Response] | None:
        """Ask for the lock: None when taken, else the holder the server names (None: it does not say)."""
        assert self.lock_address is not None
        method = self.settings.lock_method
        response = self._request(method, self.lock_address, json=info)
        if response.status_code in (200, 201, 204):
            return None
        if response.status_code in (409, 423):
            holder = _parse_holder(response.content)
            if holder is not None and holder.id == info["ID"]:
                return None  # a retry after a lost answer: the lock we asked for is ours
            return holder, response
        raise self._refused(method, self.lock_address, response, "lock the state")

    def _unlock(self, info: dict[str, Any]) -> None:
        assert self.unlock_address is not None
        method = self.settings.unlock_method
        response = self._request(method, self.unlock_address, json=info)
        if response.status_code in (200, 201, 204):
            return
        raise StateError(
            f"{_refusal(method, self.unlock_address, response)}: the lock {info['ID']} of this run was not released; "
            f"release it with `cmssync force-unlock {info['ID']}`"
        )

    def lock_holder(self) -> LockHolder | None:
        return None  # the protocol has no way to read the lock without taking it, and status must not take it

    def inspect_lock(self) -> LockHolder | None:
        if self.lock_address is None:
            return None
        info = _lock_info("cmssync force-unlock (inspecting the lock)", self.location)
        conflict = self._lock_request(info)
        if conflict is None:
            self._unlock(info)
            return None
        holder, response = conflict
        if holder is None:
            raise StateError(
                f"the state at {self.location} is locked, and the server does not say by whom "
                f"({_snippet(response.content) or response.status_code}); nothing unlocked"
            )
        return holder

    def force_unlock(self, lock_id: str) -> None:
        if self.unlock_address is None:
            raise StateError(f"the state at {self.location} has no state.lock_address: there is no lock to release")
        method = self.settings.unlock_method
        response = self._request(method, self.unlock_address, json={"ID": lock_id})
        if response.status_code in (200, 201, 204):
            return
        if response.status_code in (409, 423):
            holder = _parse_holder(response.content)
            now = f"held by {holder.describe()}" if holder is not None else "held under another id"
            raise StateLockedError(
                f"the state at {self.location} is now {now}, not by lock {lock_id}; nothing unlocked"
            )
        raise self._refused(method, self.unlock_address, response, "release the lock")

    # -- HTTP ----------------------------------------------------------------------------------------------------

    def _request(self, method: str, url: str, **kwargs: Any) -> httpx.Response:
        """One exchange, on a connection of its own: a run makes a few dozen at most (saves are batched), and no
        client outlives the call, so a backend needs no closing."""
        for attempt in range(1, ATTEMPTS + 1):
            try:
                with httpx.Client(auth=self._auth, timeout=self._timeout, follow_redirects=False) as client:
                    response = client.request(method, url, **kwargs)
            except httpx.HTTPError as exc:
                if attempt == ATTEMPTS:
                    raise StateServerError(
                        f"{method} {url_without_credentials(url)}: the state server cannot be reached ({exc}) "
                        f"after {ATTEMPTS} attempts"
                    ) from None
            else:
                if (response.status_code != 429 and response.status_code < 500) or attempt == ATTEMPTS:
                    return response
            time.sleep(_RETRY_WAITS[attempt - 1])
        raise AssertionError("unreachable")

    def _refused(self, method: str, url: str, response: httpx.Response, what: str) -> StateError:
        error = StateServerError if response.status_code == 429 or response.status_code >= 500 else StateError
        return error(f"{_refusal(method, url, response)}: could not {what}")


def _refusal(method: str, url: str, response: httpx.Response) -> str:
    reason = f"{response.status_code} {response.reason_phrase}".strip()
    body = f" ({_snippet(response.content)})" if response.content.strip() else ""
    return f"{method} {url_without_credentials(url)}: the state server answered {reason}{body}"


def _snippet(data: bytes) -> str:
    text = data.decode("utf-8", errors="replace").strip()
    text = re.sub(r"\s+", " ", text)
    return text if len(text) <= _SNIPPET else text[:_SNIPPET] + "…"


def _lock_info(command: str, location: str) -> dict[str, Any]:
    user = current_user() or "unknown"
    return {
        "ID": str(uuid.uuid4()),
        "Operation": command if command.startswith("cmssync") else f"cmssync {command}",
        "Info": f"pid {os.getpid()}",
        "Who": f"{user}@{socket.gethostname()}",
        "Version": __version__,
        "Created": datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%SZ"),
        "Path": location,
    }


def _holder(info: dict[str, Any]) -> LockHolder:
    """The lock info of Terraform's protocol as a :class:`LockHolder` (fields it lacks are empty or 0)."""
    who = str(info.get("Who") or "")
    user, _, host = who.rpartition("@")
    pid = re.search(r"\bpid (\d+)", str(info.get("Info") or ""))
    return LockHolder(
        pid=int(pid.group(1)) if pid else 0,
        host=host or "an unknown host",
        command=str(info.get("Operation") or "an unknown command"),
        since=str(info.get("Created") or "an unknown time"),
        id=str(info.get("ID") or ""),
        user=user,
    )


def _parse_holder(data: bytes) -> LockHolder | None:
    try:
        info = json.loads(data)
    except (UnicodeDecodeError, json.JSONDecodeError):
        return None
    if not isinstance(info, dict) or not info.get("ID"):
        return None
    return _holder(info)


def _locked_message(location: str, holder: LockHolder | None, response: httpx.Response) -> str:
    if holder is None:
        return (
            f"the state at {location} is locked by another run; the server does not say which "
            f"({response.status_code}: {_snippet(response.content) or 'no details'})"
        )
    return (
        f"the state at {location} is locked by {holder.describe()}; wait for it to finish (--lock-timeout), or "
        f"if it is gone for good, `cmssync force-unlock {holder.id}`"
    )
