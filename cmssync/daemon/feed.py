"""The drift feed: between full runs, notice editors' changes on the site within seconds, for one request a poll.

The API's page and file lists are sorted by modification, newest first, and on a real 9.3.1 site (recorded in
``tests/conformance/concrete-9.3.1/lists.jsonl``, scenario ``feed``):

* ``GET /pages``: a page update (even unapproved) and an approval move the page to the top with the time of the
  change; a block added or edited moves nothing until its version is approved (then the approval does);
* ``GET /files``: an upload and an update (a new file version) move the file to the top;
* ``GET /users``: sorted by the date a user was *added*: an edit never moves a user. So users are not polled; their
  drift is found by full runs.

Stacks (global areas) are in no list. On their turn (``latest_by_id``) one stack the state manages is read by its id,
the managed stacks taking turns: ``GET /pages/{id}?version=recent`` shows a new version on every write to a stack and
a new ``date_last_updated`` on an approval (``tests/conformance/concrete-9.3.1/stack-feed.jsonl``), so a mark that
differs from the one the stack's previous read showed is a move. A stack's first read only sets its mark; a stack a run
wrote is read at the next poll, whose mark is taken as the run's doing.

Each poll asks for one list's newest ``limit`` items (pages; files every third poll instead, when the state manages
files; a managed stack every second poll: each kind's ``latest`` read and ``latest_every`` in
``cmssync.sync.kinds``) and compares them with what the previous poll of that list saw: an item newer than the
newest date seen then, or with that date but not seen with it, moved. Nothing moved: the poll cost one request.
Something moved: the state says which of the moved objects cmssync manages, and a run of exactly those is requested
(trigger ``drift``): in ``report`` mode it plans and notifies the drift, in ``enforce`` mode it applies like any run
— conflicts and someone else's drafts are respected by the planner as always. An object cmssync does not manage
costs nothing beyond the poll. When every item of the window moved, the next ones are read (``after`` the last) up
to :data:`MAX_PAGES` requests; beyond that a full run is requested instead.

Pages of locale trees other than the default one are in no list (``GET /pages`` shows the default tree only):
on a multilingual site, every :data:`TREE_EVERY`-th poll that would read the page list reads instead the children
list of one parent of such managed pages, or one managed tree home (``cmssync.daemon.tree_feed``), still one request.

No poll is made while a run is going or waiting to start (it reads the site itself), nor before the first run
finished: what cmssync manages is the state as the last run left it (``DriftFeed.after_run``), never read apart.
cmssync's own writes move pages too: the pages, files and stacks a run wrote are passed to
:meth:`DriftFeed.after_run`, the poll after the run reads their list (or one of those stacks) and takes their moves
as the run's doing (an editor's change to the same object during that run is left to the next full run, which stays
the safety net).

The first poll of a list compares with a baseline: the site's time when the first run began (the run's start,
:meth:`DriftFeed.after_run`, on the site's clock from the poll's ``Date`` header), so an edit made
during that run or before the list's first poll is seen (the run's own writes aside); without a ``Date`` header it
only sets where the list starts. Dates are whole seconds: an item edited again in the second it was seen in would
keep its date, so when a poll falls in the same second as the newest date it saw (the second is not over), the first
poll after that second takes that second's managed items as moved once more (one more run of them) — never those the
last run wrote (an editor's approval in the same second as cmssync's own write to that page is left to the next full
run), nor those that poll itself asked a run for (that run reads them after it), unless a later poll in that second
sees them again.
"""

from __future__ import annotations

import asyncio
import datetime as dt
import time
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import structlog

from cmssync.api.client import ConcreteClient
from cmssync.daemon.tree_feed import TreeWatch
from cmssync.plan.actions import Action
from cmssync.plan.kinds import KindFacts, KindTable
from cmssync.plan.scope_model import Scope
from cmssync.state.records import State
from cmssync.sync.kinds import Registry, discover

log = structlog.get_logger("cmssync.daemon")

LIMIT = 10
"""Items a poll asks for: a poll notices up to this many changes without a second request."""
MAX_PAGES = 5
TREE_EVERY = 4
"""On a multilingual site, every this-many-th poll due for the page list watches the other trees' pages instead."""
"""Requests one poll may make to find where the moved items end; more moved than that asks for a full run."""

Kind = str
"""A kind the feed reads (``cmssync.sync.kinds.ManagedKind.latest``): a site list sorted by modification, or its
objects one by one (``latest_by_id``)."""
Request = Callable[[str, Scope | None], None]


