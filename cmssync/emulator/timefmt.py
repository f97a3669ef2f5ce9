"""The date formats of the API: ATOM for pages/users/files, ``Y-m-d H:i:s`` for page versions, and the
documented dialect's plain calendar dates."""

from __future__ import annotations

from datetime import UTC, datetime


def _dt(ts: int) -> datetime:
    return datetime.fromtimestamp(ts, UTC)


def atom(ts: int | None) -> str | None:
    """``Carbon::toAtomString()``: ``2026-11-21T12:20:16+00:00``."""
    return None if ts is None else _dt(ts).strftime("%Y-%m-%dT%H:%M:%S+00:00")


def db(ts: int | None) -> str | None:
    """A raw database datetime: ``2026-11-21 12:20:16``."""
    return None if ts is None else _dt(ts).strftime("%Y-%m-%d %H:%M:%S")


def calendar(ts: int | None) -> str | None:
    """The documented dialect's ``YYYY-MM-DD``."""
    return None if ts is None else _dt(ts).strftime("%Y-%m-%d")


def parse(text: str) -> int | None:
    """Parse a date the way PHP's ``DateTime`` would accept the usual forms; ``None`` if it cannot."""
    value = text.strip()
    if not value:
        return None
    candidates = [value, value.replace("Z", "+00:00")]
    for candidate in candidates:
        try:
            parsed = datetime.fromisoformat(candidate)
        except ValueError:
            continue
        if parsed.tzinfo is None:
            parsed = parsed.replace(tzinfo=UTC)
        return int(parsed.timestamp())
    return None
