"""The ``daemon`` section: triggers, health server, mode, and the receivers of its notifications."""

from __future__ import annotations

from typing import Literal

from pydantic import Field, SecretStr, field_validator

from cmssync.config.values import Duration, Section, require_http_url

NotifyEvent = Literal[
    "run_failed",
    "recovered",
    "drift_found",
    "changes_pending",
    "drift_reverted",
    "conflict",
    "deletes_blocked",
    "objects_held",
    "change_proposed",
    "change_adopted",
    "proposal_failed",
]


class NotifySettings(Section):
    """One receiver of the daemon's notifications (``daemon.notify`` is a list of them); see docs/daemon.md."""

    url: SecretStr | None = None
    """Where to POST; write ``${env:NAME}`` (a Slack webhook URL holds a token). Unset: this receiver is off."""
    format: Literal["json", "slack"] = "json"
    """``json``: cmssync's own event document; ``slack``: ``{"text", "blocks"}`` for a Slack-compatible webhook."""
    secret: SecretStr | None = None
    """Key of the ``X-Cmssync-Signature-256`` HMAC-SHA256 header over the body; from ``${env:NAME}``."""
    events: list[NotifyEvent] | None = None
    """The events to send; default: all of them."""
    timeout: Duration = 10.0
    """Seconds one delivery attempt may take."""
    name: str | None = None
    """The receiver's label in logs and metrics (default: ``webhook-N``); never the URL, which may hold a token."""

    @field_validator("url")
    @classmethod
    def _url_is_http(cls, value: SecretStr | None) -> SecretStr | None:
        if value is not None:
            require_http_url(value.get_secret_value(), "daemon.notify url")
        return value


class DaemonSettings(Section):
    """``cmssync daemon``: triggers, health server, mode, notifications (docs/daemon.md)."""

    watch: bool | Literal["poll"] = True
    """``true``: notice file changes with inotify; ``poll``: stat the tree every second; ``false``: schedule only."""
    debounce: Duration = 1.0
    """Quiet window before a file-triggered run (seconds, or ``500ms``, ``2s``)."""
    interval: Duration | None = 600.0
    """A full run (reads everything, undoes drift) this often (``10m``, ``1h``); ``null``: none."""
    feed: Duration | None = 5.0
    """Between full runs, poll the site's most recently modified pages (and files) this often (``2s``) and run
    for the managed ones an editor changed: the drift feed, one request a poll while nothing changes; ``null``:
    off (drift is then found by full runs only)."""
    cron: str | None = None
    """Full runs at these times too: a crontab line (minute hour day-of-month month day-of-week) or ``@daily``."""
    timezone: str = "UTC"
    """The IANA time zone of ``cron``."""
    health: str = "127.0.0.1:9090"
    """``host:port`` of the health and metrics server (``/livez``, ``/readyz``, ``/healthz``, ``/metrics``);
    ``0.0.0.0:9090`` in a container; port 0: any free port (logged)."""
    mode: Literal["enforce", "report"] = "enforce"
    """``enforce``: apply the content; ``report``: observe and plan on the same triggers, notify, never write."""
    notify: list[NotifySettings] = Field(default_factory=list)
    """Webhooks told about failures, recoveries, drift, conflicts and blocked deletes (one per change of state)."""
    reports: str | None = None
    """A directory (relative to the content directory) for the HTML plan report of each run that changed something."""
