"""The drift feed never trusts a date from the site's future (issue 37 item 5): a replayed clock step.

The sandbox's clock (its dates and its ``Date`` header, as a real server's PHP and web server share one) runs an
hour ahead while an editor edits a managed page, then steps back to the right time. Before, the feed kept the
future date as the newest it had seen and took every later real edit for old: it never asked for a run again.
Now the step is noticed at the next poll (the newest date seen is past the site's clock), the list starts again and
one full run is requested; the editor's next edit is run for as usual.
"""

from __future__ import annotations

import contextlib
import datetime as dt
import time
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest

from cmssync.daemon.feed import DriftFeed, _Head
from cmssync.emulator.embedded import Sandbox
from cmssync.plan.scope_model import Scope
from cmssync.state.records import State
from tests.emulator.helpers import Clock
from tests.support.editors import Editor
from tests.support.sites import Site


@pytest.fixture
def clock(monkeypatch: pytest.MonkeyPatch) -> Clock:
    """The sandbox's clock (its dates and its ``Date`` header), moved by the test."""
    clock = Clock()
    monkeypatch.setattr("cmssync.emulator.routing.now", clock.now)
    return clock


HOUR = 3600
SEED: dict[str, Any] = {
    "pages": [
        {"path": "/", "name": "Home", "areas": {"Main": [{"type": "content", "value": {"content": "<p>Hi</p>"}}]}},
        {"path": "/about", "name": "About", "areas": {"Main": [{"type": "content", "value": {"content": "<p>A</p>"}}]}},
    ]
}


@contextlib.asynccontextmanager
async def feeding(
    sandbox: Sandbox, tmp_path: Path, requested: list[tuple[str, Scope | None]] | None = None
) -> AsyncIterator[tuple[DriftFeed, Editor, State]]:
    """A drift feed on the pulled :data:`SEED` site (its requests noted in ``requested``), an editor, and the state
    the pull left (for ``after_run``)."""
    site = Site.seeded(sandbox, tmp_path, SEED)
    await site.pull()
    workspace = site.workspace()
    noted = requested if requested is not None else []
    with contextlib.closing(Editor(sandbox)) as editor:
        async with workspace.client() as client:
            yield DriftFeed(client, lambda t, s: noted.append((t, s)), interval=0), editor, workspace.load_state()


async def test_a_clock_step_back_blinds_the_feed_for_one_poll_at_most(
    sandbox_server: Sandbox, tmp_path: Path, clock: Clock
) -> None:
    requested: list[tuple[str, Scope | None]] = []
    async with feeding(sandbox_server, tmp_path, requested) as (feed, editor, state):
        feed.after_run([], state)  # the state the startup run left
        clock.next_second()  # past the seed's second (a poll in it would read its pages once more later)
        await feed.poll()  # the first poll sets where the feed starts

        clock.offset = HOUR  # the site's clock runs an hour ahead
        editor.edit_block("/about", "Main", 0, "<p>Edited while the clock was ahead</p>")
        assert (await feed.poll()).managed == ["/about"]

        clock.offset = 1  # ... and is set right (still past the seed's second)
        stepped = await feed.poll()
        assert stepped.full, "the step back was not noticed"
        assert requested[-1] == ("drift", None)  # a full run finds what changed in between

        clock.next_second()
        editor.edit_block("/about", "Main", 0, "<p>Edited after the step</p>")
        assert (await feed.poll()).managed == ["/about"], "a real edit taken for old"
        clock.next_second()
        # polled within the edit's own second, that second's items are read once more (another edit in it keeps
        # the date); then no more
        assert (await feed.poll()).managed in ([], ["/about"])
        assert (await feed.poll()).managed == []


def test_one_future_dated_answer_does_not_hide_later_edits() -> None:
    """A proxy (or a broken clock) dates one item a day ahead of the site's ``Date``: that date is never the newest
    seen, the item counts as moved only when its date changes, and a real edit after it is seen."""
    now = dt.datetime(2026, 11, 29, 12, 0, tzinfo=dt.UTC)
    head = _Head()
    head.advance([("1", now - dt.timedelta(minutes=5))], now)
    future = [("7", now + dt.timedelta(days=1)), ("1", now - dt.timedelta(minutes=5))]
    assert head.moved(future, now) == ["7"]
    head.advance(future, now)
    assert head.moved(future, now + dt.timedelta(seconds=10)) == []  # the same answer again: nothing moved
    later = now + dt.timedelta(seconds=30)
    edited = [("7", now + dt.timedelta(days=1)), ("2", later), ("1", now - dt.timedelta(minutes=5))]
    assert head.moved(edited, later) == ["2"]
    assert not head.stepped(later)


