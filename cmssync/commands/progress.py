"""What a long run shows while it works, on stderr: ``reading site: 120/301 pages`` while the site is read.

On a terminal the line is a transient rich status that updates in place. Off a terminal (CI logs) it is a plain
line at most every :data:`LOG_EVERY` seconds, plus the last one, so a 300-page read shows a few lines rather
than nothing or three hundred; with ``--log-format json`` each is a JSON line (``read``, ``total``).
``--quiet`` shows nothing. stdout is never used: it carries the plan, the markdown or the JSON events a pipeline
reads.

The count only grows: a plan reads the site in passes (the page tree in batches, then the pages it would write
on their own), each counting from 0, and a pass that starts again from 0 adds to what the earlier ones read.

The count comes from :func:`cmssync.sync.observe.observe` through its context variable
(:data:`~cmssync.sync.observe.observe_progress`), set only inside :func:`reading_site`.
"""

from __future__ import annotations

import time
from collections.abc import Iterator
from contextlib import contextmanager
from typing import TYPE_CHECKING, TextIO

from cmssync.logs import note, notes_as_json
from cmssync.sync.observe import observe_progress

if TYPE_CHECKING:
    from rich.status import Status

LOG_EVERY = 5.0
"""Seconds between two progress lines off a terminal."""


class ReadingStatus:
    """Shows ``reading site: N/M pages`` (see the module docstring); :meth:`stop` ends it before the plan prints."""

    def __init__(self, stream: TextIO, *, terminal: bool, enabled: bool = True, color: bool = True) -> None:
        self.stream = stream
        self.terminal = terminal
        self.enabled = enabled
        self.color = color
        self._status: Status | None = None
        self._last_line = 0.0
        self._pending: tuple[str, int, int] | None = None
        self._earlier = 0
        """Pages read in the passes before this one."""
        self._pass_read = 0
        self.stopped = False

    def update(self, read: int, expected: int) -> None:
        if not self.enabled or self.stopped:
            return
        if read < self._pass_read:  # a new pass, counting from 0 again
            self._earlier += self._pass_read
        self._pass_read = read
        count, total = self._earlier + read, self._earlier + max(read, expected)
        text = f"reading site: {count}/{total} pages"
        if self.terminal and not notes_as_json():
            if self._status is None:
                from rich.console import Console  # only on a terminal: CI logs never pay for rich's status

                console = Console(
                    file=self.stream,
                    force_terminal=True,
                    no_color=not self.color,
                    markup=False,
                    highlight=False,
                    emoji=False,
                )
                self._status = console.status(text)
                self._status.start()
            else:
                self._status.update(text)
            return
        now = time.monotonic()
        if self._last_line == 0.0 or now - self._last_line >= LOG_EVERY:
            self._write(text, count, total)
            self._last_line = now
            self._pending = None
        else:
            self._pending = (text, count, total)

    def stop(self) -> None:
        """End the display; off a terminal, the last count is written if it was not yet."""
        if self.stopped:
            return
        self.stopped = True
        if self._status is not None:
            self._status.stop()
            self._status = None
        if self._pending is not None:
            self._write(*self._pending)
            self._pending = None

    def _write(self, text: str, count: int, total: int) -> None:
        note(text, stream=self.stream, read=count, total=total)


@contextmanager
def reading_site(
    stream: TextIO, *, terminal: bool, enabled: bool = True, color: bool = True
) -> Iterator[ReadingStatus]:
    """Inside: every observation reports to a :class:`ReadingStatus` on ``stream``; it stops on the way out.
    ``color``: False under ``--no-color`` / ``NO_COLOR`` (the spinner is plain too)."""
    status = ReadingStatus(stream, terminal=terminal, enabled=enabled, color=color)
    token = observe_progress.set(status.update)
    try:
        yield status
    finally:
        observe_progress.reset(token)
        status.stop()
