"""The drift feed never trusts a date from the site's future (issue 37 item 5): a replayed clock step.

The sandbox's clock (its dates and its ``Date`` header, as a real server's PHP and web server share one) runs an
hour ahead while an editor edits a managed page, then steps back to the right time. Before, the feed kept the
future date as the newest it had seen and took every later real edit for old: it never asked for a run again.
Now the step is noticed at the next poll (the newest date seen is past the site's clock), the list starts again and
one full run is requested; the editor's next edit is run for as usual.
"""

from __future__ import annotations

import datetime as dt
from pathlib import Path
from typing import Any

import pytest

from cmssync.daemon.feed import DriftFeed, _Head
from cmssync.emulator.embedded import Sandbox
from cmssync.plan.scope_model import Scope
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


async def test_a_clock_step_back_blinds_the_feed_for_one_poll_at_most(
    sandbox_server: Sandbox, tmp_path: Path, clock: Clock
) -> None:
    site = Site.seeded(sandbox_server, tmp_path, SEED)
    await site.pull()
    workspace = site.workspace()
    requested: list[tuple[str, Scope | None]] = []
    editor = Editor(sandbox_server)
    async with workspace.client() as client:
        feed = DriftFeed(client, lambda t, s: requested.append((t, s)), interval=0)
        feed.after_run([], workspace.load_state())  # the state the startup run left
        await feed.poll()  # the first poll sets where the feed starts

        clock.offset = HOUR  # the site's clock runs an hour ahead
        editor.edit_block("/about", "Main", 0, "<p>Edited while the clock was ahead</p>")
        assert (await feed.poll()).managed == ["/about"]

        clock.offset = 0  # ... and is set right
        stepped = await feed.poll()
        assert stepped.full, "the step back was not noticed"
        assert requested[-1] == ("drift", None)  # a full run finds what changed in between

        clock.next_second()
        editor.edit_block("/about", "Main", 0, "<p>Edited after the step</p>")
        assert (await feed.poll()).managed == ["/about"], "a real edit taken for old"
        assert (await feed.poll()).managed == []  # and only once
    editor.close()


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
