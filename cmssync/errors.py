"""One error tree for cmssync, rooted at :class:`CmsSyncError`.

Every error a user can see derives from ``CmsSyncError`` and carries a message that stands on its own in one line:
a location (``file:line:col``) for content problems, an object key or ``METHOD path`` for site problems. The CLI
edge (``cmssync.cli.main``) is the only place that turns these into exit codes and printed reasons.

Messages are masked when an error is made: every secret value the process knows (:mod:`cmssync.secrets`) is
replaced, so an error's text is fit for a terminal, a log, a report or the daemon's ``/readyz`` wherever it goes.
:func:`printable` also escapes control characters, for text a server or a file name put into a message.

Errors say whether they are *temporary* (worth retrying: a daemon run that failed with one is retried with backoff)
or *permanent* (retrying cannot help until someone changes something: the daemon waits for the next file change,
schedule or signal), in the manner of kopf's temporary/permanent handler errors (``cmssync.daemon.runner``).
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from cmssync.secrets import mask_secrets

EXIT_OK = 0
EXIT_ERROR = 1
EXIT_CHANGES = 2
EXIT_INTERRUPTED = 130


class CmsSyncError(Exception):
    """Base of every error cmssync reports to a user."""

    exit_code: int = EXIT_ERROR
    temporary: bool = False

    def __init__(self, message: str) -> None:
        message = mask_secrets(message)
        super().__init__(message)
        self.message = message

    def __str__(self) -> str:
        return self.message


_CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f\u200e\u200f\u2028\u2029\u202a-\u202e\u2066-\u2069]")
"""Characters that move the cursor, recolour a terminal or reorder text: everything in C0/C1 but tab and newline,
and the Unicode line separators and bidirectional overrides."""


def escape_controls(text: str) -> str:
    """``text`` with control characters written as escapes (``\\x1b``, ``\\u202e``); tab and newline kept."""
    return _CONTROL.sub(_escape, text)


def _escape(match: re.Match[str]) -> str:
    code = ord(match.group())
    return f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}"


def one_line(text: str) -> str:
    """``text`` with every control character escaped, tab and line breaks too (``\\n``): for a name (a request
    path, a file name) that must not break the line it is shown in."""
    return escape_controls(text).replace("\n", "\\n").replace("\t", "\\t")


def printable(text: str) -> str:
    """Text fit to print for a user: secrets masked, control characters escaped."""
    return escape_controls(mask_secrets(text))


class ConfigError(CmsSyncError):
    """Settings are missing, malformed or contradictory (cmssync.yaml, environment, secrets)."""


@dataclass(frozen=True, order=True)
class Problem:
    """One located problem in the content directory: ``file:line:col: message``.

    ``line`` and ``column`` are 1-based, as editors show them; 0 means "the whole file".
    """

    file: str
    line: int
    column: int
    message: str

    def __str__(self) -> str:
        file = one_line(self.file)  # a file name may hold a line break: it must not start a line of its own
        if self.line <= 0:
            return f"{file}: {self.message}"
        return f"{file}:{self.line}:{self.column}: {self.message}"


SHOWN_PER_PROBLEM = 5
"""Located problems with one message printed before the rest are counted (1,200 files, one mistake: 6 lines)."""


def condensed(problems: Iterable[Problem]) -> list[str]:
    """The problems as lines, at most :data:`SHOWN_PER_PROBLEM` per message, then ``… and N more with the same
    problem: message`` (the JSON and GitHub formats of ``validate`` keep every one)."""
    seen: Counter[str] = Counter()
    lines: list[str] = []
    for problem in problems:
        seen[problem.message] += 1
        if seen[problem.message] <= SHOWN_PER_PROBLEM:
            lines.append(str(problem))
    lines += [
        f"… and {count - SHOWN_PER_PROBLEM} more with the same problem: {message}"
        for message, count in seen.items()
        if count > SHOWN_PER_PROBLEM
    ]
    return lines


class ContentError(CmsSyncError):
    """The content directory is invalid. Holds every problem found, not just the first."""

    def __init__(self, problems: Iterable[Problem]) -> None:
        self.problems: list[Problem] = sorted(problems)
        count = len(self.problems)
        summary = f"{count} problem{'s' if count != 1 else ''} in the content"
        super().__init__("\n".join([*(str(p) for p in self.problems), summary]))


class ApiError(CmsSyncError):
    """A request to the site failed. Subclasses in ``cmssync.api.errors`` say what it means.

    ``method`` and ``path`` name the request (never its query string or headers, which may carry secrets);
    ``reason`` is the server's own short explanation, or a short prefix of an unexpected body.
    """

    def __init__(
        self,
        reason: str,
        *,
        method: str = "",
        path: str = "",
        status: int | None = None,
        messages: Sequence[str] = (),
    ) -> None:
        self.reason = mask_secrets(reason)
        self.method = method
        self.path = path
        self.status = status
        self.messages = [mask_secrets(message) for message in messages]
        where = f"{method} {one_line(path)}".strip()
        status_text = f" ({status})" if status is not None else ""
        super().__init__(f"{where}{status_text}: {reason}" if where else reason)


class StateError(CmsSyncError):
    """The state store cannot be read, written or locked."""


class StateLockedError(StateError):
    """Another cmssync process holds the state lock."""

    temporary = True


class PlanError(CmsSyncError):
    """A plan cannot be made or used (for example a stale plan file, or a guard refused it)."""


class ApplyError(CmsSyncError):
    """An apply finished with failed actions; the state records exactly what succeeded."""
