"""Applying file and user actions (a group's: ``cmssync.sync.kinds.group``).

Creates are never repeated blindly: when a create fails ambiguously (``OutcomeUnknown``: a timeout, a dropped
connection or a 5xx after the request was sent) the handler looks the object up (for a file a new site
file with its name, folder, size and bytes, exactly one, see ``cmssync.sync.file_adoption``; username and email),
adopts it if it exists, and sends the create again only if it certainly does not (``create_verified``). Every
delete is read back, because a real server answers "deleted" for objects it silently keeps (the super admin).

A replaced file's new bytes are uploaded first; the old file is only retired here and deleted after the pages
that referenced it have been re-pointed (``delete_retired_files``).

Every upload is journaled (``State.uploads``: the path, its SHA-256, size and folder) before its bytes are sent and
forgotten once the file is recorded. A run killed between the site's commit and the answer leaves that entry, and
the next upload of the path first looks the copy up by name, folder, size and bytes (never a file the state holds):
the same bytes are adopted instead of uploaded again; a copy of bytes the content no longer wants is retired and
deleted with the replaced files. Either way no copy stays on the site recorded nowhere.
"""

from __future__ import annotations

from pathlib import PurePosixPath
from typing import Any, TypeVar

from cmssync.api.errors import NotFound
from cmssync.api.models import File, User
from cmssync.content.passwords import env_password
from cmssync.content.paths import object_page_path
from cmssync.errors import ApplyError
from cmssync.plan.actions import Action
from cmssync.plan.asset_conflicts import applied_file_digest, applied_user_digest, same_user_field
from cmssync.plan.asset_forms import FileForm, UserForm
from cmssync.state.records import FileRecord, RetiredFileRecord, UploadRecord, UserRecord
from cmssync.sync.engine import ApplyContext, Outcome, create_verified
from cmssync.sync.file_adoption import uploaded_copy

F = TypeVar("F", FileForm, UserForm)

# --- files --------------------------------------------------------------------------------------------------------


async def apply_file(action: Action, context: ApplyContext) -> str:
    path = action.key
    if action.op == "delete":
        return await _delete_file(action, context)
    form = _planned(action, action.file)
    if action.op in ("create", "replace"):
        old = context.state.files.get(path)
        if action.op == "replace" and old is not None:
            # Journaled before the upload: a run killed or failed from here on leaves the old id in the state, and a
            # later apply deletes it, instead of the old bytes staying public at the old URL forever.
            context.state.retire_file(str(old.id), RetiredFileRecord(path=path))
            context.save()
        uploaded = await _journaled_upload(context, path, form)
        # Recorded without a digest until its metadata is written: a run that ends in between (killed, a write
        # refused) leaves no base claiming the content's metadata is on the site, so the next plan writes it
        # (with one, the site's missing title would pass for an editor's change the drift policy keeps).
        _record_file(context, path, form, uploaded, None)
        written = await _set_metadata(context, form, uploaded, set(form.meta) - {"folder"})
        _record_file(context, path, form, written or uploaded, form.digest)
        verb = "uploaded" if action.op == "create" else "uploaded the new bytes"
        return f"{verb} (id {uploaded.id})"
    file_id = action.precondition.remote_id or context.file_ids[path]
    fields = {change.field for change in action.changes}
    current: File | None = None
    if "folder" in fields and form.folder_id is not None:
        current = await context.client.move_file(file_id, form.folder_id)
    if fields - {"folder"}:
        current = await _set_metadata(context, form, None, fields - {"folder"}, file_id=file_id)
    if current is None:  # adopted as it is
        current = await context.client.get_file(file_id)
    old = context.state.files.get(path)
    live = context.snapshot.files.get(file_id.lower())
    kept = applied_file_digest(form.meta, action, live, old.digest if old else None, form.digest)
    _record_file(context, path, form, current, kept)  # a site value left on the site keeps the recorded digest
    return "updated"


def _planned(action: Action, form: F | None) -> F:
    """What the action writes, as the plan carries it (a plan file of an older cmssync does not: planned again)."""
    if form is None:
        raise ApplyError(f"{action.kind} {action.key}: the plan does not say what to write; run `cmssync plan` again")
    return form


