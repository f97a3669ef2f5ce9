"""The managed kinds: for each, how apply executes its actions, and for a kind added later how it is observed and
planned. The one registry of kinds (their names and order are ``cmssync.plan.actions.KIND_ORDER``).

The built-in kinds (groups, files, pages, users) are planned by ``cmssync.plan.planner`` and observed by
``cmssync.sync.observe``; a kind added with :func:`register` brings its own :attr:`ManagedKind.observe` (the live
objects, read through the client) and :attr:`ManagedKind.plan` (pure: the content directory, what was observed and
the state → actions), runs in full plans (``--target`` and the daemon's file-change scopes plan the built-in kinds
only), and is applied by its :attr:`ManagedKind.apply`. A new kind is one module that calls :func:`register`; see
``docs/architecture.md``.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from cmssync.api.client import ConcreteClient
from cmssync.plan.actions import KIND_ORDER, Action
from cmssync.state.records import State
from cmssync.sync.apply_assets import apply_file, apply_group, apply_user
from cmssync.sync.apply_pages import apply_page
from cmssync.sync.engine import Handler

Observer = Callable[[ConcreteClient, Path, State], Awaitable[Any]]
"""Reads what the site holds of the kind: (client, content directory, state) → the kind's observed objects."""
Planner = Callable[[Path, Any, State], list[Action]]
"""Pure: (content directory, what the observer read, state) → the kind's actions."""


@dataclass(frozen=True)
class ManagedKind:
    name: str
    apply: Handler
    observe: Observer | None = None
    plan: Planner | None = None


KINDS: dict[str, ManagedKind] = {
    kind.name: kind
    for kind in (
        ManagedKind("group", apply_group),
        ManagedKind("file", apply_file),
        ManagedKind("page", apply_page),
        ManagedKind("user", apply_user),
    )
}


def register(kind: ManagedKind) -> None:
    """Manage one more kind (its actions come after the built-in kinds')."""
    if kind.observe is None or kind.plan is None:
        raise ValueError(f"kind {kind.name!r}: a registered kind brings its observer and its planner")
    KINDS[kind.name] = kind
    if kind.name not in KIND_ORDER:
        KIND_ORDER.append(kind.name)


def unregister(name: str) -> None:
    """Forget a registered kind (the built-in kinds stay)."""
    if KINDS.get(name) is not None and KINDS[name].plan is not None:
        del KINDS[name]
        KIND_ORDER.remove(name)


def handlers() -> dict[str, Handler]:
    return {name: kind.apply for name, kind in KINDS.items()}


async def plan_added_kinds(directory: Path, client: ConcreteClient, state: State) -> list[Action]:
    """The actions of the registered kinds (none for the built-in ones, which the planner plans)."""
    actions: list[Action] = []
    for kind in KINDS.values():
        if kind.observe is not None and kind.plan is not None:
            observed = await kind.observe(client, directory, state)
            actions += kind.plan(directory, observed, state)
    return actions
