"""Users and groups.

A real server answers ``PUT /users/{id}`` with the user as it was *before* the update, so :meth:`UsersApi.update_user`
reads the user again. It also refuses a user's own current username or email re-sent (``Conflict``): send only what
changes. ``change_password`` is a form field (a JSON body is ignored there) and is retried like an update (setting
the same password twice ends the same). ``DELETE /users/1`` answers "deleted" while doing nothing: verify with a read.

The user list is only incomplete across a page boundary (tied ``date_added`` values, concrete-api.md §13): a list that
fits on one page with no repeated id is the whole list, and users are then never probed id by id (a one-user site
used to cost 20 404s per plan). Only a list spanning pages is completed by reading the ids it skipped.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Collection, Mapping, Sequence
from typing import Any

from pydantic import SecretStr

from cmssync.api.errors import NotFound
from cmssync.api.models import DeleteResult, Group, User
from cmssync.api.pagination import MAX_LIMIT, Endpoints, includes_param, split_list
from cmssync.api.retry import Kind


def _secret(value: str | SecretStr) -> str:
    return value.get_secret_value() if isinstance(value, SecretStr) else value


class UsersApi(Endpoints):
    # -- users ----------------------------------------------------------------------------------------------------

    def iter_users(self, *, includes: Sequence[str] = (), limit: int = 100) -> AsyncIterator[User]:
        return self._walk(
            User, "/users", params=includes_param(tuple(includes)), limit=limit, sort_key=lambda item: item.date_added
        )

    async def list_users(self) -> tuple[list[User], bool]:
        """``(users, complete)``: the user list, and whether it is certainly all of it.

        The first page is read on its own: when it holds fewer than ``limit`` items and no id twice, there was no page
        boundary for tied dates to hide users behind, so it is complete (one request). Otherwise the whole list is
        walked (reading the first page again) and ``complete`` is false: the caller decides whether to look for the
        users the walk may have skipped (:meth:`find_missed_users`).
        """
        route = "/users"
        body = await self._t.call("GET", route, kind=Kind.READ, params={"limit": str(MAX_LIMIT)})
        items, _ = split_list(body, path=self._t.api_prefix + route)
        first = [self._model(User, item, method="GET", route=route) for item in items]
        distinct = {user.id: user for user in first}
        if len(items) < MAX_LIMIT and len(distinct) == len(items):
            return list(distinct.values()), True
        return [user async for user in self.iter_users()], False

    async def all_users(self) -> list[User]:
        """Every user, the super admin included: the list, plus the users a multi-page walk skipped."""
        listed, complete = await self.list_users()
        if complete:
            return listed
        return listed + await self.find_missed_users({user.id for user in listed})

    async def users_below(self, seen: Collection[int], wanted: Collection[int]) -> list[User]:
        """Users of ``wanted`` a walk skipped, found a list page at a time where their dates tie.

        The list's cursor filters ``(date added, id) < (the cursor's)``, so ``after=`` the first seen user above
        the highest one missing returns the group that user's date ties with, below it, when the group fits a page
        (recorded on a real site: ``users.ties.after_highest_uid`` in ``lists.jsonl``). Repeated while a page finds
        at least two of the missing (a page costs what reading two by id costs); the rest are the caller's to read
        by id: a tie group longer than a page comes back as the same members whatever the cursor."""
        missing = set(wanted) - set(seen)
        known = set(seen)
        found: list[User] = []
        while missing:
            top = max(missing)
            cursor = min((user_id for user_id in known if user_id > top), default=None)
            if cursor is None:
                break
            page = await self._first_page(User, "/users", limit=MAX_LIMIT, after=cursor)
            known |= {user.id for user in page}
            new = [user for user in page if user.id in missing]
            found += new
            missing -= {user.id for user in new}
            if len(new) < 2:
                break
        return found

    async def find_missed_users(self, seen: Collection[int], *, beyond: int = 20) -> list[User]:
        """Users a list walk did not return, found by reading the ids it skipped one by one.

        ``GET /users`` skips users whose ``date_added`` ties across a page boundary (concrete-api.md §13), and users
        created in bulk share a second. User ids are sequential, so the ids between 2 and the highest seen are looked
        for a list page at a time (:meth:`users_below`), the rest read individually (404s are deleted users), and
        then ids above it until ``beyond`` in a row do not exist. The super admin (id 1) is not looked for: it is
        never managed.
        """
        highest = max(seen, default=1)
        candidates = [n for n in range(2, highest + 1) if n not in seen]
        found = await self.users_below(seen, candidates)
        listed = {user.id for user in found}
        candidates = [n for n in candidates if n not in listed]
        found += [user for user in await asyncio.gather(*(self._maybe_user(n) for n in candidates)) if user]
        misses, number = 0, highest
        while misses < beyond:
            number += 1
            user = await self._maybe_user(number)
            misses = 0 if user is not None else misses + 1
            if user is not None:
                found.append(user)
        return found

    async def _maybe_user(self, user_id: int) -> User | None:
        try:
            return await self.get_user(user_id)
        except NotFound:
            return None

    async def get_user(self, user_id: int, *, includes: Sequence[str] = ()) -> User:
        return await self._get(User, "/users/{user_id}", params=includes_param(tuple(includes)), user_id=user_id)

    async def create_user(
        self, *, username: str, email: str, password: str | SecretStr, language: str | None = None
    ) -> User:
        """Create an active user. Never retried: an ambiguous failure raises ``OutcomeUnknown``."""
        body: dict[str, Any] = {"username": username, "email": email, "password": _secret(password)}
        if language is not None:
            body["language"] = language
        return await self._one(User, "POST", "/users", kind=Kind.CREATE, json=body)

    async def update_user(
        self,
        user_id: int,
        *,
        username: str | None = None,
        email: str | None = None,
        language: str | None = None,
        attributes: Mapping[str, Any] | None = None,
    ) -> User:
        """Change a user and return the user as it is after the change (read again)."""
        body: dict[str, Any] = {}
        for key, value in (("username", username), ("email", email), ("language", language)):
            if value is not None:
                body[key] = value
        if attributes is not None:
            body["attributes"] = dict(attributes)
        await self._t.call("PUT", "/users/{user_id}", kind=Kind.UPDATE, json=body, user_id=user_id)
        return await self.get_user(user_id)

    async def change_password(self, user_id: int, password: str | SecretStr) -> User:
        route = "/users/{user_id}/change_password"
        form = {"password": _secret(password)}
        return await self._one(User, "POST", route, kind=Kind.UPDATE, form=form, user_id=user_id)

    async def delete_user(self, user_id: int) -> DeleteResult:
        route = "/users/{user_id}"
        body = await self._t.call("DELETE", route, kind=Kind.DELETE, user_id=user_id)
        return self._deleted(body, user_id, "users", route)

    # -- groups ---------------------------------------------------------------------------------------------------

    def iter_groups(self, *, limit: int = 100) -> AsyncIterator[Group]:
        """Every group except Guest (1) and Registered Users (2), which the list leaves out."""
        return self._walk(Group, "/groups", limit=limit)

    async def get_group(self, group_id: int) -> Group:
        return await self._get(Group, "/groups/{group_id}", group_id=group_id)

    async def create_group(self, name: str) -> Group:
        """Create a group (the server checks neither uniqueness nor emptiness). Never retried."""
        return await self._one(Group, "POST", "/groups", kind=Kind.CREATE, json={"name": name})
