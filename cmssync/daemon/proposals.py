"""The daemon's commits of editors' work: proposals within seconds (``drift: propose``), adoptions (``drift: adopt``).

Under ``drift: propose`` a run never writes over an editor's approved change to what the content did not change
since the last sync: its plan lists it (``Plan.site_changes``, action ``propose``). With a ``proposals:`` section
(``{branch, remote}``) every finished run hands those pages to the :class:`Proposer`, which pulls exactly them into
a commit on the branch (``cmssync.sync.pull_commit``: a temporary worktree; the checked-out branch, its files, the
index and the state untouched) and pushes it. So an editor's save becomes a pushed commit one feed poll plus one
run later, and:

* cmssync's own writes make no commit (they are not site changes: the run recorded them as the base);
* an unapproved draft makes none (the planner reads the live version; a draft is held, not a site change);
* the changes of one poll make one commit (one drift run, one pull of all its pages);
* a change already proposed (same page, same live version) is not pulled again by every later run, and one whose
  pull finds the branch already holding it makes no commit.

Under ``drift: adopt`` the run itself writes the site's change into the content directory (``cmssync.sync.adopt``);
the :class:`Proposer` then commits exactly those files to the checked-out branch (``cmssync.sync.pull_commit.
commit_adopted``) and pushes that branch to ``proposals.remote`` when set. This needs only the content directory to
be in a git repository.

Each commit is told to the notifications — ``change_proposed`` or ``change_adopted`` with the branch, the commit,
the push and every field's value before and after; a failed commit or push as ``proposal_failed`` with git's
reason. With a ``forge`` and its ``token`` the pull or merge request for the proposal branch is opened, or found
open and updated (:mod:`cmssync.gitrepo.forge`). The jobs run one at a time, beside the runs, never holding one up.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Awaitable, Callable, Mapping
from pathlib import Path
from typing import Any

import structlog

from cmssync.config import ProposalSettings
from cmssync.content.paths import object_page_path, page_object
from cmssync.daemon.events import Event, EventObject, EventType, Proposal
from cmssync.errors import CmsSyncError, printable
from cmssync.gitrepo.forge import ForgeError, open_pull_request
from cmssync.gitrepo.repo import GitError, open_repo
from cmssync.plan.actions import Plan
from cmssync.sync.pull_commit import PullCommit, commit_adopted, pull_commit
from cmssync.sync.pull_writes import Pulled
from cmssync.sync.pulled_changes import PulledChange

log = structlog.get_logger("cmssync.daemon")

Publish = Callable[[list[Event]], None]


def proposed_pages(plan: Plan) -> dict[str, int | None]:
    """The pages and stacks (by page path) whose site changes the plan proposes, with their live version."""
    found: dict[str, int | None] = {}
    for change in plan.site_changes:
        path = object_page_path(change.kind, change.key)
        if change.action == "propose" and path is not None:
            found[path] = change.live_version_id
    return found


def in_git_repository(directory: Path) -> bool:
    try:
        open_repo(directory)
    except GitError:
        return False
    return True


class Proposer:
    """Commits proposed and adopted site changes, one job at a time (see the module docstring)."""

    def __init__(
        self,
        directory: Path,
        settings: ProposalSettings | None,
        *,
        overrides: Mapping[str, Any] | None,
        publish: Publish,
        mode: str = "enforce",
    ) -> None:
        self.directory = directory
        self.settings = settings
        """The ``proposals`` section; None: site changes are not proposed (adoptions are still committed)."""
        self.overrides = overrides
        self.publish = publish
        self.mode = mode
        self.proposed: dict[str, int | None] = {}
        """Page path → the live version last committed for it (not pulled again while it stays so)."""
        self._pending: dict[str, int | None] = {}
        self._run_id = ""
        self._jobs: asyncio.Queue[Callable[[], Awaitable[None]]] = asyncio.Queue()
        self._task: asyncio.Task[None] | None = None

    @property
    def remote(self) -> str | None:
        return self.settings.remote if self.settings is not None else None

    def check(self) -> None:
        """At startup: the content directory must be in a git repository (a ``GitError`` says why not)."""
        open_repo(self.directory)

    def start(self) -> None:
        self._task = asyncio.create_task(self._serve(), name="cmssync-proposals")

    async def close(self) -> None:
        if self._task is not None:
            self._task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._task
            self._task = None

    def propose(self, pages: Mapping[str, int | None], run_id: str) -> None:
        """Commit these pages' site changes (page path → live version) to the proposal branch; returns at once.
        Pages asked for while a job waits join it."""
        if self.settings is None:
            return
        news = {path: version for path, version in pages.items() if self.proposed.get(path, -1) != version}
        if not news:
            return
        waiting = bool(self._pending)
        self._pending.update(news)
        self._run_id = run_id
        if not waiting:
            self._queue(self._propose_pending)

    def adopted(self, pulled: Pulled, run_id: str) -> None:
        """Commit the files a run's ``drift: adopt`` wrote to the checked-out branch; returns at once."""

        async def job() -> None:
            await self._adopt(pulled, run_id)

        self._queue(job)

    def _queue(self, job: Callable[[], Awaitable[None]]) -> None:
        self._jobs.put_nowait(job)

    async def _serve(self) -> None:
        while True:
            job = await self._jobs.get()
            try:
                await job()
            except asyncio.CancelledError:
                raise
            except Exception:  # a bug here must not stop the commits: logged, the next job tries again
                log.exception("proposal crashed")
            finally:
                self._jobs.task_done()

    async def _propose_pending(self) -> None:
        pages, self._pending = self._pending, {}
        settings, run_id = self.settings, self._run_id
        assert settings is not None
        log.info("proposing site changes", branch=settings.branch, pages=sorted(pages))
        try:
            result = await pull_commit(
                self.directory,
                branch=settings.branch,
                push=settings.remote,
                pages=tuple(pages),
                overrides=self.overrides,
            )
        except CmsSyncError as exc:
            self._failed(run_id, Proposal(settings.branch, remote=settings.remote), str(exc))
            return
        self.proposed.update(pages)
        committed = result.committed
        if committed is None:
            log.info("site changes already on the proposal branch", branch=settings.branch, pages=sorted(pages))
            return
        proposal = Proposal(settings.branch, committed.commit, settings.remote, result.pushed)
        if result.push_error is not None:
            self._failed(run_id, proposal, result.push_error, result.changes)
            return
        proposal = await self._pull_request(proposal, result)
        log.info("site changes proposed", branch=settings.branch, commit=committed.commit, pushed=result.pushed)
        self._told("change_proposed", "Proposed", proposal, result.changes, run_id)

    async def _adopt(self, pulled: Pulled, run_id: str) -> None:
        try:
            adoption = await asyncio.to_thread(commit_adopted, self.directory, pulled, push=self.remote)
        except CmsSyncError as exc:
            self._failed(run_id, Proposal("(checked-out branch)", remote=self.remote), str(exc))
            return
        if adoption.commit is None:
            return
        proposal = Proposal(adoption.branch, adoption.commit, self.remote, adoption.pushed)
        if adoption.push_error is not None:
            self._failed(run_id, proposal, adoption.push_error, adoption.changes)
            return
        log.info("site changes adopted", branch=adoption.branch, commit=adoption.commit, pushed=adoption.pushed)
        self._told("change_adopted", "Adopted", proposal, adoption.changes, run_id)

    async def _pull_request(self, proposal: Proposal, result: PullCommit) -> Proposal:
        """Open or update the pull request for the branch when a forge with a token is set; its address."""
        forge = self.settings.forge if self.settings is not None else None
        if forge is None or forge.token is None or proposal.pushed is None:
            return proposal
        title = f"Site changes from {result.pulled.site_url or 'the site'}"
        try:
            url = await open_pull_request(forge, proposal.branch, title, _body(result.changes))
        except ForgeError as exc:
            log.warning("pull request not opened", branch=proposal.branch, error=str(exc))
            return proposal
        return Proposal(proposal.branch, proposal.commit, proposal.remote, proposal.pushed, url)

    def _told(self, kind: EventType, verb: str, proposal: Proposal, changes: list[PulledChange], run_id: str) -> None:
        objects = _objects(changes)
        count = f"{len(objects)} site change{'s' if len(objects) != 1 else ''}"
        commit = (proposal.commit or "")[:12]
        ids = ", ".join(o.id for o in objects)
        summary = f"{verb} {count} on branch {proposal.branch} (commit {commit}): {ids}"
        self.publish([self._event(kind, summary, run_id, objects, proposal)])

    def _failed(self, run_id: str, proposal: Proposal, reason: str, changes: list[PulledChange] | None = None) -> None:
        reason = printable(reason)[:500]
        log.error("proposal failed", branch=proposal.branch, reason=reason)
        summary = f"Commit or push on branch {proposal.branch} failed: {reason}"
        self.publish([self._event("proposal_failed", summary, run_id, _objects(changes or []), proposal, reason)])

    def _event(
        self,
        kind: EventType,
        summary: str,
        run_id: str,
        objects: tuple[EventObject, ...],
        proposal: Proposal,
        reason: str | None = None,
    ) -> Event:
        return Event(
            kind, summary, run_id, "proposal", self.mode, objects, len(objects), reason=reason, proposal=proposal
        )


def _objects(changes: list[PulledChange]) -> tuple[EventObject, ...]:
    objects = []
    for change in changes:
        kind, key = page_object(change.key) if change.kind in ("page", "stack") else (change.kind, change.key)
        values = change.fields
        version = f"site version {change.version}" if change.version is not None else None
        objects.append(EventObject(kind, key, "propose", tuple(v.field for v in values), version, values=values))
    return tuple(objects)


def _body(changes: list[PulledChange]) -> str:
    lines = ["Editors' approved changes on the site, pulled by `cmssync daemon` (drift: propose).", ""]
    lines += [f"- {change.object} ({change.file}): {', '.join(f.field for f in change.fields)}" for change in changes]
    lines += [
        "",
        "Merge it to take them into the content (the next plan is then empty). Closed, they stay on the site and",
        "every plan lists them as site changes, until a `drift: revert` rule writes the content's values back.",
    ]
    return "\n".join(lines)
