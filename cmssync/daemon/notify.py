"""Deliver events to webhooks without ever holding up a run.

:meth:`Notifier.publish` only puts events on a bounded queue per receiver and returns: it never waits for the
network. One worker task per receiver sends them in order, each with retries and exponential backoff (stamina:
transport errors, timeouts, 429 and 5xx are retried; any other 4xx is final), so a slow or dead receiver delays
only its own queue — never a run, never another receiver. When a queue is full the *oldest* event is dropped (and
counted): the newest state is the one worth telling. On shutdown the queues get :data:`FLUSH_GRACE` seconds to
drain; whatever is left is dropped.

Each receiver has its own ``httpx.AsyncClient`` with no credentials of the site: the receiver URL is registered as
a secret (a Slack webhook URL is one) and never logged — logs and metrics name a receiver by its ``name``.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

import httpx
import stamina
import structlog

from cmssync import __version__
from cmssync.config import NotifySettings
from cmssync.daemon.events import EVENT_TYPES, Event, EventType
from cmssync.daemon.metrics import DaemonMetrics
from cmssync.daemon.payloads import SIGNATURE_HEADER, render, signature
from cmssync.secrets import register_secret, register_url_credentials

log = structlog.get_logger("cmssync.daemon")

QUEUE_SIZE = 100
FLUSH_GRACE = 3.0
"""Seconds the queues get to drain when the daemon stops."""


@dataclass(frozen=True)
class RetryPolicy:
    """stamina's knobs for one event: attempts, overall time budget, first and longest wait (seconds)."""

    attempts: int = 6
    timeout: float = 300.0
    wait_initial: float = 1.0
    wait_max: float = 60.0


@dataclass(frozen=True)
class Receiver:
    name: str
    url: str
    payload_format: str = "json"
    secret: bytes | None = None
    events: frozenset[EventType] = frozenset(EVENT_TYPES)
    timeout: float = 10.0

    def __repr__(self) -> str:  # the URL may hold a token
        return f"Receiver(name={self.name!r}, format={self.payload_format!r}, signed={self.secret is not None})"


def receivers_from_settings(settings: Sequence[NotifySettings]) -> list[Receiver]:
    """The configured receivers with a URL (one whose ``${env:…}`` is unset is left out, with a warning)."""
    found: list[Receiver] = []
    for index, entry in enumerate(settings):
        name = entry.name or f"webhook-{index + 1}"
        if entry.url is None:
            log.warning("notification receiver has no url; it is off", receiver=name)
            continue
        url = entry.url.get_secret_value()
        secret = entry.secret.get_secret_value() if entry.secret is not None else None
        register_secret(url, secret)
        register_url_credentials(url)
        found.append(
            Receiver(
                name=name,
                url=url,
                payload_format=entry.format,
                secret=secret.encode() if secret else None,
                events=frozenset(entry.events) if entry.events is not None else frozenset(EVENT_TYPES),
                timeout=entry.timeout,
            )
        )
    return found


class DeliveryError(Exception):
    def __init__(self, message: str, *, retryable: bool) -> None:
        super().__init__(message)
        self.retryable = retryable


def _retryable(exc: Exception) -> bool:
    if isinstance(exc, DeliveryError):
        return exc.retryable
    return isinstance(exc, httpx.TransportError)


