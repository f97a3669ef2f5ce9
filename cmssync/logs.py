"""Logging through structlog: console lines on a terminal, JSON lines otherwise.

Everything that logs through the standard library (httpx, uvicorn, apscheduler, watchdog) goes through the same
``ProcessorFormatter``, so a container's log is one stream of JSON lines. A redaction processor runs last before
rendering: it masks values under sensitive keys (authorization, tokens, secrets, passwords) and bearer tokens or
``key=value`` secrets inside free text, wherever they appear in an event — and, by value, every secret the process
has registered (:mod:`cmssync.secrets`), which catches a secret that appears bare (echoed by a server, quoted in an
exception message) where no pattern could.

Retries are one short line each (``retry 2 of GET /ccm/api/1.0/pages/5 in 0.4 s: …(503): Service Unavailable``,
INFO, logger ``cmssync.retry``): stamina's own instrumentation logs a WARNING with the retried callable's
arguments, which spilled a JSON document per retry into CI logs. :func:`configure_logging` replaces it with
:func:`log_retry` and keeps stamina's Prometheus counter.
"""

from __future__ import annotations

import json
import logging
import re
import sys
from collections.abc import Mapping
from datetime import UTC, datetime
from typing import Any, TextIO

import stamina.instrumentation
import structlog
from structlog.typing import EventDict, Processor, WrappedLogger

from cmssync.secrets import MASK, mask_secrets

REDACTED = MASK

_SENSITIVE_KEY = re.compile(
    r"(authorization|password|passwd|secret|token|api[_-]?key|cookie|credential)", re.IGNORECASE
)
_SENSITIVE_TEXT = [
    re.compile(r"(?i)\b(bearer|basic)\s+[A-Za-z0-9._~+/=-]+"),
    re.compile(
        r"(?i)\b((?:access_|refresh_|id_)?token|client_secret|password|secret)(\s*[=:]\s*|\"\s*:\s*\")"
        r"([^\s&,\"']+)"
    ),
]
_PROSE_WORD = re.compile(r"[A-Za-z][a-z]{0,19}[.;:!?)]?")
"""A plain word of a sentence (``the``, ``Expired``, ``rejected.``): what follows ``token:`` in prose, never a
credential, which has digits, symbols, inner capitals or length."""


def redact_text(text: str) -> str:
    """Mask registered secret values, bearer/basic credentials and ``secret=value`` pairs inside free text.

    ``key=value``, ``key:value`` and ``"key": "value"`` are masked whatever the value. ``key: value`` (a colon and a
    space) is also how a sentence goes on (``refresh token: the site rejected it``), so there the value is masked
    only when it does not read as a plain word (see :data:`_PROSE_WORD`); a secret that does (all letters, at most
    20) is still masked by value when the process knows it (:mod:`cmssync.secrets`).
    """
    text = mask_secrets(text)
    text = _SENSITIVE_TEXT[0].sub(lambda m: f"{m.group(1)} {REDACTED}", text)
    return _SENSITIVE_TEXT[1].sub(_mask_pair, text)


def _mask_pair(match: re.Match[str]) -> str:
    key, separator, value = match.group(1), match.group(2), match.group(3)
    in_prose = separator.strip() == ":" and separator != separator.rstrip() and _PROSE_WORD.fullmatch(value)
    return match.group(0) if in_prose else f"{key}{separator}{REDACTED}"


