"""Planning files, users and groups (pure).

Files are identified by their path under ``files/`` and found through the state (their UUID). When the state does
not know a file, a live file with the same stored name, folder, size *and bytes* (SHA-256, downloaded by observe:
``cmssync.sync.file_adoption``) is adopted instead of uploading a duplicate, and joins the managed set at once, so
no two content paths adopt one site file; a file of the same name and size with other bytes is someone else's, and
a new file is uploaded. New bytes (a different SHA-256 from the one last uploaded) mean ``replace``: upload the new
file, re-point the pages that reference it, then delete the old one. Only metadata the content states is managed:
a sidecar's ``title`` or ``description`` left out, or no tags written, leaves the live value alone.

Users are identified by username, but a site user cmssync does not manage (or whose id is not the one the state
recorded) is adopted only when its email is the content's too: otherwise it is someone else's account, and the
plan reports a conflict (a warning starting ``conflict:``) and plans nothing for it: neither an update that would
take the account over, nor a create that the site would refuse. Passwords are compared as keyed digests only; the
plan says that a password changes, never what it is. Groups can only be created through the API: a group on the
site that the content does not name is reported, never an error; a group of the content's name is that group
(Concrete keeps group names unique).

Every create carries ``Precondition(absent=True)``: a plan file applied after the object appeared is refused.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import PurePosixPath
from typing import Any

from cmssync.content.files import FileSpec
from cmssync.content.models import UserSpec
from cmssync.content.site import SiteContent
from cmssync.plan.actions import Action, FieldChange, Operation, Precondition
from cmssync.plan.normalize import digest, normalize_attribute, normalize_tags, normalize_text
from cmssync.plan.snapshot import LiveFile, LiveUser, Snapshot
from cmssync.state.records import State, UserRecord


@dataclass
class FilePlan:
    actions: list[Action] = field(default_factory=list)
    urls: dict[str, str] = field(default_factory=dict)
    """Path → public URL of files whose URL stays valid through this plan."""
    ids: dict[str, str] = field(default_factory=dict)
    changing: set[str] = field(default_factory=set)
    """Paths of files uploaded by this plan (created or replaced): their URL is known only at apply time."""


def plan_files(content: SiteContent, observed: Snapshot, state: State, warnings: list[str]) -> FilePlan:
    result = FilePlan()
    managed = {str(record.id).lower() for record in state.files.values()}
    for path, spec in sorted(content.files.items()):
        record = state.files.get(path)
        live = observed.files.get(str(record.id).lower()) if record is not None else None
        adopted = False
        if live is None and record is None:
            live = _adoptable(path, spec, observed, managed, warnings)
            adopted = live is not None
        if live is None:
            result.actions.append(_create_file(path, spec, observed, managed, drift=record is not None))
            result.changing.add(path)
            continue
        new_bytes = record is not None and record.hash != file_hash(spec)
        changes = _file_changes(spec, live)
        if new_bytes:
            changes.insert(
                0, FieldChange(field="sha256", before=record.hash if record else None, after=file_hash(spec))
            )
            result.changing.add(path)
        else:
            result.urls[path] = live.url
            result.ids[path] = live.id
        op: Operation
        if new_bytes:
            op = "replace"
        elif any(change.field == "folder" for change in changes):
            op = "move"
        else:
            op = "update"
        if changes or adopted:
            result.actions.append(
                Action(
                    kind="file",
                    key=path,
                    op=op,
                    changes=tuple(changes),
                    precondition=Precondition(remote_id=live.id),
                    note=_file_note(op, adopted),
                )
            )
    return result


def _adoptable(
    path: str, spec: FileSpec, observed: Snapshot, managed: set[str], warnings: list[str]
) -> LiveFile | None:
    """The site file to adopt for a content file the state does not know: one that holds its bytes, or None.

    The chosen id joins ``managed`` at once, so a later content path (``b/x.txt`` after ``a/x.txt``, same bytes)
    cannot adopt it too.
    """
    chosen, same = observed.file_to_adopt(PurePosixPath(path).name, spec.folder_id, spec.size, file_hash(spec), managed)
    if chosen is None:
        return None
    managed.add(chosen.id)
    if len(same) > 1:
        others = ", ".join(f.id for f in same if f.id != chosen.id)
        warnings.append(
            f"file {path}: {len(same)} site files hold its bytes; {chosen.id} is adopted, the others ({others}) are "
            "left alone (copies of an interrupted upload, or someone else's)"
        )
    return chosen


def _file_note(op: str, adopted: bool) -> str | None:
    if adopted:
        return "an existing site file with this name, folder and the same bytes (SHA-256) is adopted instead of a copy"
    if op == "replace":
        return "the new file is uploaded, pages are re-pointed to it, then the old file is deleted"
    return None


def _create_file(path: str, spec: FileSpec, observed: Snapshot, managed: set[str], *, drift: bool) -> Action:
    changes = [FieldChange(field="size", after=spec.size), FieldChange(field="sha256", after=file_hash(spec))]
    changes += [FieldChange(field=name, after=value) for name, value in desired_file_meta(spec).items()]
    note = "managed before, but deleted outside cmssync" if drift else None
    if not drift:
        others = observed.adoption_candidates(PurePosixPath(path).name, spec.folder_id, spec.size, managed)
        if others:
            note = (
                f"the site has {len(others)} file(s) of this name and size ({', '.join(f.id for f in others)}) but "
                "not with these bytes: they are someone else's and are left alone"
            )
    return Action(
        kind="file",
        key=path,
        op="create",
        changes=tuple(changes),
        precondition=Precondition(absent=True),
        drift=drift,
        note=note,
    )


def file_hash(spec: FileSpec) -> str:
    """The content hash in the state's form, ``sha256:<hex>``."""
    return spec.sha256 if spec.sha256.startswith("sha256:") else f"sha256:{spec.sha256}"