SKEW = dt.timedelta(seconds=2)
"""How far past the site's clock (its ``Date`` header, whole seconds like the lists' dates) a date may be and still
count as now."""


@dataclass
class _Head:
    """Where one list stood at its last poll: the newest date and the ids seen with it (``None``: not polled).

    A date past the site's own clock (``now``: from its ``Date`` header) is never trusted as the newest: one future
    date — a clock stepped back, a proxy rewriting dates — would otherwise hide every later real edit. Such an item
    is kept in ``ahead`` and counts as moved only when its date changes."""

    newest: dt.datetime | None = None
    ids: set[str] = field(default_factory=set)
    started: bool = False
    ahead: dict[str, dt.datetime] = field(default_factory=dict)
    open: set[str] = field(default_factory=set)
    """The ids seen with the date :attr:`open_second` by a poll made before that second was over (another edit in it
    leaves the date as it was): moved once more, at the first poll made after that second."""
    open_second: dt.datetime | None = None
    quiet: set[str] = field(default_factory=set)
    """Ids seen with :attr:`newest` never to read again in that second: the last run's writes (and unmanaged objects;
    the feed says which, :meth:`DriftFeed.poll`)."""

    def moved(
        self,
        items: Sequence[tuple[str, dt.datetime | None]],
        now: dt.datetime | None = None,
        since: dt.datetime | None = None,
    ) -> list[str]:
        """The ids of ``items`` (newest first) that moved since the last poll; at the first poll, those dated at or
        after ``since`` (none without it)."""
        if not self.started:
            return [key for key, date in items if since is not None and date is not None and since <= date]
        newest, ids = self.newest, self.ids
        return [
            key
            for key, date in items
            if (
                self.ahead.get(key) != date
                if _future(date, now)
                else date is None
                or newest is None
                or date > newest
                or (date == newest and key not in ids)
                or (key in self.open and date == self.open_second and self._closed(now))
            )
        ]

    def _closed(self, now: dt.datetime | None) -> bool:
        """Whether :attr:`open_second` is over at ``now`` (the site's clock; unknown: taken as over)."""
        return self.open_second is not None and (now is None or now.replace(microsecond=0) > self.open_second)

    def advance(self, items: Sequence[tuple[str, dt.datetime | None]], now: dt.datetime | None = None) -> None:
        self.started = True
        self.ahead = {key: date for key, date in items if date is not None and _future(date, now)}
        dated = [(key, date) for key, date in items if date is not None and key not in self.ahead]
        if self._closed(now):  # read once more at this poll
            self.open, self.open_second = set(), None
        if not dated:
            return
        newest = max(date for _, date in dated)
        if self.newest is None or newest > self.newest:
            self.newest, self.ids, self.quiet = newest, set(), set()
        if newest == self.newest:
            self.ids |= {key for key, date in dated if date == newest}
        if now is not None and self.newest is not None and now.replace(microsecond=0) <= self.newest:
            self.open_second = self.newest  # this second is not over: an item of it may change again unseen
            self.open |= self.ids - self.quiet

    def stepped(self, now: dt.datetime | None) -> bool:
        """The newest date seen is past the site's clock: the clock stepped back since (or the date was false)."""
        return self.newest is not None and _future(self.newest, now)

    def restart(self, items: Sequence[tuple[str, dt.datetime | None]], now: dt.datetime | None) -> None:
        """Start again from ``items`` as a first poll would (after :meth:`stepped`)."""
        self.newest, self.ids, self.ahead, self.open, self.open_second = None, set(), {}, set(), None
        self.quiet = set()
        self.advance(items, now)


def _future(date: dt.datetime | None, now: dt.datetime | None) -> bool:
    return date is not None and now is not None and date > now + SKEW


@dataclass
class PollResult:
    kind: Kind
    requests: int
    moved: int = 0
    managed: list[str] = field(default_factory=list)
    """Managed paths that moved (and were not this daemon's own writes)."""
    full: bool = False
    """Too many moved to tell: a full run was requested."""
    failed: bool = False


