"""The apply engine as a library call: plan (or load a plan file), confirm, execute; prints nothing.

:func:`apply_site` holds the state lock for the whole run and returns an :class:`ApplyReport`; the caller learns
about the run through two callbacks: ``confirm(plan)`` before anything is written (None: no confirmation needed)
and ``on_outcome(outcome)`` as each action finishes. The CLI renders them on the terminal, the daemon in its log.
"""

from __future__ import annotations

import asyncio
import dataclasses
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from cmssync.config.model import PasswordSettings
from cmssync.content.passwords import problems_of
from cmssync.content.paths import object_page_path
from cmssync.errors import EXIT_ERROR, EXIT_OK, ContentError, StateError
from cmssync.plan.actions import Plan
from cmssync.plan.request import PlanRequest
from cmssync.state.backends import holding_lock
from cmssync.state.records import State
from cmssync.sync.adopt import Adopted, adopt_site_changes
from cmssync.sync.apply_assets import delete_retired_files
from cmssync.sync.deadline import RunDeadline
from cmssync.sync.engine import STOPPED, ApplyContext, Outcome, Status, execute
from cmssync.sync.plan_files import load_plan_file
from cmssync.sync.planning import plan_site
from cmssync.sync.uploads import ContentFiles, Uploads
from cmssync.sync.workspace import Workspace


@dataclass(frozen=True)
class ApplyRequest:
    plan: PlanRequest = field(default_factory=PlanRequest)
    plan_file: Path | None = None
    """Apply exactly this saved plan (its own options; ``plan`` is then unused), refused if stale."""
    stop: asyncio.Event | None = None
    """Set it to stop: actions in flight finish, the others are skipped (``cmssync apply`` on SIGTERM)."""


@dataclass(frozen=True)
class ApplyReport:
    plan: Plan
    outcomes: list[Outcome]
    problems: list[str]
    """Problems after the actions (a replaced file that could not be deleted), one line each."""
    requests: int
    declined: bool = False
    """The user was asked and said no: nothing was written."""
    state: State | None = None
    """The state as the run left it (what it manages now: the daemon's drift feed reads it)."""
    adopted: Adopted | None = None
    """Site changes written into the content directory (``drift: adopt``; ``cmssync.sync.adopt``)."""

    @property
    def failed(self) -> bool:
        return bool(self.problems) or any(o.status == "failed" for o in self.outcomes)

    @property
    def exit_code(self) -> int:
        # Objects the plan refused (unsettled conflicts, foreign drafts under ``fail``) were not applied: exit 1.
        return EXIT_ERROR if self.failed or self.declined or self.plan.refused else EXIT_OK

    def counts(self) -> dict[Status, int]:
        found = Counter(o.status for o in self.outcomes)
        return {status: found[status] for status in ("ok", "failed", "skipped")}


async def apply_site(
    workspace: Workspace,
    request: ApplyRequest,
    *,
    confirm: Callable[[Plan], bool] | None = None,
    on_outcome: Callable[[Outcome], None] = lambda outcome: None,
) -> ApplyReport:
    """Make the site match the content (see the module docstring).

    A run whose actions finished but whose state could not be saved at the end (the state server gone) still
    returns its report, with the state's error as a problem: what was done, and where the records were kept.
    """
    report: ApplyReport | None = None
    try:
        async with (
            holding_lock(workspace.store, "cmssync apply"),  # waits up to lock_timeout (--lock-timeout)
            RunDeadline(workspace.settings.run_timeout, request.stop) as deadline,
        ):
            report = await _apply_locked(workspace, request, deadline, confirm, on_outcome)
    except StateError as exc:
        if report is None:
            raise
        return dataclasses.replace(report, problems=[*report.problems, f"the state was not saved at the end: {exc}"])
    return report