def file_digest(spec: FileSpec) -> str:
    """The digest the state records for a file's metadata: the content's, as applied (one rule for apply and pull)."""
    return digest(desired_file_meta(spec))


def user_digest(spec: UserSpec) -> str:
    """The digest the state records for a user: the content's email and language, as applied (apply and pull)."""
    return digest({"email": spec.email, "language": spec.language})


def desired_file_meta(spec: FileSpec) -> dict[str, Any]:
    """The metadata the content manages for a file, in comparable form."""
    meta = spec.meta
    wanted: dict[str, Any] = {}
    if meta.title is not None:
        wanted["title"] = normalize_text(meta.title.plain if meta.title.plain is not None else meta.title.source)
    if meta.description is not None:
        text = meta.description.plain if meta.description.plain is not None else meta.description.source
        wanted["description"] = normalize_text(text)
    if meta.tags:
        wanted["tags"] = normalize_tags(meta.tags)
    if spec.folder_id is not None:
        wanted["folder"] = spec.folder_id
    for name in ("width", "height", "duration"):
        value = getattr(meta.attributes, name)
        if value is not None:
            wanted[f"attributes.{name}"] = normalize_attribute(value, attribute_type="number")
    return wanted


def _file_changes(spec: FileSpec, live: LiveFile) -> list[FieldChange]:
    current: dict[str, Any] = {
        "title": normalize_text(live.title),
        "description": normalize_text(live.description),
        "tags": list(live.tags),
        "folder": live.folder,
    }
    for name in ("width", "height", "duration"):
        current[f"attributes.{name}"] = normalize_attribute(live.attributes.get(name), attribute_type="number")
    return [
        FieldChange(field=name, before=current.get(name), after=value)
        for name, value in desired_file_meta(spec).items()
        if current.get(name) != value
    ]


def plan_groups(content: SiteContent, observed: Snapshot, warnings: list[str]) -> list[Action]:
    actions = [
        Action(
            kind="group",
            key=name,
            op="create",
            changes=(FieldChange(field="name", after=name),),
            precondition=Precondition(absent=True),
        )
        for name in sorted(content.groups)
        if name not in observed.groups
    ]
    unmanaged = sorted(set(observed.groups) - set(content.groups))
    if unmanaged and observed.complete:
        warnings.append(f"groups on the site but not in the content (left alone): {', '.join(unmanaged)}")
    return actions


def plan_users(
    content: SiteContent,
    observed: Snapshot,
    state: State,
    passwords_changed: frozenset[str],
    passwords_unset: frozenset[str],
    warnings: list[str],
) -> list[Action]:
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
                )
            )
            continue
        current = {"email": live.email, "language": live.language}
        changes = [
            FieldChange(field=name, before=current[name], after=value)
            for name, value in desired.items()
            if _differs(name, current[name], value)
        ]
        if spec.password is not None and username in passwords_changed:
            changes.append(FieldChange(field="password", sensitive=True))
        if changes:
            actions.append(
                Action(
                    kind="user",
                    key=username,
                    op="update",
                    changes=tuple(changes),
                    precondition=Precondition(remote_id=str(live.id)),
                )
            )
    return actions


def _differs(name: str, live: str | None, desired: str) -> bool:
    if name == "email":  # addresses are stored as given, but compare as the same mailbox regardless of case
        return (live or "").lower() != desired.lower()
    return live != desired


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
