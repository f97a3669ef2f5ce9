"""One error tree for cmssync, rooted at :class:`CmsSyncError`.

Every error a user can see derives from ``CmsSyncError`` and carries a message that stands on its own in one line:
a location (``file:line:col``) for content problems, an object key or ``METHOD path`` for site problems. The CLI
edge (``cmssync.cli.main``) is the only place that turns these into exit codes and printed reasons.

Errors say whether they are *temporary* (worth retrying: the daemon backs off and tries again) or *permanent*
(retrying cannot help until someone changes something), in the manner of kopf's temporary/permanent handler errors.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass

EXIT_OK = 0
EXIT_ERROR = 1
EXIT_CHANGES = 2
EXIT_INTERRUPTED = 130


class CmsSyncError(Exception):
    """Base of every error cmssync reports to a user."""

    exit_code: int = EXIT_ERROR
    temporary: bool = False

    def __init__(self, message: str) -> None:
        super().__init__(message)
        self.message = message

    def __str__(self) -> str:
        return self.message


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
        if self.line <= 0:
            return f"{self.file}: {self.message}"
        return f"{self.file}:{self.line}:{self.column}: {self.message}"


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
        self.reason = reason
        self.method = method
        self.path = path
        self.status = status
        self.messages = list(messages)
        where = f"{method} {path}".strip()
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
