"""Objects that exist but cannot be read fail alone (issue 15, item 3): the plan holds them and what needs them.

Observe records every managed object whose read failed with something other than "not found" — a permission
refused, a server error that outlasted the retries, a "not found" for a page the page tree lists, a children list
that cannot be read — in ``Snapshot.unreadable`` (``cmssync.sync.read_failures``). The planner sees such an object
as what little was read (a page's batched view) or not at all, so it may plan an update against a view it must not
write from, or a create of something that exists (a duplicate on every run). :func:`hold_unreadable` takes the
planner's plan and moves out of ``actions`` into ``held`` (reason ``unreadable``, with the server's reason):

* every action on an unreadable object (by key, or for a page moved elsewhere by its id);
* creates below an unreadable page and moves into or out of it (they need its id, or its children list), except
  below the home page, whose id the default site gives;
* transitively, every action that depends on one held back or on an unreadable object: a page whose link needs
  the object's id, the delete of a parent that waits for its children's deletes, …;
* the replace of a file that a held-back page links to: the old file is deleted once the linking pages are
  re-pointed, and a page that is not re-pointed would keep a broken link.

Everything else stays planned and is applied as usual. Every unreadable object is listed even when nothing was
planned for it, so that ``apply`` exits 1 (``Plan.refused``) and ``plan`` does too (``Plan.unreadable``): the run
could not look at the whole site. Nothing is forgotten from the state either: the next run that can read the
object plans it normally.
"""

from __future__ import annotations

from collections.abc import Mapping

from cmssync.content.paths import object_page_path
from cmssync.plan.actions import Action, HeldObject, Plan
from cmssync.plan.builtin_kinds import BUILT_IN_KINDS, PAGE
from cmssync.plan.kinds import KindTable
from cmssync.plan.snapshot import Snapshot
from cmssync.state.records import State


def hold_unreadable(plan: Plan, snapshot: Snapshot, state: State, table: KindTable | None = None) -> Plan:
    """``plan`` without the actions that involve an unreadable object, which are held instead (module docstring)."""
    unreadable = snapshot.unreadable
    if not unreadable:
        return plan
    kinds = table or BUILT_IN_KINDS
    remote = _remote_ids(unreadable, snapshot, state, kinds)
    pages = sorted(key for object_id in unreadable if (key := _key(object_id, "page")) is not None)
    why: dict[str, str] = {}
    for action in plan.actions:
        cause = _direct_cause(action, unreadable, remote, pages)
        if cause is not None:
            why[action.id] = cause
    _close_over_dependencies(plan.actions, unreadable, why)
    actions = tuple(a for a in plan.actions if a.id not in why)
    held = [*plan.held]
    known = {entry.id for entry in held}
    planned = {a.id: a for a in plan.actions}
    for object_id, reason in sorted(unreadable.items()):
        if object_id in known:
            continue
        kind, key = object_id.split(":", 1)
        if kind not in kinds:
            continue
        held.append(_held(object_id, reason, planned.get(object_id)))
        known.add(object_id)
    for action in plan.actions:
        if action.id in why and action.id not in known:
            held.append(_held(action.id, why[action.id], action))
            known.add(action.id)
    return plan.model_copy(update={"actions": actions, "held": tuple(held)})


def _held(object_id: str, message: str, action: Action | None) -> HeldObject:
    kind, key = object_id.split(":", 1)
    return HeldObject(kind=kind, key=key, reason="unreadable", message=message, action=action)


def _key(object_id: str, kind: str) -> str | None:
    prefix = kind + ":"
    return object_id[len(prefix) :] if object_id.startswith(prefix) else None


def _remote_ids(unreadable: Mapping[str, str], snapshot: Snapshot, state: State, kinds: KindTable) -> dict[str, str]:
    """``kind:remote id`` → the unreadable object's id, for actions that name the object by id (a page move)."""
    found: dict[str, str] = {}
    for object_id in unreadable:
        kind, key = object_id.split(":", 1)
        record = kinds[kind].records_in(state).get(key) if kind in kinds else None
        live = snapshot.pages.get(key) if kind == PAGE.name else None  # the page tree may show another id there
        for remote in {str(x.id).lower() for x in (record, live) if x is not None}:
            found[f"{kind}:{remote}"] = object_id
    return found


def _direct_cause(
    action: Action, unreadable: Mapping[str, str], remote: Mapping[str, str], pages: list[str]
) -> str | None:
    """Why ``action`` itself involves an unreadable object (before dependencies), or None."""
    if action.id in unreadable:
        return unreadable[action.id]
    condition = action.precondition.remote_id
    if condition is not None:
        owner = remote.get(f"{action.kind}:{condition.lower()}")
        if owner is not None:
            return f"it is {_name(owner)}, which cannot be read: {unreadable[owner]}"
    if action.kind != "page":
        return None
    touched = [action.key] if action.op == "create" else []
    if action.op == "move":
        touched = [str(c.before) for c in action.changes if c.field == "path"] + [action.key]
    for path in touched:
        for page in pages:  # below the home page needs only its id, which the default site gives
            if page != "/" and path.startswith(page + "/"):
                return f"it is below page {page}, which cannot be read: {unreadable['page:' + page]}"
    return None


def _close_over_dependencies(actions: tuple[Action, ...], unreadable: Mapping[str, str], why: dict[str, str]) -> None:
    """Grow ``why`` by every action that depends on a held one or on an unreadable object, and by the replace of
    a file a held page links to, until nothing changes."""
    changed = True
    while changed:
        changed = False
        for action in actions:
            if action.id in why:
                continue
            for dependency in action.depends_on:
                if dependency in unreadable:
                    why[action.id] = f"it needs {_name(dependency)}, which cannot be read: {unreadable[dependency]}"
                elif dependency in why:
                    why[action.id] = f"it needs {_name(dependency)}, which is held back (see there)"
                else:
                    continue
                changed = True
                break
        for action in actions:
            if action.id in why or action.kind != "file" or action.op != "replace":
                continue
            linking = sorted(
                _name(a.id)
                for a in actions
                if a.id in why and object_page_path(a.kind, a.key) and action.id in a.depends_on
            )
            if linking:
                why[action.id] = (
                    f"{', '.join(linking)} links to it and is held back, and replacing the file deletes the "
                    "old one its link points to"
                )
                changed = True


def _name(object_id: str) -> str:
    kind, key = object_id.split(":", 1)
    return f"{kind} {key}"
