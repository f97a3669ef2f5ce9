"""Notification delivery and payloads against a webhook receiver on loopback: signed, retried, never blocking."""

from __future__ import annotations

import asyncio
import json
import time

import pytest
from prometheus_client import CollectorRegistry

from cmssync.config import DaemonSettings
from cmssync.daemon.events import Event, EventObject
from cmssync.daemon.metrics import DaemonMetrics
from cmssync.daemon.notify import Notifier, Receiver, RetryPolicy, receivers_from_settings
from cmssync.daemon.payloads import json_document, public_site, render, signature, slack_document
from cmssync.secrets import MASK, REGISTRY, register_secret
from tests.daemon.receiver import black_hole, receiver

FAST = RetryPolicy(attempts=3, timeout=10.0, wait_initial=0.01, wait_max=0.05)
SECRET = b"hook-signing-key"


def event(kind: str = "drift_found", **values: object) -> Event:
    defaults: dict[str, object] = {
        "summary": "Drift found: 1 object changed on the site (1 new): page:/about",
        "run_id": "abc123",
        "trigger": "schedule",
        "mode": "report",
        "objects": (EventObject("page", "/about", "update", ("name", "Main#1 (update content)")),),
        "total": 1,
    }
    return Event(type=kind, **(defaults | values))  # type: ignore[arg-type]


def sent(metrics: DaemonMetrics, result: str) -> float:
    total = 0.0
    for family in metrics.registry.collect():
        for sample in family.samples:
            if sample.name == "cmssync_notifications_total" and sample.labels["result"] == result:
                total += sample.value
    return total


async def test_each_event_is_delivered_once_signed_and_counted() -> None:
    metrics = DaemonMetrics(CollectorRegistry())
    with receiver(SECRET) as hook:
        notifier = Notifier([Receiver("ops", hook.url, secret=SECRET)], metrics, site="http://site", retry=FAST)
        notifier.start()
        notifier.publish([event(), event("recovered", objects=(), summary="Recovered")])
        await notifier.close(grace=10)
    assert [d.event for d in hook.deliveries] == ["drift_found", "recovered"]
    assert all(d.signed_ok for d in hook.deliveries)
    document = hook.deliveries[0].document
    assert document["event"] == "drift_found"
    assert document["objects"][0] == {
        "id": "page:/about",
        "kind": "page",
        "key": "/about",
        "op": "update",
        "fields": ["name", "Main#1 (update content)"],
    }
    assert hook.deliveries[0].headers["x-cmssync-delivery"] == document["id"]
    assert sent(metrics, "sent") == 2


async def test_a_5xx_is_retried_and_a_4xx_is_final() -> None:
    metrics = DaemonMetrics(CollectorRegistry())
    with receiver() as hook:
        hook.statuses = [503, 502]
        notifier = Notifier([Receiver("ops", hook.url)], metrics, site="", retry=FAST)
        notifier.start()
        notifier.publish([event()])
        await notifier.close(grace=10)
        assert hook.attempts == 3
        assert len(hook.deliveries) == 1
        hook.statuses = [400]
        notifier = Notifier([Receiver("ops", hook.url)], metrics, site="", retry=FAST)
        notifier.start()
        notifier.publish([event()])
        await notifier.close(grace=10)
        assert hook.attempts == 4  # no retry after 400
    assert (sent(metrics, "sent"), sent(metrics, "failed")) == (1, 1)


async def test_a_receiver_that_never_answers_blocks_nothing() -> None:
    """publish() returns at once; another receiver still gets its events; close() keeps to its grace; a full queue
    drops its oldest events."""
    metrics = DaemonMetrics(CollectorRegistry())
    with black_hole() as dead, receiver() as hook:
        slow = Receiver("dead", dead, timeout=30.0)
        notifier = Notifier([slow, Receiver("ok", hook.url)], metrics, site="", retry=FAST, queue_size=3)
        notifier.start()
        events = [event() for _ in range(5)]
        started = time.perf_counter()
        for item in events:
            notifier.publish([item])
        published = time.perf_counter() - started
        delivered = await asyncio.to_thread(hook.wait_for, 3, 10)
        started = time.perf_counter()
        await notifier.close(grace=0.5)
        closed = time.perf_counter() - started
    assert published < 0.05, published
    assert closed < 2.0, closed
    # Five events into queues of three, before any worker ran: each receiver dropped the two oldest.
    assert [d.document["id"] for d in delivered] == [e.id for e in events[2:]]
    assert sent(metrics, "dropped") == 4
    assert sent(metrics, "sent") == 3
    print(f"publish of 5 events: {published * 1000:.2f} ms; close with a dead receiver: {closed:.2f} s")


