"""The run's deadline bounds every retry wait (issue 37 item 3): ``retry.within`` and ``retry.within_polls``."""

from __future__ import annotations

import time

import httpx
import pytest

from cmssync.api.errors import DeadlineReached, OutcomeUnknown
from cmssync.api.retry import Kind, RetryPolicy, within, within_polls
from tests.support.api_clients import mock_client


@pytest.mark.parametrize(
    ("on", "left", "expected"),
    [
        (False, 10.0, False),  # not retryable stays so
        (30.0, None, 30.0),  # no deadline: the site's Retry-After
        (30.0, 7.5, 7.5),  # cut to the deadline
        (2.0, 7.5, 2.0),
        (True, 7.5, True),  # stamina's backoff (at most wait_max = 5 s) ends in time
        (True, 3.0, 3.0),  # it might not: wait what is left
        (30.0, 0.0, False),  # past the deadline: no retry at all
        (True, -1.0, False),
    ],
)
def test_a_wait_never_outlasts_the_deadline(on: bool | float, left: float | None, expected: bool | float) -> None:
    assert within(on, left, wait_max=5.0) == expected


def test_late_commit_lookups_end_before_the_deadline() -> None:
    polls = (0.5, 1.0, 2.0, 4.0)
    assert within_polls(polls, None) == polls
    assert within_polls(polls, 4.0) == (0.5, 1.0, 2.0)
    assert within_polls(polls, 0.2) == ()


@pytest.mark.parametrize(("method", "kind"), [("GET", Kind.READ), ("PUT", Kind.UPDATE), ("POST", Kind.CREATE)])
async def test_a_call_throttled_past_the_deadline_ends_as_may_or_may_not_have_happened(method: str, kind: Kind) -> None:
    """The site answers 429 with ``Retry-After: 30`` every time: the call ends at the run's deadline (0.3 s away),
    not after 30 s waits, saying it may or may not have happened."""
    calls = 0

    def throttled(request: httpx.Request) -> httpx.Response:
        nonlocal calls
        calls += 1
        return httpx.Response(429, headers={"Retry-After": "30"}, json={"error": "slow down"})

    client = mock_client(throttled, retry=RetryPolicy())
    client.transport.deadline = time.monotonic() + 0.3
    started = time.monotonic()
    with pytest.raises(OutcomeUnknown, match="may or may not have happened") as raised:
        await client.transport.call(method, "/pages/{page_id}", kind=kind, page_id=1)
    # a create is never repeated by the client (create_verified looks it up); a read or an update waits no more
    assert isinstance(raised.value, DeadlineReached) == (kind is not Kind.CREATE)
    await client.aclose()
    assert time.monotonic() - started < 3
    assert calls <= 3
