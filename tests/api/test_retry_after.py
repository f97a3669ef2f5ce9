"""``retry.retry_after``: a call's first attempt runs outside stamina, and a failure hands stamina the rest of the call.

What follows the first failure must be what a retry loop started with the call would do: the same number of attempts
in all, stamina's retry hooks once per retry, no retry for what the policy does not retry, and the time budget
counted from the first attempt's start.
"""

from __future__ import annotations

import time
from collections.abc import Iterator

import pytest
import stamina

from cmssync.api.errors import NotFound, ServerError, TransportError
from cmssync.api.retry import Kind, RetryPolicy, retry_after, retry_hook

POLICY = RetryPolicy(attempts=4, timeout=10.0, wait_initial=0.001, wait_max=0.002, wait_jitter=0.0)


@pytest.fixture
def retries_seen() -> Iterator[list[stamina.instrumentation.RetryDetails]]:
    seen: list[stamina.instrumentation.RetryDetails] = []
    hooks = stamina.instrumentation.get_on_retry_hooks()

    def hook(details: stamina.instrumentation.RetryDetails) -> None:
        seen.append(details)

    stamina.instrumentation.set_on_retry_hooks([hook])
    yield seen
    stamina.instrumentation.set_on_retry_hooks(hooks)


def server_error() -> ServerError:
    return ServerError("boom", method="GET", path="/x", status=500)


async def test_attempts_continue_from_the_second_with_the_policys_total(
    retries_seen: list[stamina.instrumentation.RetryDetails],
) -> None:
    numbers: list[int] = []

    async def attempt(number: int) -> str:
        numbers.append(number)
        if number < 4:
            raise server_error()
        return "done"

    started = time.monotonic()
    assert await retry_after(server_error(), started, POLICY, retry_hook(Kind.READ, POLICY), attempt) == "done"
    assert numbers == [2, 3, 4]
    assert [d.retry_num for d in retries_seen] == [1, 2, 3]


async def test_the_last_failure_is_raised_when_attempts_run_out() -> None:
    numbers: list[int] = []

    async def attempt(number: int) -> str:
        numbers.append(number)
        raise server_error()

    with pytest.raises(ServerError):
        await retry_after(server_error(), time.monotonic(), POLICY, retry_hook(Kind.READ, POLICY), attempt)
    assert numbers == [2, 3, 4]


@pytest.mark.parametrize(
    ("kind", "first"),
    [
        (Kind.READ, NotFound("gone", method="GET", path="/x", status=404)),
        (Kind.CREATE, TransportError("dropped", maybe_processed=True, method="POST", path="/x")),
    ],
)
async def test_what_the_policy_does_not_retry_is_raised_at_once(
    kind: Kind, first: Exception, retries_seen: list[stamina.instrumentation.RetryDetails]
) -> None:
    async def attempt(number: int) -> str:
        raise AssertionError("no second attempt")

    with pytest.raises(type(first)) as raised:
        await retry_after(first, time.monotonic(), POLICY, retry_hook(kind, POLICY), attempt)
    assert raised.value is first
    assert retries_seen == []


async def test_the_time_budget_counts_from_the_first_attempt() -> None:
    async def attempt(number: int) -> str:
        raise AssertionError("the budget was spent by the first attempt")

    long_ago = time.monotonic() - POLICY.timeout - 1
    with pytest.raises(ServerError):
        await retry_after(server_error(), long_ago, POLICY, retry_hook(Kind.READ, POLICY), attempt)


async def test_a_retry_after_from_the_site_is_the_wait(
    retries_seen: list[stamina.instrumentation.RetryDetails],
) -> None:
    asked = ServerError("busy", method="GET", path="/x", status=503, retry_after=0.01)

    async def attempt(number: int) -> str:
        return "done"

    assert await retry_after(asked, time.monotonic(), POLICY, retry_hook(Kind.READ, POLICY), attempt) == "done"
    assert [round(d.wait_for, 3) for d in retries_seen] == [0.01]
