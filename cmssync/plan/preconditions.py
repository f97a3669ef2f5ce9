"""Whether a saved plan's action still holds, kind by kind (``Action.precondition`` against the site now): the
built-in kinds' checks, registered with their kinds in ``cmssync.sync.kinds`` (``ManagedKind.stale``), which
``cmssync.sync.plan_files.check_fresh`` dispatches to. Each answers why the action no longer holds, or None.

An object the action changes or deletes must still exist (a page also still at the live version the plan saw); an
object it creates must still be absent (``Precondition.absent``), so a plan file applied twice creates nothing
twice. An object that cannot be read now is refused before any of these (``cmssync.sync.kinds.stale_now``).
"""

from __future__ import annotations

from pathlib import PurePosixPath

from cmssync.content.paths import object_page_path
from cmssync.plan.actions import Action
from cmssync.plan.snapshot import Snapshot
from cmssync.state.records import State


def created(found: str | None) -> str | None:
    return f"exists on the site now ({found}), and the plan was made to create it" if found else None


def stale_page(action: Action, snapshot: Snapshot, state: State) -> str | None:
    """A page's, or a stack's (at its page's path)."""
    condition = action.precondition
    if condition.absent:
        page = snapshot.pages.get(object_page_path(action.kind, action.key) or action.key)
        return created(f"page id {page.id}" if page is not None else None)
    if condition.remote_id is None:
        return None
    live = snapshot.pages_by_id.get(int(condition.remote_id))
    if live is None:
        return f"(id {condition.remote_id}) no longer exists on the site"
    expected = condition.live_version_id
    if expected is not None and live.live_version_id != expected:
        return f"was published since (live version {live.live_version_id}, the plan expected {expected})"
    return None


def stale_user(action: Action, snapshot: Snapshot, state: State) -> str | None:
    condition = action.precondition
    if condition.absent:
        user = snapshot.users.get(action.key)
        return created(f"user id {user.id}" if user is not None else None)
    remote = condition.remote_id
    if remote is not None and not any(str(user.id) == remote for user in snapshot.users.values()):
        return f"(user id {remote}) no longer exists on the site"
    return None


def stale_file(action: Action, snapshot: Snapshot, state: State) -> str | None:
    """A file action's site file must still exist; an adoption's (the state does not know the path yet) must still
    be one that holds the plan's bytes and that nothing else claims (observe hashed it again just now)."""
    if action.precondition.absent:
        return created(_file_present(action, snapshot, state))
    if action.precondition.remote_id is None:
        return None
    remote = action.precondition.remote_id.lower()
    live = snapshot.files.get(remote)
    if live is None:
        return f"(site file {remote}) no longer exists on the site"
    if action.op == "delete" or action.file is None or action.key in state.files:
        return None
    if live.sha256 != action.file.sha256:
        return f"was to adopt site file {remote}, which no longer holds its bytes or is now managed as another file"
    return None


def _file_present(action: Action, snapshot: Snapshot, state: State) -> str | None:
    """The site file that now stands where ``action`` was to upload one: the state's, or one holding its bytes."""
    record = state.files.get(action.key)
    if record is not None and str(record.id).lower() in snapshot.files:
        return f"site file {str(record.id).lower()}, recorded in the state"
    form = action.file
    if form is None:
        return None
    managed = {str(r.id).lower() for r in state.files.values()}
    name = PurePosixPath(action.key).name
    adoptable, _same = snapshot.file_to_adopt(name, form.folder_id, form.size, form.sha256, managed)
    return f"site file {adoptable.id} with the same bytes" if adoptable is not None else None
