"""Planning the file kind (pure): the files under ``files/``, each keyed by its path there.

Files are identified by their path under ``files/`` and found through the state (their UUID). When the state does
not know a file, a live file with the same stored name, folder, size *and bytes* (SHA-256, downloaded by observe:
``cmssync.sync.file_adoption``) is adopted instead of uploading a duplicate, and joins the managed set at once, so
no two content paths adopt one site file; a file of the same name and size with other bytes is someone else's, and
a new file is uploaded. New bytes (a different SHA-256 from the one last uploaded) mean ``replace``: upload the new
file, re-point the pages that reference it, then delete the old one. Only metadata the content states is managed:
a sidecar's ``title`` or ``description`` left out, or no tags written, leaves the live value alone.

A file's managed metadata changed both in the content and on the site since cmssync last applied it is a three-way
conflict (``cmssync.plan.asset_conflicts``), settled like a page's by the conflict policies; changed on the site
only, it is settled by the drift policy (by default listed as a site change and not written:
:class:`cmssync.plan.drift.Settling`). New bytes are a new upload, which takes the content's metadata: a file whose
site change is kept (or whose ``site_wins`` field is) is then held. Every create
carries ``Precondition(absent=True)``: a plan file applied after the object appeared is refused.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from functools import partial
from pathlib import PurePosixPath

from cmssync.config.values import folder_path
from cmssync.content.files import FileSpec
from cmssync.content.site import SiteContent
from cmssync.plan.actions import Action, FieldChange, HeldObject, Operation, Precondition
from cmssync.plan.asset_conflicts import compare, file_base, folder_by_path, live_file_fields
from cmssync.plan.asset_forms import desired_file_meta, file_form, file_hash
from cmssync.plan.drift import Settling
from cmssync.plan.normalize import digest
from cmssync.plan.snapshot import LiveFile, Snapshot
from cmssync.state.records import FileRecord, State


@dataclass
class FilePlan:
    actions: list[Action] = field(default_factory=list)
    urls: dict[str, str] = field(default_factory=dict)
    """Path → public URL of files whose URL stays valid through this plan."""
    ids: dict[str, str] = field(default_factory=dict)
    changing: set[str] = field(default_factory=set)
    """Paths of files uploaded by this plan (created or replaced): their URL is known only at apply time."""


def plan_files(
    content: SiteContent, observed: Snapshot, state: State, warnings: list[str], settling: Settling | None = None
) -> FilePlan:
    settling = settling if settling is not None else Settling()
    result = FilePlan()
    managed = {str(record.id).lower() for record in state.files.values()}
    folders = {number: folder_path(name) for name, number in content.settings.folders.items()}
    for path, spec in sorted(content.files.items()):
        record = state.files.get(path)
        live = observed.files.get(str(record.id).lower()) if record is not None else None
        adopted = False
        if live is None and record is None:
            live = _adoptable(path, spec, observed, managed, warnings)
            adopted = live is not None
        if live is None:
            result.actions.append(_create_file(path, spec, observed, managed, folders, drift=record is not None))
            result.changing.add(path)
            continue
        if record is not None and record.url and _url_name(record.url) != live.name:
            warnings.append(
                f"file {path}: renamed on the site, from {_url_name(record.url)} to {live.name}; still bound to "
                f"{path} (one site file, one path: cmssync never renames a file, pages link to its current URL)"
            )
        action = _settled_file(path, spec, live, record, adopted, settling, folders)
        if action is not None and action.op == "replace":
            result.changing.add(path)
        else:
            result.urls[path] = live.url
            result.ids[path] = live.id
        if action is not None:
            result.actions.append(action)
    return result


def _url_name(url: str) -> str:
    return url.split("?", 1)[0].rstrip("/").rsplit("/", 1)[-1]


def _settled_file(
    path: str,
    spec: FileSpec,
    live: LiveFile,
    record: FileRecord | None,
    adopted: bool,
    settling: Settling,
    folders: Mapping[int, str],
) -> Action | None:
    """The action for a file the site has (or None): metadata compared three ways, new bytes replace it. A folder
    change shows the folders' paths (``folders:`` of the settings), as the sidecar names them, not their ids."""
    desired = desired_file_meta(spec)
    changes = _file_changes(spec, live)
    recorded = record.digest if record is not None else None
    sides = compare(
        "file",
        path,
        changes,
        recorded,
        digest(desired),
        partial(file_base, desired, live, recorded or ""),
        lambda _name, a, b: bool(a == b),
    )
    new_bytes = record is not None and record.hash != file_hash(spec)
    if new_bytes:
        changes.insert(0, FieldChange(field="sha256", before=record.hash if record else None, after=file_hash(spec)))
    if not changes and not adopted:
        settling.caught_up("file", path, recorded, digest(desired))
        return None
    changes = [folder_by_path(change, folders) for change in changes]
    action = Action(
        kind="file",
        key=path,
        op=_file_op(changes),
        changes=tuple(changes),
        precondition=Precondition(remote_id=live.id),
        drift=sides.drift,
        note=_file_note(_file_op(changes), adopted),
        file=file_form(spec),
    )
    settled = settling.settle(action, sides)
    if settled is None:
        return None
    op = _file_op(list(settled.changes))
    if op == "replace" and len(settled.changes) < len(changes):  # site values kept out of a new upload
        _hold_replaced(action, {c.field for c in changes} - {c.field for c in settled.changes}, settling)
        return None
    if not settled.changes and not adopted:
        return None
    return settled.model_copy(update={"op": op, "note": _file_note(op, adopted)})


def _file_op(changes: Sequence[FieldChange]) -> Operation:
    if any(change.field == "sha256" for change in changes):
        return "replace"
    return "move" if any(change.field == "folder" for change in changes) else "update"


def _hold_replaced(action: Action, kept: set[str], settling: Settling) -> None:
    """New bytes are a new upload, which takes the content's metadata: a field whose site value the plan keeps (a
    site change the drift policy keeps, a ``site_wins`` conflict) cannot be kept on it, so the file is held rather
    than have the editor's value overwritten."""
    settling.held.append(
        HeldObject(
            kind="file",
            key=action.key,
            reason="conflict",
            message=(
                f"its bytes changed too, and a new upload takes the content's metadata, so the site's "
                f"{', '.join(sorted(kept))} cannot be kept; nothing is written to it: merge the editor's change into "
                "the sidecar, or let the content win (--force for a conflict, drift: revert for a site change)"
            ),
            action=action,
        )
    )


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


def _create_file(
    path: str, spec: FileSpec, observed: Snapshot, managed: set[str], folders: Mapping[int, str], *, drift: bool
) -> Action:
    changes = [FieldChange(field="size", after=spec.size), FieldChange(field="sha256", after=file_hash(spec))]
    changes += [
        folder_by_path(FieldChange(field=name, after=value), folders) for name, value in desired_file_meta(spec).items()
    ]
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
        file=file_form(spec),
    )


def _file_changes(spec: FileSpec, live: LiveFile) -> list[FieldChange]:
    current = live_file_fields(live)
    return [
        FieldChange(field=name, before=current.get(name), after=value)
        for name, value in desired_file_meta(spec).items()
        if current.get(name) != value
    ]


def file_deletes(content: SiteContent, observed: Snapshot, state: State) -> list[Action]:
    """The deletes of the managed files the content no longer has and the site still holds."""
    return [
        Action(kind="file", key=path, op="delete", precondition=Precondition(remote_id=str(record.id)))
        for path, record in sorted(state.files.items())
        if path not in content.files and str(record.id) in observed.files
    ]
