"""Pull through the kinds: each kind's pull hook (``ManagedKind.pull``) takes the site's objects of the kind into
the content — it stages their files (``cmssync.sync.pull_writes.Staged``) and says what to record once they are
written (``Pulled``) — and ``cmssync.sync.pull`` runs the hooks of every kind, then settles and records.

The hooks run in plan order, each in its turn: a hook may start its reads at once (the page tree's flat list is
read while files download) but stages nothing before :meth:`PullRun.turn` returns, which is when every hook before
it has finished (the pages' links need the files' URLs).
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from cmssync.api.client import ConcreteClient
from cmssync.config import Settings
from cmssync.plan.builtin_kinds import BUILT_IN_KINDS
from cmssync.plan.kinds import KindTable
from cmssync.state.records import State
from cmssync.sync.pull_scope import PullScope
from cmssync.sync.pull_writes import Pulled


@dataclass
class PullRun:
    """One pull: where it reads from and writes to, what it takes in, and what it staged so far."""

    client: ConcreteClient
    root: Path
    settings: Settings
    state: State
    result: Pulled
    scope: PullScope
    only: tuple[str, ...] = ()
    """``--pages``: only these page paths (the kinds whose objects are not pages read nothing)."""
    kinds: KindTable = field(default_factory=lambda: BUILT_IN_KINDS)
    """The run's kinds."""
    _before: dict[str, asyncio.Event | None] = field(default_factory=dict)

    def bound_by_others(self, kind: str) -> dict[str, str]:
        """The site objects of ``kind``'s sort that other kinds' records bind (id, lowercase → ``KIND KEY``): not
        taken in as ``kind``'s (one binding per site object)."""
        return self.kinds.bound_by_others(kind, self.state)

    async def turn(self, kind: str) -> None:
        """Wait until the hooks before ``kind``'s have finished."""
        before = self._before.get(kind)
        if before is not None:
            await before.wait()


Puller = Callable[[PullRun], Awaitable[None]]
"""A kind's pull hook: stages the site's objects of the kind (after ``await run.turn(name)``)."""


async def run_pulls(run: PullRun, hooks: Sequence[tuple[str, Puller]]) -> None:
    """Run every kind's hook, each in its turn (see the module docstring); the first failure is raised once every
    hook has stopped."""
    done = {name: asyncio.Event() for name, _hook in hooks}
    names = [name for name, _hook in hooks]
    run._before = {name: done[names[n - 1]] if n else None for n, name in enumerate(names)}

    async def one(name: str, hook: Puller) -> None:
        try:
            await hook(run)
        finally:
            done[name].set()

    tasks = [asyncio.ensure_future(one(name, hook)) for name, hook in hooks]
    try:
        await asyncio.gather(*tasks)
    finally:
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)