class Notifier:
    """Queues and workers for ``receivers`` (see the module docstring); start and close it on the event loop."""

    def __init__(
        self,
        receivers: Iterable[Receiver],
        metrics: DaemonMetrics,
        *,
        site: str,
        retry: RetryPolicy | None = None,
        queue_size: int = QUEUE_SIZE,
        transport: httpx.AsyncBaseTransport | None = None,
    ) -> None:
        self.receivers = list(receivers)
        self.site = site
        self.retry = retry or RetryPolicy()
        self._metrics = metrics
        self._transport = transport
        self._queues = {r.name: asyncio.Queue[Event](maxsize=queue_size) for r in self.receivers}
        self._tasks: list[asyncio.Task[None]] = []

    def start(self) -> None:
        for receiver in self.receivers:
            task = asyncio.create_task(self._work(receiver), name=f"cmssync-notify-{receiver.name}")
            self._tasks.append(task)

    def publish(self, events: Iterable[Event]) -> None:
        """Queue ``events`` for every receiver that wants them; returns at once."""
        for event in events:
            log.info("notification", event_type=event.type, summary=event.summary, event_id=event.id)
            for receiver in self.receivers:
                if event.type not in receiver.events:
                    continue
                queue = self._queues[receiver.name]
                if queue.full():
                    dropped = queue.get_nowait()
                    queue.task_done()
                    self._count(receiver, dropped, "dropped")
                    log.warning("notification dropped: queue full", receiver=receiver.name, event_type=dropped.type)
                queue.put_nowait(event)

    async def close(self, grace: float = FLUSH_GRACE) -> None:
        """Give the queues ``grace`` seconds to drain, then stop the workers."""
        if self._tasks:
            drained = asyncio.gather(*(queue.join() for queue in self._queues.values()))
            try:
                async with asyncio.timeout(grace):
                    await drained
            except TimeoutError:
                drained.cancel()
                left = sum(queue.qsize() for queue in self._queues.values())
                log.warning("notifications not delivered before the stop", pending=left)
        for task in self._tasks:
            task.cancel()
        for task in self._tasks:
            with contextlib.suppress(asyncio.CancelledError):
                await task
        self._tasks = []

    def _count(self, receiver: Receiver, event: Event, result: str) -> None:
        self._metrics.notifications.labels(receiver=receiver.name, event=event.type, result=result).inc()

    async def _work(self, receiver: Receiver) -> None:
        queue = self._queues[receiver.name]
        headers = {"User-Agent": f"cmssync/{__version__}", "Content-Type": "application/json"}
        async with httpx.AsyncClient(
            transport=self._transport, timeout=receiver.timeout, headers=headers, follow_redirects=False
        ) as client:
            while True:
                event = await queue.get()
                try:
                    await self._deliver(client, receiver, event)
                    self._count(receiver, event, "sent")
                    log.info("notification sent", receiver=receiver.name, event_type=event.type, event_id=event.id)
                except asyncio.CancelledError:
                    raise
                except Exception as exc:  # a receiver's failure must never stop the worker
                    self._count(receiver, event, "failed")
                    log.warning(
                        "notification failed",
                        receiver=receiver.name,
                        event_type=event.type,
                        event_id=event.id,
                        error=_describe(exc),
                    )
                finally:
                    queue.task_done()

    async def _deliver(self, client: httpx.AsyncClient, receiver: Receiver, event: Event) -> None:
        body = render(event, self.site, receiver.payload_format)
        headers = {"X-Cmssync-Event": event.type, "X-Cmssync-Delivery": event.id}
        if receiver.secret is not None:
            headers[SIGNATURE_HEADER] = signature(body, receiver.secret)
        policy = self.retry
        async for attempt in stamina.retry_context(
            on=_retryable,
            attempts=policy.attempts,
            timeout=policy.timeout,
            wait_initial=policy.wait_initial,
            wait_max=policy.wait_max,
        ):
            with attempt:
                response = await client.post(receiver.url, content=body, headers=headers)
                if response.status_code == 429 or response.status_code >= 500:
                    raise DeliveryError(f"the receiver answered {response.status_code}", retryable=True)
                if response.status_code >= 300:
                    raise DeliveryError(f"the receiver answered {response.status_code}", retryable=False)


def _describe(exc: Exception) -> str:
    """A short reason that never quotes the URL (httpx errors may carry the request)."""
    if isinstance(exc, DeliveryError):
        return str(exc)
    return type(exc).__name__
