"""Notification bodies: cmssync's own JSON document and a Slack-compatible ``{"text", "blocks"}`` message.

Both are built from an :class:`~cmssync.daemon.events.Event` and the site's address only: no settings object, no
client, no token ever reaches this module, and the site address loses any ``user:password@`` part. The finished body
is also masked by value (:func:`cmssync.secrets.mask_secrets`): a failure reason may quote a server that echoed a
credential. Each object's fields go with their values before and after (what an editor wrote, what the content
says), each clipped to :data:`MAX_VALUE` characters in JSON and :data:`MAX_SLACK_VALUE` in Slack; a password never
has a value (plans hold none). A proposal's event also names the branch, the commit, the push and the pull request.

The signature (:func:`signature`) is GitHub's scheme: ``X-Cmssync-Signature-256: sha256=<hex HMAC-SHA256 of the
raw body>``; the body carries the event ``id`` and ``time``, so a receiver can refuse replays.
"""

from __future__ import annotations

import dataclasses
import hashlib
import hmac
import json
from typing import Any

from cmssync import __version__
from cmssync.daemon.events import Event
from cmssync.secrets import mask_secrets, url_without_credentials
from cmssync.sync.pulled_changes import FieldValues

MAX_OBJECTS = 50
"""Objects listed in a JSON payload (the rest are counted)."""
MAX_VALUE = 1000
"""Characters of one value in a JSON payload (the rest is cut, marked with …)."""
MAX_SLACK_VALUE = 120
MAX_SLACK_LINES = 10
MAX_SLACK_TEXT = 2900
"""Slack refuses a section text over 3000 characters."""
SIGNATURE_HEADER = "X-Cmssync-Signature-256"
SCHEMA = "cmssync.notification/v1"
EMOJI = {"info": ":information_source:", "warning": ":warning:", "error": ":x:"}


def public_site(url: str | None) -> str:
    """The site's address without credentials (``https://user:pw@host/`` → ``https://host``)."""
    return url_without_credentials(url).rstrip("/") if url else ""


def clipped(value: Any, limit: int = MAX_VALUE) -> Any:
    """A value for a payload: strings (also inside lists and mappings) cut to ``limit`` characters."""
    if isinstance(value, str):
        return value if len(value) <= limit else value[: limit - 1] + "…"
    if isinstance(value, dict):
        return {str(k): clipped(v, limit) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [clipped(v, limit) for v in value]
    return value


def _values(values: tuple[FieldValues, ...]) -> list[dict[str, Any]]:
    return [{"field": v.field, "before": clipped(v.before), "after": clipped(v.after)} for v in values]


def json_document(event: Event, site: str) -> dict[str, Any]:
    objects = [
        {k: v for k, v in {"id": o.id, "kind": o.kind, "key": o.key, "op": o.op, "fields": list(o.fields),
                           "detail": o.detail, "tree": o.tree,
                           "values": _values(o.values)}.items() if v not in (None, [])}
        for o in event.objects[:MAX_OBJECTS]
    ]  # fmt: skip
    document: dict[str, Any] = {
        "schema": SCHEMA,
        "id": event.id,
        "event": event.type,
        "severity": event.severity,
        "time": event.time,
        "site": site,
        "mode": event.mode,
        "run": {"run_id": event.run_id, "trigger": event.trigger},
        "summary": event.summary,
        "total": event.total,
        "objects": objects,
        "cmssync_version": __version__,
    }
    if len(event.objects) > MAX_OBJECTS:
        document["objects_not_listed"] = len(event.objects) - MAX_OBJECTS
    if event.reason:
        document["reason"] = event.reason
    if event.problems:
        document["problems"] = list(event.problems[:MAX_OBJECTS])
    if event.proposal is not None:
        document["proposal"] = {k: v for k, v in dataclasses.asdict(event.proposal).items() if v is not None}
    return document


def _escape(text: str) -> str:
    """Slack mrkdwn: ``&``, ``<`` and ``>`` are control characters."""
    return text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")


def _clip(text: str, limit: int = MAX_SLACK_TEXT) -> str:
    return text if len(text) <= limit else text[: limit - 1] + "…"


def slack_document(event: Event, site: str) -> dict[str, Any]:
    title = f"{EMOJI[event.severity]} cmssync: {event.type.replace('_', ' ')} on {site or 'the site'}"
    lines = []
    for item in event.objects[:MAX_SLACK_LINES]:
        text = f"• `{_escape(item.id)}`" + (f" ({_escape(item.op)})" if item.op else "")
        if item.fields:
            text += ": " + _escape(", ".join(item.fields))
        if item.detail:
            text += f" — {_escape(item.detail)}"
        lines.append(text)
        lines += [
            f"    {_escape(value.field)}: {_slack_value(value.before)} → {_slack_value(value.after)}"
            for value in item.values[:MAX_SLACK_LINES]
        ]
    if len(event.objects) > MAX_SLACK_LINES:
        lines.append(f"… and {len(event.objects) - MAX_SLACK_LINES} more")
    proposal = event.proposal
    if proposal is not None:
        where = f"branch `{_escape(proposal.branch)}`"
        where += f", commit `{proposal.commit[:12]}`" if proposal.commit else ""
        where += f", pushed to `{_escape(proposal.remote)}`" if proposal.remote and proposal.pushed else ""
        lines.insert(0, where + (f" — <{proposal.pull_request}|pull request>" if proposal.pull_request else ""))
    if event.reason and event.reason not in event.summary:
        lines.append(f"Reason: {_escape(event.reason)}")
    lines += [f"• {_escape(problem)}" for problem in event.problems[: max(0, MAX_SLACK_LINES - len(lines))]]
    blocks: list[dict[str, Any]] = [
        {"type": "section", "text": {"type": "mrkdwn", "text": _clip(f"*{_escape(title)}*\n{_escape(event.summary)}")}}
    ]
    if lines:
        blocks.append({"type": "section", "text": {"type": "mrkdwn", "text": _clip("\n".join(lines))}})
    context = f"mode {event.mode} · run {event.run_id} ({event.trigger}) · {event.time}"
    blocks.append({"type": "context", "elements": [{"type": "mrkdwn", "text": _escape(context)}]})
    return {"text": _clip(f"{title}: {event.summary}"), "blocks": blocks}


def _slack_value(value: Any) -> str:
    """A value in a Slack line: its JSON, cut to :data:`MAX_SLACK_VALUE` characters, as code."""
    if value is None:
        return "_(none)_"
    text = json.dumps(value, ensure_ascii=False, default=str)
    text = text if len(text) <= MAX_SLACK_VALUE else text[: MAX_SLACK_VALUE - 1] + "…"
    return "`" + _escape(text.replace("`", "'")) + "`"


def render(event: Event, site: str, payload_format: str) -> bytes:
    """The request body, masked; ``payload_format`` is ``json`` or ``slack``."""
    document = slack_document(event, site) if payload_format == "slack" else json_document(event, site)
    return mask_secrets(json.dumps(document, ensure_ascii=False, separators=(",", ":"))).encode()


def signature(body: bytes, secret: bytes) -> str:
    return "sha256=" + hmac.new(secret, body, hashlib.sha256).hexdigest()


def verify(body: bytes, secret: bytes, header: str) -> bool:
    """What a receiver does (used by the tests; documented for receivers)."""
    return hmac.compare_digest(signature(body, secret), header)
