"""Watch the content directory and hand changed paths (relative, POSIX) to the event loop.

watchdog calls its handlers on the observer's thread, so every change is handed over with
``loop.call_soon_threadsafe``; the reconciler debounces the storm of events an editor's save makes (write a temp
file, rename it over the target: we report the rename's ``dest_path``). Paths that cannot matter are dropped here:
dot-files and dot-directories (``.git/``, ``.cmssync/``), editor swap, backup and probe files (``*.swp``, ``*~``,
``4913``, ``#name#``), and non-YAML files outside ``files/``. A directory deleted or moved, or a Kubernetes
ConfigMap update (the ``..data`` link swapped), asks for a full run: the changed files are not known one by one.

``inotify`` (watchdog's ``Observer``) is immediate; ``poll`` (``PollingObserver``) works where inotify does not:
Docker Desktop bind mounts, network filesystems, a content directory that is a symbolic link swapped by git-sync.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import time
from collections.abc import Callable
from pathlib import Path, PurePosixPath
from typing import Literal

import structlog
from watchdog.events import (
    EVENT_TYPE_CREATED,
    EVENT_TYPE_DELETED,
    EVENT_TYPE_MODIFIED,
    EVENT_TYPE_MOVED,
    FileSystemEvent,
    FileSystemEventHandler,
)
from watchdog.observers import Observer
from watchdog.observers.api import BaseObserver
from watchdog.observers.polling import PollingObserver

from cmssync.content.lists import content_dirs
from cmssync.errors import ConfigError
from cmssync.plan.builtin_kinds import BUILT_IN_KINDS
from cmssync.plan.kinds import KindTable

log = structlog.get_logger("cmssync.daemon")

WatchMode = Literal["inotify", "poll"]
ChangeCallback = Callable[[list[str] | None, float], None]
"""Called on the loop with the changed paths (``None``: anything may have changed) and the monotonic time seen."""

JUNK_SUFFIXES = ("~", ".swp", ".swo", ".swx", ".tmp", ".bak", ".part", ".crdownload")
CONFIGMAP_LINK = "..data"
WATCHED_EVENTS = (EVENT_TYPE_CREATED, EVENT_TYPE_MODIFIED, EVENT_TYPE_DELETED, EVENT_TYPE_MOVED)


def is_junk(parts: tuple[str, ...]) -> bool:
    """Dot-files and dot-directories anywhere in the path, and editors' swap, backup and probe files."""
    name = parts[-1]
    return (
        any(part.startswith(".") for part in parts)
        or name.endswith(JUNK_SUFFIXES)
        or name == "4913"  # vim checks it may write in the directory by creating this file
        or (name.startswith("#") and name.endswith("#"))  # emacs auto-save
    )


def matters(relative: str, kinds: KindTable = BUILT_IN_KINDS) -> bool:
    """Whether a change to this file (content-relative, POSIX) can change what cmssync applies (``kinds``: the
    run's)."""
    parts = PurePosixPath(relative).parts
    if not parts or parts[0] == ".." or is_junk(parts):
        return False
    if parts[0] == "files" and len(parts) > 1:
        return True  # assets have any name
    if any(kind.scope and kind.keys is not None and kind.scope(relative) is not None for kind in kinds.kinds):
        return True  # an added kind's file (cmssync.sync.kinds)
    return relative.endswith((".yaml", ".yml"))  # pages, users, groups, cmssync.yaml; stray YAML is reported


class _Handler(FileSystemEventHandler):
    def __init__(self, root: str, emit: Callable[[list[str] | None], None], kinds: KindTable) -> None:
        self._root = root
        self._emit = emit
        self._kinds = kinds

    def _relative(self, path: bytes | str) -> str:
        return PurePosixPath(os.path.relpath(os.fsdecode(path), self._root).replace(os.sep, "/")).as_posix()

    def on_any_event(self, event: FileSystemEvent) -> None:
        if event.event_type not in WATCHED_EVENTS:
            return  # opened, closed, attributes: the modification events say it all
        paths = [self._relative(event.src_path)]
        if event.event_type == EVENT_TYPE_MOVED:
            paths.append(self._relative(event.dest_path))
        if any(PurePosixPath(p).parts[:1] == (CONFIGMAP_LINK,) for p in paths):
            self._emit(None)
            return
        if event.is_directory:
            if event.event_type in (EVENT_TYPE_DELETED, EVENT_TYPE_MOVED) and any(_in_content(p) for p in paths):
                self._emit(None)
            return
        changed = [path for path in paths if matters(path, self._kinds)]
        if changed:
            self._emit(changed)


def _in_content(relative: str) -> bool:
    parts = PurePosixPath(relative).parts
    return bool(parts) and parts[0] in content_dirs() and not is_junk(parts)


class ContentWatcher:
    """Runs a watchdog observer on ``directory``; ``on_change`` is called on ``loop``."""

    def __init__(
        self,
        directory: Path,
        on_change: ChangeCallback,
        *,
        loop: asyncio.AbstractEventLoop,
        mode: WatchMode = "inotify",
        poll_interval: float = 1.0,
        kinds: KindTable = BUILT_IN_KINDS,
    ) -> None:
        self.directory = directory.absolute()
        self.kinds = kinds
        self.mode = mode
        self._on_change = on_change
        self._loop = loop
        self._poll_interval = poll_interval
        self._observer: BaseObserver | None = None

    def start(self) -> None:
        observer: BaseObserver = PollingObserver(timeout=self._poll_interval) if self.mode == "poll" else Observer()
        observer.schedule(_Handler(str(self.directory), self._emit, self.kinds), str(self.directory), recursive=True)
        try:
            observer.start()
        except OSError as exc:
            raise ConfigError(
                f"cannot watch {self.directory} with {self.mode}: {exc.strerror or exc}; "
                "try --watch=poll (or raise fs.inotify.max_user_watches)"
            ) from None
        self._observer = observer
        log.info("watching the content", directory=str(self.directory), mode=self.mode)

    def _emit(self, paths: list[str] | None) -> None:
        seen = time.monotonic()
        with contextlib.suppress(RuntimeError):  # the loop is closed: the daemon is stopping
            self._loop.call_soon_threadsafe(self._on_change, paths, seen)

    def stop(self, timeout: float = 2.0) -> None:
        """Stop and join the observer thread (blocking; call it through ``asyncio.to_thread`` from the loop)."""
        observer, self._observer = self._observer, None
        if observer is not None:
            observer.stop()
            observer.join(timeout)
