"""The group kind: ``groups.yaml`` ↔ the site's groups (planned by ``cmssync.plan.groups``; everything else here).

Observed from the whole group list (only the list shows a group by name; groups are few, so the list is read whole
whenever the content or the state names a group or a user: groups matter to the content's users, memberships).
Created only (the API deletes no group): a create that fails ambiguously looks the group up by name before it is
sent again. Pulled into ``groups.yaml`` as ``users.yaml`` is (``cmssync.sync.pull_users``), its records handed back
to be recorded only when the file is written.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

from cmssync.api.client import ConcreteClient
from cmssync.api.models import Group
from cmssync.content import writer
from cmssync.plan.actions import Action
from cmssync.plan.groups import FACTS
from cmssync.plan.preconditions import created
from cmssync.plan.snapshot import LiveGroup, Snapshot
from cmssync.state.records import KindRecord, State
from cmssync.sync.engine import ApplyContext, create_verified
from cmssync.sync.kinds import ManagedKind, ObserveRun
from cmssync.sync.pull_users import list_clean, merged_entries
from cmssync.sync.pull_writes import Staged
from cmssync.sync.pulling import PullRun


async def observe_groups(client: ConcreteClient) -> dict[str, LiveGroup]:
    """The site's groups, keyed by name."""
    return {group.name or "": LiveGroup(group.id, group.name or "") async for group in client.iter_groups()}


async def _read(run: ObserveRun) -> Mapping[str, Any]:
    content, state, scope = run.content, run.state, run.scope
    named = content.of("group") or state.records_of("group") or content.users
    wanted = bool(named) and (scope is None or bool(scope.of_kind("group")))
    return {"groups": await observe_groups(run.client) if wanted else {}}


def stale_group(action: Action, snapshot: Snapshot, state: State) -> str | None:
    group = snapshot.groups.get(action.key) if action.precondition.absent else None
    return created(f"group id {group.id}" if group is not None else None)


async def apply_group(action: Action, context: ApplyContext) -> str:
    name = action.key
    group = await create_verified(lambda: context.client.create_group(name), lambda: _group_named(context, name))
    context.state.record("group", name, KindRecord(id=group.id))
    context.save()
    return f"created (id {group.id})"


async def _group_named(context: ApplyContext, name: str) -> Group | None:
    async for group in context.client.iter_groups():
        if group.name == name:
            return group
    return None


async def pull_groups(run: PullRun) -> None:
    """The group kind's pull hook: ``groups.yaml`` merged; a group another kind binds is that kind's."""
    if run.only:
        return
    await run.turn("group")
    others = run.bound_by_others("group")
    result, state = run.result, run.state
    groups = {group.name or "": group async for group in run.client.iter_groups() if str(group.id) not in others}
    target = run.root / "groups.yaml"
    site_groups = {name: {"name": name} for name in sorted(groups, key=lambda n: groups[n].id)}
    entries = merged_entries(writer.read_plain(target), site_groups, "name", "group", result, run.scope)
    if entries:
        text = writer.render_yaml(target, entries)
        result.staged.append(Staged("groups", "groups.yaml", target, text=text, clean=_groups_clean(state)))
        result.records["group"] = {
            str(entry["name"]): KindRecord(id=groups[entry["name"]].id)
            for entry in entries
            if entry.get("name") in groups
        }


def _groups_clean(state: State) -> Callable[[Path], bool]:
    def holds(data: list[Any]) -> bool:
        names = {item.get("name") for item in data if isinstance(item, dict)}
        return len(names) == len(data) and names == set(state.records_of("group"))

    return list_clean(holds)


async def _bind(client: ConcreteClient, number: int) -> tuple[KindRecord, str]:
    group = await client.get_group(number)
    return KindRecord(id=number), f"group {group.name}"


KIND = ManagedKind(FACTS, apply_group, stale=stale_group, read=_read, pull=pull_groups, bind=_bind)
