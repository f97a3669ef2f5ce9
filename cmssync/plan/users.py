"""Planning the user kind (pure): the users of ``users.yaml`` and ``users/``, each keyed by username.

Users are identified by username, but a site user cmssync does not manage (or whose id is not the one the state
recorded) is adopted only when its email is the content's too: otherwise it is someone else's account, and the
plan reports a conflict (a warning starting ``conflict:``) and plans nothing for it: neither an update that would
take the account over, nor a create that the site would refuse. Passwords are compared as keyed digests only; the
plan says that a password changes, never what it is.

A user's email and language changed both in the content and on the site since cmssync last applied them are
three-way conflicts (``cmssync.plan.asset_conflicts``), settled like a page's by the conflict policies; changed on
the site only, they are settled by the drift policy (by default listed as a site change and not written:
:class:`cmssync.plan.drift.Settling`). Every create
carries ``Precondition(absent=True)``: a plan file applied after the object appeared is refused.
"""

from __future__ import annotations

from functools import partial
from typing import Any

from cmssync.content.site import SiteContent
from cmssync.plan.actions import Action, FieldChange, Precondition
from cmssync.plan.asset_conflicts import compare, same_user_field, user_base
from cmssync.plan.asset_forms import user_digest, user_form
from cmssync.plan.drift import Settling
from cmssync.plan.snapshot import LiveUser, Snapshot
from cmssync.state.records import State, UserRecord


def plan_users(
    content: SiteContent,
    observed: Snapshot,
    state: State,
    passwords_changed: frozenset[str],
    passwords_unset: frozenset[str],
    warnings: list[str],
    settling: Settling | None = None,
) -> list[Action]:
    settling = settling if settling is not None else Settling()
    actions: list[Action] = []
    for username, spec in sorted(content.users.items()):
        live = observed.users.get(username)
        record = state.users.get(username)
        if live is not None and not _same_user(live, record, spec.email):
            warnings.append(_user_conflict(username, live, spec.email, record))
            continue
        if spec.password is not None and username in passwords_unset:
            warnings.append(
                f"user {username}: its password comes from {spec.password.name}, which is not set; apply cannot set it"
            )
        desired: dict[str, Any] = {"email": spec.email}
        if spec.language is not None:
            desired["language"] = spec.language
        if live is None:
            changes = [FieldChange(field="username", after=username)]
            changes += [FieldChange(field=name, after=value) for name, value in desired.items()]
            changes.append(FieldChange(field="password", sensitive=True))
            actions.append(
                Action(
                    kind="user",
                    key=username,
                    op="create",
                    changes=tuple(changes),
                    precondition=Precondition(absent=True),
                    drift=record is not None,
                    note="managed before, but deleted outside cmssync" if record is not None else None,
                    user=user_form(spec),
                )
            )
            continue
        current = {"email": live.email, "language": live.language}
        changes = [
            FieldChange(field=name, before=current[name], after=value)
            for name, value in desired.items()
            if not same_user_field(name, current[name], value)
        ]
        recorded = record.digest if record is not None else None
        sides = compare(
            "user",
            username,
            changes,
            recorded,
            user_digest(spec),
            partial(user_base, spec, live, recorded or ""),
            same_user_field,
        )
        if spec.password is not None and username in passwords_changed:
            changes.append(FieldChange(field="password", sensitive=True))
        if not changes:
            settling.caught_up("user", username, recorded, user_digest(spec))
            continue
        action = Action(
            kind="user",
            key=username,
            op="update",
            changes=tuple(changes),
            precondition=Precondition(remote_id=str(live.id)),
            drift=sides.drift,
            user=user_form(spec),
        )
        settled = settling.settle(action, sides)
        if settled is not None:
            actions.append(settled)
    return actions


def _same_user(live: LiveUser, record: UserRecord | None, email: str) -> bool:
    """Whether the site's user of this username is provably the one the content means: the one the state manages
    (same id), or else one whose email is the content's too (compared as one mailbox, case aside)."""
    if record is not None and record.id == live.id:
        return True
    return live.email.lower() == email.lower()


def _user_conflict(username: str, live: LiveUser, email: str, record: UserRecord | None) -> str:
    why = (
        f"the state manages user id {record.id}, but the site's {username} is user {live.id}"
        if record is not None
        else "cmssync does not manage it"
    )
    return (
        f"conflict: user {username}: the site has a user {username} (id {live.id}) with email "
        f"{live.email or '(none)'}, not {email}, and {why}; a user is adopted only when username and email both "
        "match, so nothing is planned for it (make the emails agree, or use another username in the content)"
    )


def user_deletes(
    content: SiteContent, observed: Snapshot, state: State, protected: frozenset[str] | set[str], warnings: list[str]
) -> list[Action]:
    """The deletes of the managed users the content no longer has and the site still holds; a ``protected`` user
    (and the site's first account, id 1) is said and kept."""
    deletes: list[Action] = []
    for username in sorted(state.users):
        live = observed.users.get(username)
        if username in content.users or live is None:
            continue
        if username in protected or live.id == 1:
            warnings.append(f"user {username} is protected and will not be deleted")
            continue
        deletes.append(
            Action(kind="user", key=username, op="delete", precondition=Precondition(remote_id=str(live.id)))
        )
    return deletes