def record_rebased(plan: Plan, state: State, workspace: Workspace) -> None:
    """Record the base of the objects whose content caught up with the site (``Plan.rebase``): nothing is written
    to the site, so it is done before the actions (once the run is confirmed) and saved at once."""
    if not plan.rebase:
        return
    for entry in plan.rebase:
        path = object_page_path(entry.kind, entry.key)
        if entry.kind == "user" and (user := state.users.get(entry.key)) is not None:
            state.record_user(entry.key, user.evolve(digest=entry.digest))
        elif entry.kind == "file" and (file := state.files.get(entry.key)) is not None:
            state.record_file(entry.key, file.evolve(digest=entry.digest))
        elif path is not None and (record := state.pages.get(path)) is not None:
            live = entry.live_version_id if entry.live_version_id is not None else record.live_version_id
            state.record_page(path, record.evolve(digest=entry.digest, base=entry.base, live_version_id=live))
    workspace.store.save(state)


def check_passwords(plan: Plan, rules: PasswordSettings) -> None:
    """Before the first write: every password the plan sets is there and as long as the site accepts, or
    ``ContentError`` naming each one (instead of the site refusing it after the changes ahead of it)."""
    setting = [
        (a.key, a.user.password, a.user.source)
        for a in plan.actions
        if a.kind == "user" and a.user is not None and a.user.password is not None
        if any(c.field == "password" for c in a.changes)
    ]
    problems = problems_of(setting, rules)
    if problems:
        raise ContentError(problems)


async def _apply_locked(
    workspace: Workspace,
    request: ApplyRequest,
    deadline: RunDeadline,
    confirm: Callable[[Plan], bool] | None,
    on_outcome: Callable[[Outcome], None],
) -> ApplyReport:
    """The run inside the lock."""
    state = workspace.load_state()
    async with workspace.client() as client:
        client.transport.deadline = deadline.monotonic
        async with deadline.planning():
            uploads: Uploads = ContentFiles(workspace.content)
            if request.plan_file is not None:
                plan, snapshot, uploads = await load_plan_file(request.plan_file, workspace, client=client, state=state)
            else:
                plan, snapshot = await plan_site(workspace, request.plan, client=client, state=state)
        context = ApplyContext(
            client=client,
            uploads=uploads,
            snapshot=snapshot,
            state=state,
            store=workspace.store,
            publish=plan.publish,
            versions_keep=workspace.settings.versions.keep,
        )
        if not plan.writes:
            # Only the replaced files an interrupted run left (the plan warns of them) are finished off.
            record_rebased(plan, state, workspace)
            problems = await delete_retired_files(context, [])
            adopted = await adopt_site_changes(client, workspace, state, plan)
            return ApplyReport(
                plan, [], problems + _adopt_problems(adopted), client.stats.total, adopted=adopted, state=state
            )
        check_passwords(plan, workspace.settings.passwords)
        if confirm is not None and not confirm(plan):
            return ApplyReport(plan, [], [], client.stats.total, declined=True, state=state)
        record_rebased(plan, state, workspace)
        outcomes = await execute(plan, context, workspace.kinds.handlers(), on_outcome=on_outcome, stop=deadline.halt)
        problems = await delete_retired_files(context, outcomes)
        late = deadline.problem(sum(1 for outcome in outcomes if outcome.message == STOPPED))
        problems += [late] if late else []
        adopted = await adopt_site_changes(client, workspace, state, plan) if not late else None
        problems += _adopt_problems(adopted)
        return ApplyReport(plan, outcomes, problems, client.stats.total, adopted=adopted, state=state)


def _adopt_problems(adopted: Adopted | None) -> list[str]:
    """A file ``drift: adopt`` could not write because it holds a local edit pull would lose."""
    if adopted is None:
        return []
    root = adopted.pulled.root
    return [
        f"{staged.target.relative_to(root)}: the site's change was not written into it (drift: adopt): the file "
        "holds a local edit pull would overwrite; run cmssync pull --pages to review it"
        for staged in adopted.pulled.settled.kept()
    ]
