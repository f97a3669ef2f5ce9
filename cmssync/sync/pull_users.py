"""``cmssync pull`` of users (the user kind's pull hook): ``users.yaml`` and each file of ``users/`` staged
(``cmssync.sync.pull_writes``), each merged into the file there is (a user stays in the file that holds it; the
site's others go to ``users.yaml``). Users are written without a password, never the super admin; their state
records are handed back, to be recorded only when the file is written. :func:`merged_entries` and
:func:`list_clean` serve every list file of the kinds' (the group kind's too).
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Collection, Mapping
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
    _stage_users(root, state, result, scope, site_users, ids)


def _stage_users(
    root: Path,
    state: State,
    result: Pulled,
    scope: PullScope,
    site_users: dict[str, dict[str, Any]],
    ids: dict[str, int],
) -> None:
    """Each users file merged and staged: ``users.yaml`` (with the site's others, when taken in), then ``users/``."""
    # a user the site still holds as last applied or pulled: a difference in its file is a local edit, kept
    untouched = {
        name
        for name, data in site_users.items()
        if (record := state.users.get(name)) is not None
        and record.id == ids[name]
        and record.digest == user_digest(UserSpec.model_validate(data))
    }
    held = {path: writer.read_plain(path) for path in [root / "users.yaml", *sorted(root.glob("users/*.yaml"))]}
    names = {path: _names(data, "username") for path, data in held.items()}
    for target, existing in held.items():
        elsewhere = set().union(*(listed for path, listed in names.items() if path != target))
        list_file = target.parent == root  # the site's others go there, never into a file of users/
        scoped = elsewhere if list_file else None
        entries = merged_entries(existing, site_users, "username", "user", result, scope, untouched, elsewhere=scoped)
        _record_users(entries, site_users, ids, result)
        if entries:
            text = writer.render_yaml(target, entries)
            clean = _users_clean(state, set(state.users) - elsewhere if list_file else None)
            result.staged.append(Staged("users", target.relative_to(root).as_posix(), target, text=text, clean=clean))


def _record_users(
    entries: list[dict[str, Any]], site_users: dict[str, dict[str, Any]], ids: dict[str, int], result: Pulled
) -> None:
    """The records of the entries the site holds as written; the others are local edits, their records as they were."""
    for entry in entries:
        name = entry.get("username")
        if name in ids:
            with contextlib.suppress(ValidationError):
                spec = UserSpec.model_validate(entry)
                if user_digest(spec) != user_digest(UserSpec.model_validate(site_users[name])):
                    result.local_users.append(name)  # not applied yet: its record stays as it is
                    continue
                result.user_records[name] = UserRecord(id=ids[name], digest=user_digest(spec))


def _names(data: Any, key: str) -> set[str]:
    """The names (``key``) a list file's data holds."""
    return {str(item.get(key)) for item in data if isinstance(item, dict)} if isinstance(data, list) else set()


def merged_entries(
    existing: Any,
    site: dict[str, dict[str, Any]],
    key: str,
    kind: str,
    result: Pulled,
    scope: PullScope,
    untouched: set[str] | frozenset[str] = frozenset(),
    *,
    elsewhere: Collection[str] | None = frozenset(),
) -> list[dict[str, Any]]:
    """The file's entries (by ``key``) with the site's differing values (not for the ``untouched`` ones, which the
    site still holds as last applied: the file's differences are local edits), then the site's others if taken in:
    those no file of the kind holds (``elsewhere``: the names its other files hold; None: a file that takes no
    others in, one of the kind's directory, ``users/*.yaml``)."""
    local = [item for item in existing if isinstance(item, dict)] if isinstance(existing, list) else []
    names = {item.get(key) for item in local}
    merged = []
    for item in local:
        remote = site.get(item.get(key))  # type: ignore[arg-type]
        if remote is None or item.get(key) in untouched:
            merged.append(item)
            continue
        merged.append(_with_site_values(item, remote, scope))
    if elsewhere is None:
        return merged
    others = [name for name in site if name not in names and name not in elsewhere]
    if scope.takes(kind):
        merged += [site[name] for name in (sorted(others) if kind == "user" else others)]
    else:
        result.not_taken.setdefault(kind, []).extend(sorted(others))
    return merged


def _with_site_values(item: dict[str, Any], remote: dict[str, Any], scope: PullScope) -> dict[str, Any]:
    """A file's entry with the site's differing values: of the fields it writes (every field the site has when
    the scope takes all), and without a ``language`` the site no longer sets."""
    entry = dict(item)
    for field_name, value in remote.items():
        if (field_name in entry or scope.take_all) and entry.get(field_name) != value:
            entry[field_name] = value
    if "language" in entry and "language" not in remote:
        del entry["language"]
    return entry


def list_clean(holds: Callable[[list[Any]], bool]) -> Callable[[Path], bool]:
    """A ``clean`` check of a list file (``users.yaml``; a kind's list file): it is a list and ``holds``."""

    def clean(target: Path) -> bool:
        data = writer.read_plain(target)
        return isinstance(data, list) and holds(data)

    return clean


def _users_clean(state: State, exactly: set[str] | None) -> Callable[[Path], bool]:
    """A users file holds only users the state records, each as last applied or pulled, and ``users.yaml`` exactly
    those (``exactly``: the records no file of ``users/`` holds) — else it was edited since: kept."""

    def holds(data: list[Any]) -> bool:
        try:
            specs = [UserSpec.model_validate(item) for item in data]
        except ValidationError:
            return False
        records = state.users
        names = {s.username for s in specs}
        return (names == exactly if exactly is not None else names <= set(records)) and all(
            s.username in records and records[s.username].digest == user_digest(s) for s in specs
        )

    return list_clean(holds)