async def _journaled_upload(context: ApplyContext, path: str, form: FileForm) -> File:
    """Upload ``path`` (see the module docstring), or adopt the copy a killed run's upload of the same bytes left."""
    pending = context.state.uploads.get(path)
    if pending is not None:
        earlier = FileForm(sha256=pending.sha256, size=pending.size, folder_id=pending.folder)
        copy = await _uploaded_copy(context, path, earlier, existed=set())
        if copy is not None and pending.sha256 == form.sha256:
            return copy
        if copy is not None:
            context.state.retire_file(copy.id.lower(), RetiredFileRecord(path=path))
    context.state.record_upload(path, UploadRecord(sha256=form.sha256, size=form.size, folder=form.folder_id))
    context.save()
    return await _upload(context, path, form)


async def _upload(context: ApplyContext, path: str, form: FileForm) -> File:
    source = context.uploads.source(path, form)
    name = PurePosixPath(path).name
    return await create_verified(
        lambda: context.client.upload_file(source, folder_id=form.folder_id, filename=name),
        lambda: _uploaded_copy(context, path, form),
    )


async def _uploaded_copy(
    context: ApplyContext, path: str, form: FileForm, *, existed: set[str] | None = None
) -> File | None:
    """After an ambiguous upload: the one new site file with this name, folder, size and bytes, if the upload
    happened (``cmssync.sync.file_adoption.uploaded_copy``). Files the site had when the run observed it (unless
    ``existed`` says otherwise: a journaled upload of an earlier run made its copy before this run looked), and ids
    the state or this run already gave to a content path or retired, are never taken for it."""
    claimed = {str(record.id).lower() for record in context.state.files.values()}
    claimed |= {file_id.lower() for file_id in context.file_ids.values()}
    claimed |= {file_id.lower() for file_id in context.state.retired_files}
    existed = set(context.snapshot.files) if existed is None else existed
    return await uploaded_copy(context.client, path, form, claimed=claimed, existed=existed)


async def _set_metadata(
    context: ApplyContext, form: FileForm, uploaded: File | None, fields: set[str], *, file_id: str | None = None
) -> File | None:
    wanted = {name: form.meta[name] for name in fields if name in form.meta}
    if not wanted:
        return uploaded
    attributes = {
        name.removeprefix("attributes."): value for name, value in wanted.items() if name.startswith("attributes.")
    }
    target = file_id or (uploaded.id if uploaded else None)
    assert target is not None
    return await context.client.update_file(
        target,
        title=wanted.get("title"),
        description=wanted.get("description"),
        tags=wanted.get("tags"),
        attributes=attributes or None,
    )


def _record_file(context: ApplyContext, path: str, form: FileForm, file: File, digest: str | None) -> None:
    """Record ``path`` as the site file ``file``, with ``digest`` as the base of its metadata (None: none yet)."""
    context.state.record_file(
        path,
        FileRecord(
            id=file.id.lower(),
            hash=form.sha256,
            url=file.url or "",
            folder=file.folder if file.folder is not None else form.folder_id,
            digest=digest,
        ),
    )
    context.state.forget_upload(path)  # recorded: no longer pending (an adopted copy of a killed run's upload too)
    context.file_urls[path] = file.url or ""
    context.file_ids[path] = file.id.lower()
    context.save()


async def _delete_file(action: Action, context: ApplyContext) -> str:
    record = context.state.files.get(action.key)
    file_id = action.precondition.remote_id or (str(record.id) if record else "")
    await _delete_file_id(context, file_id, action.key)
    context.state.forget_file(action.key)
    context.save()
    return "deleted"


async def _delete_file_id(context: ApplyContext, file_id: str, path: str) -> None:
    await context.client.delete_file(file_id)
    try:
        await context.client.get_file(file_id)
    except NotFound:
        return
    raise ApplyError(f"file {path}: the server answered 'deleted' but file {file_id} is still there")