class DriftFeed:
    """Polls the site's modification-ordered lists and requests runs for managed objects that moved."""

    def __init__(
        self,
        client: ConcreteClient,
        request: Request,
        *,
        interval: float,
        busy: Callable[[], bool] = lambda: False,
        on_poll: Callable[[PollResult], None] = lambda result: None,
        kinds: Registry | None = None,
    ) -> None:
        self.client = client
        self.request = request
        self.interval = interval
        self.busy = busy
        """True while a run is going or pending: it reads the site itself, and its writes are not drift."""
        self.on_poll = on_poll
        registry = kinds or discover()
        self.kinds: KindTable = registry.table
        self.lists = {kind.name: kind for kind in registry if kind.latest is not None}
        self.marks: dict[Kind, dict[str, Any]] = {name: {} for name, kind in self.lists.items() if kind.latest_by_id}
        """Of each kind read by id: the mark each object's last read showed, by managed key."""
        self.turns: dict[Kind, int] = dict.fromkeys(self.marks, 0)
        self.heads: dict[Kind, _Head] = {name: _Head() for name in self.lists if name not in self.marks}
        self.own: dict[Kind, set[str]] = {name: set() for name in self.lists}
        """Paths the last runs wrote, not yet seen to move (of a kind read by id: not yet read again)."""
        self.polls = 0
        self.every_poll: Kind = next(name for name, kind in self.lists.items() if kind.latest_every == 1)
        """The list read when no rarer list's turn has come (the pages')."""
        self.kind: Kind = self.every_poll
        """The list of the poll going on (or the last one)."""
        self.state: State | None = None
        """The state as the last run left it (``after_run``): what cmssync manages. None: no run finished yet, and
        no poll is made."""
        self.tree_watch = TreeWatch()
        """The managed pages of locale trees other than the default one (in no list)."""
        self.since: float | None = None
        """When the first run began (``time.monotonic``): a list's first poll takes what moved since as moved."""

    # -- the loop -------------------------------------------------------------------------------------------------

    async def serve(self) -> None:
        """Poll every ``interval`` seconds until cancelled; a failed poll is logged and the next one tries again."""
        while True:
            if self.busy() or self.state is None:
                await asyncio.sleep(self.interval)
                continue
            try:
                self.on_poll(await self.poll())
            except asyncio.CancelledError:
                raise
            except Exception as exc:
                log.warning("drift feed poll failed", error=f"{type(exc).__name__}: {exc}"[:300])
                self.on_poll(PollResult(self.kind, 0, failed=True))
            await asyncio.sleep(self.interval)

    async def poll(self) -> PollResult:
        """One poll of one list (module docstring)."""
        state = self.state
        if state is None:
            return PollResult(self.kind, 0)
        self.polls += 1
        kind = self.kind = self._turn(state)
        if kind == self.every_poll and self.polls % TREE_EVERY == 1 and self.tree_watch.active(state):
            label, moved = await self.tree_watch.poll(self.client, state)
            return await self._moved(kind, (PollResult(label, 1), moved), set(), keyed=False)
        if kind in self.marks:
            return await self._moved(kind, await self._read_one(kind, state), set())
        head = self.heads[kind]
        window, requests = await self._read(kind, head)
        now = self.client.transport.site_now()
        since = self._baseline(now) if not head.started else None
        own, self.own[kind] = self.own[kind], set()  # only the first poll after a run can see its writes move
        if head.stepped(now):
            # Every edit dated between the site's clock and the newest date seen would pass unseen: start again from
            # this window and let a full run find what changed meanwhile.
            log.warning("drift feed: the site's clock is behind a date it showed; full run requested", kind=kind)
            head.restart(window, now)
            self.request("drift", None)
            return PollResult(kind, requests, full=True)
        result = PollResult(kind, requests)
        moved = head.moved(window, now, since)
        head.advance(window, now)
        if len(moved) >= LIMIT * MAX_PAGES:
            log.info("drift feed: more objects moved than a poll reads; full run requested", kind=kind)
            self.request("drift", None)
            return PollResult(kind, requests, len(moved), full=True)
        result = await self._moved(kind, (result, moved), own)
        if head.open:  # read again: managed objects only, never what the last run wrote (its doing), and not what
            # this poll asked a run for (that run reads it after this poll; a later poll in this second opens it again)
            managed = _managed(self.kinds[kind], state)
            quiet = {key for key in head.open if key not in managed or managed[key] in own}
            head.quiet |= quiet
            head.open -= quiet | {key for key in head.open if managed.get(key) in result.managed}
        return result

    async def _moved(
        self, kind: Kind, read: tuple[PollResult, list[str]], own: set[str], *, keyed: bool = True
    ) -> PollResult:
        """Request a run of the managed objects among the ``moved`` ids (``own``: keys the last run wrote, whose moves
        are its doing: neither run for nor counted; ``keyed`` False: ``moved`` are already managed keys)."""
        result, moved = read
        assert self.state is not None
        managed = _managed(self.kinds[kind], self.state) if keyed else {key: key for key in moved}
        moved = [key for key in moved if managed.get(key) not in own]  # the run's own writes are not counted
        if not moved:
            return result
        result.moved = len(moved)
        result.managed = sorted({managed[key] for key in moved if key in managed})
        if result.managed:
            log.info("drift feed: managed objects changed on the site", kind=kind, keys=result.managed)
            self.request("drift", self.kinds[kind].scoped(frozenset(result.managed)))
        return result

    async def _read_one(self, kind: Kind, state: State) -> tuple[PollResult, list[str]]:
        """A kind in no list: read the managed object whose turn it is; it moved if its mark differs from the one its
        last read showed."""
        managed = _managed(self.kinds[kind], state)
        ids = sorted(managed, key=lambda key: managed[key])
        self.own[kind] &= set(managed.values())
        written = sorted(key for key in ids if managed[key] in self.own[kind])
        if written:  # a run wrote it: its mark now is the run's doing
            chosen = written[0]
            self.own[kind].discard(managed[chosen])
        else:
            chosen, self.turns[kind] = ids[self.turns[kind] % len(ids)], self.turns[kind] + 1
        latest = self.lists[kind].latest
        assert latest is not None
        marks = self.marks[kind]
        items = await latest(self.client, 1, chosen)
        moved = [key for key, mark in items if managed.get(key) in marks and marks[managed[key]] != mark]
        marks.update({managed[key]: mark for key, mark in items if key in managed})
        return PollResult(kind, 1), moved

    def _turn(self, state: State) -> Kind:
        """The list this poll reads: one a run just wrote to (its writes are told from an editor's change only at its
        first poll after the run), else a rarer kind on its turn when the state has records of it, else
        the list read every poll."""
        for name, own in self.own.items():
            if own and (name not in self.marks or self.kinds[name].kept_in(state)):
                return name
        return next(
            (
                name
                for name, kind in self.lists.items()
                if kind.latest_every > 1 and self.polls % kind.latest_every == 0 and self.kinds[name].kept_in(state)
            ),
            self.every_poll,
        )

    def _baseline(self, now: dt.datetime | None) -> dt.datetime | None:
        """The site's time, to the second, when the first run began: ``now`` (the site's clock) less the time since;
        None when either is unknown. Never later than that time: ``now`` comes from a ``Date`` header cut to the
        second, and dates are cut the same way, so an edit made since has a date at or after it."""
        if now is None or self.since is None:
            return None
        return (now - dt.timedelta(seconds=time.monotonic() - self.since)).replace(microsecond=0)

    def after_run(
        self,
        written: Iterable[Action],
        state: State | None,
        *,
        trees: Mapping[str, str] | None = None,
        started: float | None = None,
    ) -> None:
        """A run finished having written these objects: their next move is its own (module docstring); ``state``:
        the state as it left it (None: the run got no state: the last one's stays); ``trees``: the locale trees
        the run found (``Plan.trees``); ``started``: when the run began (``time.monotonic``), the first run's is the
        baseline of each list's first poll."""
        if self.since is None and started is not None:
            self.since = started
        if state is None:
            state = self.state
        written = list(written)
        if trees is not None:
            self.tree_watch.learn(trees)
        self.tree_watch.forget(action.key for action in written if action.kind == "page")
        for action in written:
            if action.kind in self.marks:
                self.marks[action.kind].pop(action.key, None)
            if action.kind in self.own:
                self.own[action.kind].add(action.key)
        self.state = state  # what the run recorded (it may manage new objects)

    # -- reading ----------------------------------------------------------------------------------------------------

    async def _read(self, kind: Kind, head: _Head) -> tuple[list[tuple[str, dt.datetime | None]], int]:
        """The newest items of the list, paged on while all of them moved (up to :data:`MAX_PAGES` requests)."""
        window: list[tuple[str, dt.datetime | None]] = []
        after: Any = None
        for requests in range(1, MAX_PAGES + 1):
            items = await self._page(kind, after)
            window += items
            now = self.client.transport.site_now()
            since = self._baseline(now)
            if (
                len(items) < LIMIT
                or (not head.started and since is None)
                or len(head.moved(items, now, since)) < len(items)
            ):
                return window, requests
            after = items[-1][0]
        return window, MAX_PAGES

    async def _page(self, kind: Kind, after: Any) -> list[tuple[str, dt.datetime | None]]:
        latest = self.lists[kind].latest
        assert latest is not None
        return await latest(self.client, LIMIT, after)


def _managed(kind: KindFacts, state: State) -> dict[str, str]:
    """The id the list shows (lowercase) → managed key."""
    return {str(record.id).lower(): key for key, record in kind.kept_in(state).items()}
