"""Observing the user kind: the site's users the content or the state names, keyed by username.

The user list (``UsersApi.list_users``: whether the walk was complete), the users the state knows that the walk
skipped (tied dates: a list page at a time, ``users_below``; then by id, ``cmssync.sync.observe_known``), and, when
a content user is neither known nor listed, the ids the walk did not return (``find_missed_users``).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable

from cmssync.api.client import ConcreteClient
from cmssync.api.limiter import deferred
from cmssync.api.models import User
from cmssync.plan.snapshot import LiveUser
from cmssync.state.records import State
from cmssync.sync.observe_known import read_known


async def observe_users(
    client: ConcreteClient,
    state: State,
    wanted: Iterable[str],
    unreadable: dict[str, str],
    ties: Counter[str],
    *,
    listed: bool = True,
) -> dict[str, LiveUser]:
    """The users: the list, plus the known users it skipped, read by id. Not ``listed`` (a scope naming users the
    state knows): only those, by id; if one of the ``wanted`` names is then not found (a new user, one deleted or
    renamed on the site), the list is read after all, as only the list shows who holds that name now."""
    walked, complete = await client.list_users() if listed else ([], True)
    users: dict[int, User] = {u.id: u for u in walked}
    await _read_known_unseen(client, state, users, complete, unreadable, ties)
    names = {u.username for u in users.values()}
    if not listed and any(name not in names for name in wanted):
        return await observe_users(client, state, wanted, unreadable, ties)
    if not complete and any(name not in names for name in wanted):
        # A content user is neither known nor listed: it may be one a multi-page walk skipped (tied dates), so
        # read the ids the walk did not return before planning to create it. A one-page list is complete.
        with deferred():
            missed = await client.find_missed_users(set(users))
        users.update({u.id: u for u in missed})
    return {
        u.username: LiveUser(id=u.id, username=u.username, email=u.email or "", language=u.language)
        for u in users.values()
        if u.username
    }


async def _read_known_unseen(
    client: ConcreteClient,
    state: State,
    users: dict[int, User],
    complete: bool,
    unreadable: dict[str, str],
    ties: Counter[str],
) -> None:
    """Add to ``users`` the users the state knows that the list did not show: those a walk skipped (tied dates) a
    list page at a time, then the others by id."""
    unseen = {name: r.id for name, r in state.users.items() if r.id not in users}
    if unseen and not complete:
        with deferred():  # the walk skipped users whose dates tie: a list page reads a group that fits one
            users.update({u.id: u for u in await client.users_below(set(users), set(unseen.values()))})
        unseen = {name: user_id for name, user_id in unseen.items() if user_id not in users}
        ties["users"] += len(unseen)
    reads = ((client.get_user(i), f"user:{name}", f"user {name} (id {i})") for name, i in unseen.items())
    users.update({extra.id: extra for extra in await read_known(reads, unreadable)})