def redact_value(key: str, value: Any) -> Any:
    if _SENSITIVE_KEY.search(key) and value not in (None, "", False):
        return REDACTED
    if isinstance(value, str):
        return redact_text(value)
    if isinstance(value, Mapping):
        return {k: redact_value(str(k), v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [redact_value(key, v) for v in value]
    if hasattr(value, "get_secret_value"):
        return REDACTED
    return value


def redact_secrets(_logger: WrappedLogger, _method: str, event_dict: EventDict) -> EventDict:
    """structlog processor: mask secrets in every key and value of an event."""
    for key in list(event_dict):
        if key == "event":
            if isinstance(event_dict[key], str):
                event_dict[key] = redact_text(event_dict[key])
            continue
        event_dict[key] = redact_value(key, event_dict[key])
    return event_dict


_retry_log = structlog.get_logger("cmssync.retry")
_REASON_CHARS = 160


def log_retry(details: stamina.instrumentation.RetryDetails) -> None:
    """stamina's retry hook: one line naming the request (an API error's message starts with it) and the wait."""
    reason = " ".join(str(details.caused_by).split()) or type(details.caused_by).__name__
    if len(reason) > _REASON_CHARS:
        reason = reason[: _REASON_CHARS - 1] + "…"
    _retry_log.info(
        f"retry {details.retry_num} in {details.wait_for:.1f} s: {reason}",
        retry=details.retry_num,
        wait_s=round(details.wait_for, 2),
        waited_s=round(details.waited_so_far, 2),
        error=type(details.caused_by).__name__,
    )


def quiet_retries() -> None:
    """Retries logged by :func:`log_retry` (one line), stamina's Prometheus counter kept."""
    stamina.instrumentation.set_on_retry_hooks([stamina.instrumentation.PrometheusOnRetryHook, log_retry])


def configure_logging(
    *, level: int = logging.INFO, json_lines: bool | None = None, stream: TextIO | None = None
) -> None:
    """Configure structlog and the standard library once, for the whole process.

    ``json_lines=None`` chooses by the stream: console rendering on a terminal, JSON lines otherwise.
    """
    stream = sys.stderr if stream is None else stream
    if json_lines is None:
        json_lines = not stream.isatty()
    shared: list[Processor] = [
        structlog.contextvars.merge_contextvars,
        structlog.stdlib.add_log_level,
        structlog.stdlib.add_logger_name,
        structlog.processors.TimeStamper(fmt="iso", utc=True),
        structlog.stdlib.ExtraAdder(),
    ]
    renderer: Processor
    if json_lines:
        renderer = structlog.processors.JSONRenderer()
        shared.append(structlog.processors.dict_tracebacks)
    else:
        renderer = structlog.dev.ConsoleRenderer(colors=stream.isatty())
    formatter = structlog.stdlib.ProcessorFormatter(
        foreign_pre_chain=shared,
        processors=[structlog.stdlib.ProcessorFormatter.remove_processors_meta, redact_secrets, renderer],
    )
    handler = logging.StreamHandler(stream)
    handler.setFormatter(formatter)
    root = logging.getLogger()
    for old in list(root.handlers):
        if getattr(old, "_cmssync", False):
            root.removeHandler(old)
    handler._cmssync = True  # type: ignore[attr-defined]
    root.addHandler(handler)
    root.setLevel(level)
    # httpx logs every request URL at INFO; our client logs requests itself, without query strings.
    logging.getLogger("httpx").setLevel(max(level, logging.WARNING))
    logging.getLogger("httpcore").setLevel(max(level, logging.WARNING))
    quiet_retries()
    structlog.configure(
        processors=[*shared, structlog.stdlib.ProcessorFormatter.wrap_for_formatter],
        logger_factory=structlog.stdlib.LoggerFactory(),
        wrapper_class=structlog.stdlib.BoundLogger,
        cache_logger_on_first_use=False,
    )


_notes: dict[str, Any] = {"json": False, "level": logging.INFO}


def configure_notes(*, json_lines: bool, level: int = logging.INFO) -> None:
    """How :func:`note` writes: JSON lines (``--log-format json``) or plain text, and from which level (``--quiet``:
    warnings and errors only)."""
    _notes.update(json=json_lines, level=level)


def notes_as_json() -> bool:
    return bool(_notes["json"])


def note(message: str, *, level: int = logging.INFO, stream: TextIO | None = None, **fields: Any) -> None:
    """One line on stderr for the person running a command: an error, a warning, a progress count, the sandbox's
    address. Plain text, or with ``--log-format json`` a JSON line like every log line (``event``, ``level``,
    ``logger``, ``timestamp`` and ``fields``), so stderr is one stream of JSON; below the configured level (``-q``:
    warnings and errors only) nothing. Secrets are masked either way."""
    if level < _notes["level"]:
        return
    out = sys.stderr if stream is None else stream
    if _notes["json"]:
        event = {
            "event": redact_text(message),
            **{key: redact_value(key, value) for key, value in fields.items()},
            "level": logging.getLevelName(level).lower(),
            "logger": "cmssync.cli",
            "timestamp": datetime.now(UTC).isoformat().replace("+00:00", "Z"),
        }
        out.write(json.dumps(event, ensure_ascii=False, default=str) + "\n")
    else:
        out.write(redact_text(message) + "\n")
    out.flush()


def bind(**values: Any) -> None:
    """Bind context (run id, trigger, …) to every log line of the current task."""
    structlog.contextvars.bind_contextvars(**values)
