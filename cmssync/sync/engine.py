"""Execute a plan: dependency order, bounded concurrency, state written after every completed remote change.

Scheduling: every action waits for the actions it depends on; independent actions (different pages, files, users)
run concurrently, at most ``concurrency`` (the client's) *actions* at a time, not only requests: a page is built by
several requests (create, fields, blocks, approval), and with every action started at once an interrupted run left
dozens of pages half built; now it leaves at most ``concurrency``. The changes of one page run in order inside its
action. Deletes run last, after every create and update has finished, so references are re-pointed before a file
disappears and children go before their parents. An action whose dependency failed is skipped, and says why.

Stopping: when ``stop`` is set (``cmssync apply`` sets it on SIGTERM), actions in flight finish, each saving the
state as usual, and every action not yet started is skipped with the reason; the caller reports the stop.

Failure handling: an action that fails is reported with the object and the server's reason; the others go on; the
state records exactly what succeeded (``ApplyContext.save`` runs after each remote change that the state must
remember). Creates are never blindly repeated: after an ambiguous failure the handler reads the site to learn
whether the object exists (see ``apply_pages`` and ``apply_assets``). Every delete is read back.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass, field, replace
from typing import Literal, TypeVar

from cmssync.api.client import ConcreteClient
from cmssync.api.errors import CreateUnconfirmed, DeadlineReached, OutcomeUnknown
from cmssync.errors import CmsSyncError, ContentError, printable
from cmssync.plan.actions import Action, Plan
from cmssync.plan.desired import Resolver
from cmssync.plan.snapshot import Snapshot
from cmssync.state.backends import StateBackend
from cmssync.state.records import State
from cmssync.sync.file_numbers import FileNumbers
from cmssync.sync.page_type_numbers import PageTypeNumbers
from cmssync.sync.uploads import Uploads

Status = Literal["ok", "failed", "skipped"]


@dataclass(frozen=True)
class Outcome:
    action: Action
    status: Status
    message: str = ""

    def line(self) -> str:
        text = f"{self.status:7} {self.action.kind} {self.action.key} ({self.action.op})"
        return f"{text}: {self.message}" if self.message else text


@dataclass
class ApplyContext:
    """What every action handler needs: the client, what was observed, the state, and the bytes of the uploads
    (the plan carries everything else it writes)."""

    client: ConcreteClient
    uploads: Uploads
    snapshot: Snapshot
    state: State
    store: StateBackend
    publish: Literal["approve", "draft"]
    versions_keep: int | None
    page_ids: dict[str, int] = field(default_factory=dict)
    file_urls: dict[str, str] = field(default_factory=dict)
    file_ids: dict[str, str] = field(default_factory=dict)
    file_numbers: FileNumbers = field(default_factory=FileNumbers)
    """Numeric file ids learned from the site in this run (``cmssync.sync.file_numbers``)."""
    page_type_numbers: PageTypeNumbers = field(default_factory=PageTypeNumbers)
    """Page-type ids learned from the site in this run (``cmssync.sync.page_type_numbers``)."""

    def __post_init__(self) -> None:
        self.page_ids.update({path: page.id for path, page in self.snapshot.pages.items()})
        for path, record in self.state.files.items():
            live = self.snapshot.files.get(str(record.id).lower())
            if live is not None:
                self.file_urls[path] = live.url
                self.file_ids[path] = live.id
            elif not self.snapshot.complete:  # an incremental run did not read this file: trust the state
                self.file_urls[path] = record.url
                self.file_ids[path] = str(record.id)

    @property
    def base_url(self) -> str:
        return self.client.base_url

    def resolver(self, *, strict: bool = True) -> Resolver:
        """References resolved to what exists on the site right now (strict: an unknown target is an error)."""
        return Resolver(file_urls=self.file_urls, file_ids=self.file_ids, page_ids=self.page_ids, strict=strict)

    def save(self) -> None:
        self.store.save(self.state)


class Skipped(Exception):
    """Raised by a handler that chose not to act (e.g. a page move without ``--replace-moved``): the reason."""


Handler = Callable[[Action, ApplyContext], Awaitable[str]]
"""Performs one action; returns a message for the outcome, raises :class:`Skipped` or an error."""
T = TypeVar("T")
CREATE_ATTEMPTS = 3


async def create_verified(
    create: Callable[[], Awaitable[T]], find: Callable[[], Awaitable[T | None]], *, attempts: int = CREATE_ATTEMPTS
) -> T:
    """Create an object; after an ambiguous failure, read the site, and send the create again only if it certainly
    is not there.

    The client never repeats a create itself (``OutcomeUnknown``: the request may or may not have been processed);
    ``find`` looks the object up by its natural key. After a 5xx the server has finished with the request, so one
    lookup decides, and a create that certainly did not happen is sent again. After a timeout or a dropped
    connection the server may still commit it: the lookup is repeated after each of the error's
    ``late_commit_polls`` waits, and an object that never appears is *not* sent again in this run
    (``CreateUnconfirmed``: the action fails, saying so) — the next run finds it or creates it. Past the run's
    deadline (``DeadlineReached``) a create that is not found is not sent again either.
    """
    for attempt in range(1, attempts + 1):
        try:
            return await create()
        except OutcomeUnknown as exc:
            found = await find()
            for wait in exc.late_commit_polls:
                if found is not None:
                    break
                await asyncio.sleep(wait)
                found = await find()
            if found is not None:
                return found
            if isinstance(exc, DeadlineReached):
                raise  # past run_timeout: not sent again; the next run looks it up
            if exc.late_commit_polls:
                raise CreateUnconfirmed(
                    f"{exc.reason}; it has not appeared after {len(exc.late_commit_polls) + 1} lookups over "
                    f"{sum(exc.late_commit_polls):g} s, and it is not sent again in this run because the site may "
                    "still commit it: the next run finds it or creates it",
                    method=exc.method,
                    path=exc.path,
                    status=exc.status,
                ) from exc
            if attempt == attempts:
                raise
    raise AssertionError("unreachable")  # pragma: no cover


STOPPED = "not started: the apply was stopped"


async def execute(
    plan: Plan,
    context: ApplyContext,
    handlers: Mapping[str, Handler],
    *,
    on_outcome: Callable[[Outcome], None] = lambda outcome: None,
    stop: asyncio.Event | None = None,
) -> list[Outcome]:
    """Run every action of ``plan`` (see the module docstring); returns the outcomes in plan order."""
    outcomes: dict[str, Outcome] = {}
    finished = {action.id: asyncio.Event() for action in plan.actions}
    slots = asyncio.Semaphore(max(1, context.client.transport.concurrency))

    async def run(action: Action) -> None:
        try:
            blocked = await _blocked_by(action, finished, outcomes)
            if blocked is not None:
                outcome = Outcome(action, "skipped", f"{blocked} did not succeed")
            else:
                async with slots:
                    if stop is not None and stop.is_set():
                        outcome = Outcome(action, "skipped", STOPPED)
                    else:
                        outcome = await _attempt(action, context, handlers)
        finally:
            finished[action.id].set()
        outcomes[action.id] = outcome
        on_outcome(outcome)

    writes = [a for a in plan.actions if a.op != "delete"]
    deletes = [a for a in plan.actions if a.op == "delete"]
    await asyncio.gather(*(run(action) for action in writes))
    await asyncio.gather(*(run(action) for action in deletes))
    return [outcomes[action.id] for action in plan.actions]


async def _blocked_by(action: Action, finished: dict[str, asyncio.Event], outcomes: dict[str, Outcome]) -> str | None:
    for dependency in action.depends_on:
        if dependency not in finished:
            continue  # not part of this plan: already true on the site
        await finished[dependency].wait()
        if outcomes[dependency].status != "ok":
            return dependency
    return None


async def _attempt(action: Action, context: ApplyContext, handlers: Mapping[str, Handler]) -> Outcome:
    outcome = await _handle(action, context, handlers)
    # Messages quote servers and file names: no secret and no control character reaches a report or a terminal.
    return replace(outcome, message=printable(outcome.message))


async def _handle(action: Action, context: ApplyContext, handlers: Mapping[str, Handler]) -> Outcome:
    try:
        message = await handlers[action.kind](action, context)
    except ContentError as exc:  # e.g. a password variable that is not set: one line per problem, no summary
        return Outcome(action, "failed", "; ".join(str(problem) for problem in exc.problems))
    except Skipped as exc:
        return Outcome(action, "skipped", str(exc))
    except CmsSyncError as exc:
        return Outcome(action, "failed", str(exc))
    except LookupError as exc:  # a reference whose target does not exist on the site
        return Outcome(action, "failed", str(exc).strip("'\""))
    return Outcome(action, "ok", message)
