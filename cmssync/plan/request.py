"""What a user asks a plan to cover: one frozen request shared by ``plan``, ``apply``, ``status`` and the daemon."""

from __future__ import annotations

from dataclasses import dataclass

from cmssync.config import ForeignDraftPolicy
from cmssync.plan.scope_model import Scope


@dataclass(frozen=True)
class PlanRequest:
    targets: tuple[str, ...] = ()
    """``KIND:KEY`` objects to limit the plan to (``page:/about``); empty: everything."""
    excludes: tuple[str, ...] = ()
    """``KIND:KEY`` objects to leave out, with what depends on them (``--exclude``)."""
    prune: bool | None = None
    """Delete managed objects that disappeared from the content; None: the ``prune.enabled`` setting."""
    replace_moved: bool = False
    """Apply page moves as create-new-then-delete-old."""
    allow_mass_delete: bool = False
    """Allow deletes beyond the ``prune`` guards."""
    scope: Scope | None = None
    """An incremental run (the daemon's file-change runs): observe and plan only these objects, never delete."""
    force: bool = False
    """Settle every three-way conflict for the content (``apply --force``)."""
    foreign_draft_default: ForeignDraftPolicy = "fail"
    """The ``on_foreign_draft`` policy when neither ``cmssync.yaml`` nor the page file sets one (the daemon: skip)."""
