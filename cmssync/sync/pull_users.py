"""``cmssync pull`` of users (the user kind's pull hook): ``users.yaml`` staged (``cmssync.sync.pull_writes``),
merged into the file there is. Users (never the super admin, never a password) go to it; their state records are
handed back, to be recorded only when the file is written. :func:`merged_entries` and :func:`list_clean` serve every
list file of the kinds' (the group kind's too).
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from cmssync.api.client import ConcreteClient
from cmssync.content import writer
from cmssync.content.models import UserSpec
from cmssync.plan.asset_forms import user_digest
from cmssync.state.records import State, UserRecord
from cmssync.sync.pull_scope import PullScope
from cmssync.sync.pull_writes import Pulled, Staged
from cmssync.sync.pulling import PullRun


async def pull_users(run: PullRun) -> None:
    """The user kind's pull hook: ``users.yaml`` merged: the file's entries in its order, each with the site's email
    and language where they differ (its password reference and other keys kept); the site's others appended when
    taken in, listed otherwise; entries the site lacks stay (apply creates them)."""
    if run.only:
        return
    await run.turn("user")
    await _pull_users(run.client, run.root, run.state, run.result, run.scope, run.bound_by_others("user"))


async def _site_users(
    client: ConcreteClient, result: Pulled, others: Mapping[str, str]
) -> tuple[dict[str, dict[str, Any]], dict[str, int]]:
    """The site's users as ``users.yaml`` entries, and their ids, by username (never the super admin, nor a user
    another kind binds: ``others``; a user the content could not hold is said in ``skipped``)."""
    site_users: dict[str, dict[str, Any]] = {}
    ids: dict[str, int] = {}
    for user in await client.all_users():
        if user.id == 1 or not user.username or str(user.id) in others:
            continue  # the super admin is never managed; another kind's user is that kind's
        data = {"username": user.username, "email": user.email or ""}
        if user.language:
            data["language"] = user.language
        try:
            UserSpec.model_validate(data)
        except ValidationError as exc:
            result.skipped.append(f"user {user.username}: {exc.errors()[0]['msg']}")
            continue
        site_users[user.username], ids[user.username] = data, user.id
    return site_users, ids


async def _pull_users(
    client: ConcreteClient, root: Path, state: State, result: Pulled, scope: PullScope, others: Mapping[str, str]
) -> None:
    site_users, ids = await _site_users(client, result, others)
    target = root / "users.yaml"
    # a user the site still holds as last applied or pulled: a difference in users.yaml is a local edit, kept
    untouched = {
        name
        for name, data in site_users.items()
        if (record := state.users.get(name)) is not None
        and record.id == ids[name]
        and record.digest == user_digest(UserSpec.model_validate(data))
    }
    entries = merged_entries(writer.read_plain(target), site_users, "username", "user", result, scope, untouched)
    for entry in entries:
        name = entry.get("username")
        if name in ids:
            with contextlib.suppress(ValidationError):
                spec = UserSpec.model_validate(entry)
                if user_digest(spec) != user_digest(UserSpec.model_validate(site_users[name])):
                    result.local_users.append(name)  # not applied yet: its record stays as it is
                    continue
                result.user_records[name] = UserRecord(id=ids[name], digest=user_digest(spec))
    if entries:
        text = writer.render_yaml(target, entries)
        result.staged.append(Staged("users", "users.yaml", target, text=text, clean=_users_clean(state)))


def merged_entries(
    existing: Any,
    site: dict[str, dict[str, Any]],
    key: str,
    kind: str,
    result: Pulled,
    scope: PullScope,
    untouched: set[str] | frozenset[str] = frozenset(),
) -> list[dict[str, Any]]:
    """The file's entries (by ``key``) with the site's differing values (not for the ``untouched`` ones, which the
    site still holds as last applied: the file's differences are local edits), then the site's others if taken
    in."""
    local = [item for item in existing if isinstance(item, dict)] if isinstance(existing, list) else []
    names = {item.get(key) for item in local}
    merged = []
    for item in local:
        remote = site.get(item.get(key))  # type: ignore[arg-type]
        if remote is None or item.get(key) in untouched:
            merged.append(item)
            continue
        entry = dict(item)
        for field_name, value in remote.items():
            if (field_name in entry or scope.take_all) and entry.get(field_name) != value:
                entry[field_name] = value
        if "language" in entry and "language" not in remote:
            del entry["language"]
        merged.append(entry)
    others = [name for name in site if name not in names]
    if scope.takes(kind):
        merged += [site[name] for name in (sorted(others) if kind == "user" else others)]
    else:
        result.not_taken.setdefault(kind, []).extend(sorted(others))
    return merged


def list_clean(holds: Callable[[list[Any]], bool]) -> Callable[[Path], bool]:
    """A ``clean`` check of a list file (``users.yaml``; a kind's list file): it is a list and ``holds``."""

    def clean(target: Path) -> bool:
        data = writer.read_plain(target)
        return isinstance(data, list) and holds(data)

    return clean


def _users_clean(state: State) -> Callable[[Path], bool]:
    """``users.yaml`` holds exactly the users the state records, each as last applied or pulled."""

    def holds(data: list[Any]) -> bool:
        try:
            specs = [UserSpec.model_validate(item) for item in data]
        except ValidationError:
            return False
        records = state.users
        return {s.username for s in specs} == set(records) and all(
            records[s.username].digest == user_digest(s) for s in specs
        )

    return list_clean(holds)
