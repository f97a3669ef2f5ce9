"""``drift: adopt``: the site changes a plan lists with action ``adopt`` written into the content directory.

Through the pull writer (``cmssync.sync.pull.pull`` of exactly those pages, ``pull --pages``): each page file is
merged as a pull merges it — the site's values where an editor changed them, the file's own text (references,
comments, a local edit not applied yet) everywhere else — and the pages are recorded as pulled, so the next plan is
empty. Called by ``apply`` after its actions, under its state lock (:func:`cmssync.sync.applying.apply_site`).

For the daemon's proposals (committing what was adopted to the checked-out branch): :attr:`Adopted.files` are the
content files written, relative to the content directory, and :attr:`Adopted.changes` the site changes they hold
(per page: each field from the content's value to the site's, and the live version id; the REST API names no
author or approver of a version, ``tests/conformance/concrete-9.3.1/versions.jsonl``).
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from cmssync.api.client import ConcreteClient
from cmssync.content.paths import object_page_path
from cmssync.plan.actions import Plan, SiteChange
from cmssync.state.records import State
from cmssync.sync.pull import pull
from cmssync.sync.pull_writes import WRITES, Pulled
from cmssync.sync.workspace import Workspace


@dataclass(frozen=True)
class Adopted:
    """What ``drift: adopt`` wrote into the content directory."""

    changes: tuple[SiteChange, ...]
    """The plan's site changes with action ``adopt``."""
    pulled: Pulled
    """The pull of those pages (``pulled.settled`` says what each file became; a kept local edit exits 1)."""

    @property
    def files(self) -> tuple[Path, ...]:
        """The content files written, relative to the content directory."""
        root = self.pulled.root
        return tuple(
            sorted(
                path.relative_to(root)
                for path, (_staged, decision) in self.pulled.settled.decisions.items()
                if decision in WRITES
            )
        )


def adoptable(plan: Plan) -> tuple[SiteChange, ...]:
    """The plan's site changes to write into the content (action ``adopt``)."""
    return tuple(change for change in plan.site_changes if change.action == "adopt")


async def adopt_site_changes(client: ConcreteClient, workspace: Workspace, state: State, plan: Plan) -> Adopted | None:
    """Write the plan's ``adopt`` site changes into the content directory (see the module docstring); None when
    there are none. The caller holds the state lock."""
    changes = adoptable(plan)
    paths = tuple(dict.fromkeys(path for c in changes if (path := object_page_path(c.kind, c.key)) is not None))
    if not paths:
        return None
    pulled = await pull(client, workspace.directory, workspace.settings, state, workspace.store, only=paths)
    return Adopted(changes, pulled)
