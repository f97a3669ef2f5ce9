"""Reading by id the objects of a kind that the state knows and a list walk did not return (files, users), and what
a list walk cannot return (``unreliable_list_warning``): shared by the kinds' observers
(``cmssync.sync.observe_files``, ``observe_users``) and pull. A read answers the object, "not found" (absent: None),
or a failure that makes the object unreadable (``cmssync.sync.read_failures``); the reads are *deferred*
(``cmssync.api.limiter.deferred``) behind the other walks and the page tree.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Awaitable, Iterable
from typing import TypeVar

from cmssync.api.errors import NotFound
from cmssync.api.limiter import deferred
from cmssync.sync.observe_pages import all_settled
from cmssync.sync.read_failures import note_unreadable

T = TypeVar("T")


def unreliable_list_warning(kind: str, dates: list[object]) -> str | None:
    """A warning when a list walk cannot have returned everything.

    The server's cursor skips items whose sort dates tie across a page boundary (concrete-api.md §13); a group of
    ties larger than half a page (a bulk import, the sample content of an install) cannot be walked completely.
    """
    if len(dates) < 100:
        return None
    largest = max(Counter(dates).values())
    if largest < 50:
        return None
    return (
        f"the site's {kind} list cannot be read completely: {largest} {kind} share the same date, and the API skips "
        f"some of them; {kind} it did not return look absent (a content {kind[:-1]} not yet in the state may be "
        "created again)"
    )


async def read_known(reads: Iterable[tuple[Awaitable[T], str, str]], unreadable: dict[str, str]) -> list[T]:
    """The objects read by id (``(read, object id, what)`` each), deferred behind the other reads; those the server
    says do not exist are left out, and those it cannot give are noted in ``unreadable``."""

    async def one(read: Awaitable[T], object_id: str, what: str) -> T | None:
        try:
            return await read
        except NotFound:
            return None
        except Exception as exc:
            note_unreadable(exc, object_id, what, unreadable)  # raises a failure of the whole run
            return None

    with deferred():  # behind the other list walks and the page tree, which wait on their requests one by one
        found = await all_settled([one(read, object_id, what) for read, object_id, what in reads])
    return [item for item in found if item is not None]
