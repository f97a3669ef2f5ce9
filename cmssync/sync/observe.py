"""Read the live objects that the content and the state describe, and nothing else. Read-only.

Pages: ``cmssync.sync.observe_pages`` — the page tree a level at a time, one request per parent of managed pages
(``GET /pages/{id}/children`` with areas and attributes), in the live version; the pages a plan will write are read
again on their own by :func:`read_pages_alone` (``cmssync.sync.planning.plan_site``'s second phase). So a no-op plan
of a site whose pages sit under P parents costs P + 1 page requests, plus the lists below and a constant (token,
default site).

Files (``cmssync.sync.observe_files``), users (``observe_users``) and groups (``cmssync.sync.kinds.group``) are listed
(``limit=100``) only when the content or the state names objects of that kind, and only for the kinds in scope in an
incremental run. Their lists have the tied-dates weakness of every list (concrete-api.md §13), so objects the state
knows but a list walk missed are read by id (none when the dates are distinct). A group that fits a list page is
read whole by the walk (a cursor before the group, ``cmssync.api.pagination.next_cursor``), users a walk skipped a
list page at a time (``UsersApi.users_below``); only a group longer than a page costs one request per object,
counted in ``Snapshot.tie_reads``. Such a read that answers "not found" means the object is gone; any other answer
about that object (a permission refused, a persistent server error) makes it *unreadable* (``Snapshot.unreadable``,
with the server's reason; ``cmssync.sync.read_failures``): the plan holds it and never creates it again. Site files
that a content file unknown to the state could adopt (same name, folder and size) are downloaded and hashed, because
only the same bytes prove it is ours (``cmssync.sync.file_adoption``).

Concurrency is bounded by the client; here every independent read is started at once. The by-id reads of what a
list walk skipped are *deferred* (``cmssync.api.limiter.deferred``): they wait behind the requests of the other
walks and of the page tree, each of which the next one waits on, so one kind's hundreds of reads do not hold up the
other kinds' walks.
"""

from __future__ import annotations

import asyncio
from dataclasses import replace
from typing import Any

from cmssync.api.client import ConcreteClient
from cmssync.content.site import SiteContent
from cmssync.plan.scope import with_parents
from cmssync.plan.scope_model import Scope
from cmssync.plan.snapshot import Snapshot
from cmssync.secrets import url_without_credentials
from cmssync.state.records import State
from cmssync.sync.kinds import ObserveRun, Registry, discover
from cmssync.sync.observe_known import unreliable_list_warning
from cmssync.sync.observe_pages import ObserveProgress, PageProgress, observe_progress, read_pages_alone
from cmssync.sync.site_trees import read_trees
from cmssync.sync.stack_displays import name_observed_stacks

__all__ = [
    "ObserveProgress",
    "observe",
    "observe_progress",
    "read_pages_alone",
    "unreliable_list_warning",
]


async def observe(
    client: ConcreteClient,
    content: SiteContent,
    state: State,
    *,
    scope: Scope | None = None,
    progress: ObserveProgress | None = None,
    kinds: Registry | None = None,
) -> Snapshot:
    """A snapshot of every live object the content or the state names (see the module docstring): each kind's
    reader (``ManagedKind.read``) at once, into the snapshot's fields.

    With a ``scope`` (incremental and ``--target`` runs), only the objects in scope are read, and the snapshot is
    incomplete (unless the scope holds every delete candidate a targeted delete needs: ``Scope.deletes``).
    """
    pages_read = PageProgress(progress or observe_progress.get())
    site, trees = await read_trees(client)
    home_id = site.home_page_id or 1
    base_url = client.base_url
    if scope is not None:
        content = _observed_content(scope.restrict(content), scope)
        state = _restricted_state(state, scope)
    run = ObserveRun(client, content, state, scope, trees.roots(home_id), base_url, pages_read)
    readers = [kind.read for kind in kinds or discover() if kind.read is not None]
    # every read finishes before a failure is raised (see all_settled)
    read = await asyncio.gather(*(reader(run) for reader in readers), return_exceptions=True)
    observed: dict[str, Any] = {}
    for result in read:
        if isinstance(result, BaseException):
            raise result
        observed.update(result)
    snapshot = Snapshot(
        site_url=url_without_credentials(base_url),  # shown in plans and reports, never with a password
        home_page_id=home_id,
        **observed,
        complete=scope is None or scope.deletes,
        warnings=tuple(run.warnings),
        unreadable=run.unreadable,
        kinds=run.kinds,
        tie_reads={kind: count for kind, count in run.ties.items() if count},
        trees=trees,
    )
    return await name_observed_stacks(client, snapshot)


def _observed_content(content: SiteContent, scope: Scope) -> SiteContent:
    """The scoped content as the page reads see it: a scope's ``lookups`` (pages outside the content that a
    ``--target`` run reads) are looked up like ``existing_pages``, by their state id."""
    if not scope.lookups:
        return content
    existing = [*content.settings.existing_pages, *sorted(scope.lookups)]
    return replace(content, settings=content.settings.model_copy(update={"existing_pages": existing}))


def _restricted_state(state: State, scope: Scope) -> State:
    """The part of the state that a scoped run looks at (pages in scope and their parents, its lookups, scoped
    files and users, the other kinds' records its patterns name)."""
    pages = with_parents(scope) | scope.lookups
    return State(
        site=state.site,
        pages={p: r for p, r in state.pages.items() if p in pages},
        files={p: r for p, r in state.files.items() if p in scope.files},
        users={name: r for name, r in state.users.items() if scope.all_users or name in scope.users},
        kinds={
            kind: kept
            for kind, records in state.kinds.items()
            if (kept := {key: r for key, r in records.items() if scope.names(f"{kind}:{key}")})
        },
    )