async def test_a_refused_connection_fails_after_the_retries() -> None:
    metrics = DaemonMetrics(CollectorRegistry())
    with black_hole() as url:
        pass  # closed: nothing listens there any more
    notifier = Notifier([Receiver("gone", url)], metrics, site="", retry=FAST)
    notifier.start()
    notifier.publish([event()])
    await notifier.close(grace=10)
    assert sent(metrics, "failed") == 1


def test_payloads_never_carry_credentials() -> None:
    register_secret("s3cret-token-value")
    try:
        leaky = event("run_failed", reason="the server said: bad token s3cret-token-value", objects=())
        for payload_format in ("json", "slack"):
            body = render(leaky, public_site("https://deploy:pw-in-url@www.example.com/"), payload_format).decode()
            assert "s3cret-token-value" not in body
            assert MASK in body
            assert "pw-in-url" not in body
            assert "deploy" not in body
            assert "https://www.example.com" in body
    finally:
        REGISTRY.clear()


def test_the_slack_payload_has_text_and_blocks_with_escaped_mrkdwn() -> None:
    document = slack_document(event(objects=(EventObject("page", "/a<b>&c", "update", ("name",)),)), "https://x")
    assert set(document) == {"text", "blocks"}
    assert document["text"].startswith(":warning: cmssync: drift found on https://x: Drift found")
    listing = document["blocks"][1]["text"]["text"]
    assert "`page:/a&lt;b&gt;&amp;c` (update): name" in listing
    assert document["blocks"][-1]["type"] == "context"
    many = tuple(EventObject("page", f"/p{i}", "update") for i in range(25))
    assert "… and 15 more" in slack_document(event(objects=many), "")["blocks"][1]["text"]["text"]


def test_the_json_payload_lists_at_most_fifty_objects() -> None:
    many = tuple(EventObject("page", f"/p{i}", "create") for i in range(60))
    document = json_document(event(objects=many, total=60), "https://x")
    assert len(document["objects"]) == 50
    assert document["objects_not_listed"] == 10
    assert json.loads(json.dumps(document)) == document


def test_signature_is_hmac_sha256_of_the_body() -> None:
    # HMAC-SHA256(key=b"key", msg=b"{}"), computed independently (hmac module, not cmssync).
    assert signature(b"{}", b"key") == "sha256=a777724d943eb48dc69bca8a4a6d57a04db3f9ec7e1de4e581e860265bdf3032"


def test_receivers_from_settings_skip_unset_urls_and_register_the_url_as_a_secret() -> None:
    settings = DaemonSettings.model_validate(
        {
            "notify": [
                {"url": "https://hooks.example.com/services/T000/B000/tokenpart123", "format": "slack"},
                {"format": "json", "name": "ops"},  # its ${env:…} was unset
                {"url": "http://127.0.0.1:1/hook", "events": ["run_failed", "recovered"], "secret": "abcdefgh"},
            ]
        }
    )
    try:
        found = receivers_from_settings(settings.notify)
        assert [r.name for r in found] == ["webhook-1", "webhook-3"]
        assert found[1].events == frozenset({"run_failed", "recovered"})
        assert found[1].secret == b"abcdefgh"
        assert "tokenpart123" not in repr(found[0])
        assert "https://hooks.example.com/services/T000/B000/tokenpart123" in REGISTRY
    finally:
        REGISTRY.clear()


@pytest.mark.parametrize("url", ["ftp://x/y", "hooks.example.com", ""])
def test_a_notify_url_must_be_http(url: str) -> None:
    with pytest.raises(ValueError, match="absolute http"):
        DaemonSettings.model_validate({"notify": [{"url": url}]})


async def test_publish_with_no_receivers_is_a_no_op() -> None:
    notifier = Notifier([], DaemonMetrics(CollectorRegistry()), site="")
    notifier.start()
    notifier.publish([event()])
    await asyncio.wait_for(notifier.close(), 1)