async def test_an_edit_before_the_lists_first_poll_is_seen(
    sandbox_server: Sandbox, tmp_path: Path, clock: Clock
) -> None:
    """The first poll of the page list compares with the site's time when the first run began (its ``Date`` header,
    less the time since the run's start): an editor's edit made after the run read the site but before the first
    poll is run for (the first poll only set where the list starts, and the edit waited for a full run); pages last
    changed before the run are not."""
    async with feeding(sandbox_server, tmp_path) as (feed, editor, state):
        feed.after_run([], state, started=time.monotonic())  # the startup run, just finished
        clock.offset += 3  # the site's clock three seconds on: the seeded pages are older than the run's start
        editor.edit_block("/about", "Main", 0, "<p>Edited before the feed's first poll</p>")
        first = await feed.poll()
        assert first.managed == ["/about"]
        assert first.requests == 1
        clock.next_second()
        await feed.poll()  # the edit's second read once more, at most
        assert (await feed.poll()).managed == []


async def test_a_second_edit_in_the_second_a_poll_saw_is_seen(
    sandbox_server: Sandbox, tmp_path: Path, clock: Clock
) -> None:
    """Dates are whole seconds: a page edited, polled and edited again within one second keeps its date. A poll made
    before the newest date's second was over has the first poll after that second take its managed items as moved
    once more (before, the second edit waited for a full run)."""
    async with feeding(sandbox_server, tmp_path) as (feed, editor, state):
        clock.offset += 5  # past the seed's second, and held in one second
        clock.freeze()
        # the site's clock as the test holds it (a loaded machine must not carry a poll into the next second)
        feed.client.transport.site_now = lambda: dt.datetime.fromtimestamp(clock.now(), dt.UTC)  # type: ignore[method-assign]
        feed.after_run([], state)
        await feed.poll()
        editor.edit_block("/about", "Main", 0, "<p>First edit</p>")
        assert (await feed.poll()).managed == ["/about"]
        editor.edit_block("/about", "Main", 0, "<p>Second edit, same second</p>")
        assert (await feed.poll()).managed == []  # that second is not over yet
        clock.next_second()
        assert (await feed.poll()).managed == ["/about"], "the second edit in the same second was missed"
        assert (await feed.poll()).managed == []  # read once more, then no more


def test_a_poll_in_the_newest_dates_second_reads_it_once_more_after_it() -> None:
    """A poll made while the newest date's second goes on leaves it open: the first poll after that second takes its
    items as moved once more; a poll made once it is over reads nothing again (one request, no extra run)."""
    edited = dt.datetime(2026, 11, 29, 12, 0, 5, tzinfo=dt.UTC)
    head = _Head()
    head.advance([("1", edited - dt.timedelta(minutes=5))], edited - dt.timedelta(minutes=1))
    items = [("2", edited), ("1", edited - dt.timedelta(minutes=5))]
    assert head.moved(items, edited + dt.timedelta(milliseconds=400)) == ["2"]
    head.advance(items, edited + dt.timedelta(milliseconds=400))  # the same second: left open
    assert head.moved(items, edited + dt.timedelta(milliseconds=700)) == []  # not over yet: not read again
    head.advance(items, edited + dt.timedelta(milliseconds=700))
    assert head.moved(items, edited + dt.timedelta(seconds=5)) == ["2"]  # once, after that second
    head.advance(items, edited + dt.timedelta(seconds=5))
    assert head.moved(items, edited + dt.timedelta(seconds=10)) == []
    assert _Head().moved(items, edited) == []  # a first poll without a baseline only sets the start
    first = _Head()
    assert first.moved(items, edited, since=edited - dt.timedelta(seconds=1)) == ["2"]