async def delete_retired_files(context: ApplyContext, outcomes: list[Outcome]) -> list[str]:
    """Delete the replaced files the state holds (this run's and those an interrupted run left) once every page
    action of this run has succeeded; each is forgotten once it is gone.

    If a page failed, it may still show the old URL: the old files stay (in the state, for the next apply), and the
    problem is reported. A retired id that is still some content file's current id (its replacement never got
    uploaded) is only forgotten.
    """
    retired = context.state.retired_files
    if not retired:
        return []
    if any(object_page_path(o.action.kind, o.action.key) and o.status != "ok" for o in outcomes):  # pages, stacks
        return [f"kept {len(retired)} replaced file(s) for the next apply: some pages were not updated"]
    current = {str(record.id).lower() for record in context.state.files.values()}
    problems = []
    for file_id, record in sorted(retired.items()):
        if file_id.lower() not in current:
            try:
                await _delete_file_id(context, file_id, record.path)
            except NotFound:
                pass  # gone already (deleted by the run that was interrupted, or by someone)
            except ApplyError as exc:
                problems.append(str(exc))
                continue
        context.state.forget_retired_file(file_id)
        context.save()
    return problems


# --- users --------------------------------------------------------------------------------------------------------


async def apply_user(action: Action, context: ApplyContext) -> str:
    username = action.key
    if action.op == "delete":
        return await _delete_user(action, context)
    form = _planned(action, action.user)
    fields = {change.field for change in action.changes}
    password = env_password(username, form.password, form.source) if "password" in fields else None
    if action.op == "create":
        if password is None:
            raise ApplyError(f"user {username}: a new user needs a password (password: ${{env:NAME}} in users.yaml)")
        created = False

        async def create() -> User:
            nonlocal created
            new = await context.client.create_user(
                username=username, email=form.email, password=password, language=form.language
            )
            created = True
            return new

        user = await create_verified(create, lambda: _user_named(context, username, form.email))
        if not created:  # found after an ambiguous create: make sure it has the password we meant to give it
            await context.client.change_password(user.id, password)
        _record_user(context, username, form, user.id, password)
        return f"created (id {user.id})"
    user_id = int(action.precondition.remote_id or context.state.users[username].id)
    changed: dict[str, Any] = {}
    if "email" in fields:
        changed["email"] = form.email
    if "language" in fields:
        changed["language"] = form.language
    if changed:
        await context.client.update_user(user_id, **changed)
    if password is not None:
        await context.client.change_password(user_id, password)
    _record_user(context, username, form, user_id, password, action)
    return "updated" + (" (password changed)" if password is not None else "")


async def _user_named(context: ApplyContext, username: str, email: str) -> User | None:
    """After an ambiguous create: the user, if the create happened. A user of this name with another email is not
    ours (someone made it meanwhile): a conflict, never adopted, and the create is not sent again."""
    user = next((user for user in await context.client.all_users() if user.username == username), None)
    if user is not None and (user.email or "").lower() != email.lower():
        raise ApplyError(
            f"conflict: user {username}: after an unconfirmed create the site has a user {username} (id {user.id}) "
            f"with email {user.email or '(none)'}, not {email}; it is not adopted"
        )
    return user


def _record_user(
    context: ApplyContext,
    username: str,
    form: UserForm,
    user_id: int,
    password: str | None,
    action: Action | None = None,
) -> None:
    old = context.state.users.get(username)
    digest = form.digest
    if action is not None:  # a site_wins field left on the site keeps the recorded digest (plan.asset_conflicts)
        live = context.snapshot.users.get(username)
        digest = applied_user_digest(form, action, live, old.digest if old else None, digest, same_user_field)
    password_digest = context.state.password_digest(username, password) if password is not None else None
    context.state.record_user(
        username,
        UserRecord(
            id=user_id,
            digest=digest,
            password_digest=password_digest or (old.password_digest if old else None),
        ),
    )
    context.save()


async def _delete_user(action: Action, context: ApplyContext) -> str:
    record = context.state.users.get(action.key)
    user_id = int(action.precondition.remote_id or (record.id if record else 0))
    await context.client.delete_user(user_id)
    try:
        await context.client.get_user(user_id)
    except NotFound:
        context.state.forget_user(action.key)
        context.save()
        return "deleted"
    raise ApplyError(f"user {action.key}: the server answered 'deleted' but user {user_id} is still there")
