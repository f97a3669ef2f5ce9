"""Which failed reads fail one object, and which fail the run (issue 15, item 3).

Observe reads a managed object by id when a listing does not give it (a page the tree lists without its recent
version, a page, file or user the state knows). Its answer means one of three things:

* **absent**: "not found" (404, the real server's 400/401 "… not found."), or a page in the trash can. The object
  is gone; the plan creates it again if the content still has it. A "not found" for a page the tree *lists* is not
  absent: the server contradicts itself, and that page is unreadable like the next case.
* **unreadable**: a definite answer about this one object that is not its data: a permission refused (403, or the
  401 "You do not have access …"), a server error that outlasted the retries (500), an answer too large or not the
  API's shape. The object exists (or may), so it must never be planned as absent: that would create a duplicate on
  every run. The observation records it (``Snapshot.unreadable``) with the server's reason, and the plan holds it
  and everything depending on it (``cmssync.plan.unreadable``); the rest of the site is planned as usual.
* **the run's failure**: an answer about the site or the session rather than the object: the token lacks a scope,
  the credentials were refused, the API is off, the site is rate limiting or unreachable. Every read would fail
  alike, so the run stops with that error.
"""

from __future__ import annotations

from cmssync.api.errors import (
    ApiDisabled,
    AuthenticationFailed,
    OutcomeUnknown,
    OutOfScope,
    RateLimited,
    TransportError,
)
from cmssync.content.paths import page_named, page_object_id
from cmssync.errors import ApiError

SITE_WIDE: tuple[type[ApiError], ...] = (
    OutOfScope,
    AuthenticationFailed,
    ApiDisabled,
    RateLimited,
    TransportError,
    OutcomeUnknown,
)
"""Failures that say nothing about the object read: the run stops with them."""


def fails_the_object(exc: BaseException) -> bool:
    """Whether a failed read of one object fails only that object (see the module docstring); "not found" is
    decided by the caller, which knows whether a listing shows the object."""
    return isinstance(exc, ApiError) and not isinstance(exc, SITE_WIDE)


def note_unreadable_page(
    exc: BaseException, path: str, page_id: int, *, listed: bool, unreadable: dict[str, str]
) -> None:
    """Record a page read that failed the page (``listed``: the page tree shows it, so even "not found" does), or
    raise ``exc`` if it fails the run."""
    if not fails_the_object(exc):
        raise exc
    where = "the page tree lists it but " if listed else ""
    unreadable[page_object_id(path)] = (
        f"{page_named(path)} (id {page_id}): {where}it cannot be read ({exc}); {_CONSEQUENCE}: let the API user read "
        "it, or move it out of the way"
    )


def note_unreadable_children(
    exc: BaseException, parent: str, parent_id: int, pending: list[str], unreadable: dict[str, str]
) -> None:
    """Record the pages looked for below ``parent`` whose children list failed (they may exist: not absent), or
    raise ``exc`` if it fails the run."""
    if not fails_the_object(exc):
        raise exc
    for path in pending:
        if parent == "/" or path.startswith(parent + "/"):
            unreadable[page_object_id(path)] = (
                f"{page_named(path)}: the children of {parent} (id {parent_id}) cannot be read ({exc}); {_CONSEQUENCE}"
            )


def note_unreadable(exc: BaseException, object_id: str, what: str, unreadable: dict[str, str]) -> None:
    """Record a file or user the state knows whose read failed it (not "not found": the caller decides that), or
    raise ``exc`` if it fails the run."""
    if not fails_the_object(exc):
        raise exc
    unreadable[object_id] = f"{what}: it cannot be read ({exc}); {_CONSEQUENCE}"


_CONSEQUENCE = "nothing is planned for it or what depends on it, and it is not created again"
