"""The run's deadline bounds every retry wait (issue 37 item 3): ``retry.within`` and ``retry.within_polls``."""

from __future__ import annotations

import pytest

from cmssync.api.retry import within, within_polls


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
