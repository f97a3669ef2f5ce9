"""Saved plans (``plan -o FILE``, ``apply DIR FILE``, ``show FILE``): writing, reading, and the freshness check.

A plan file is the plan's JSON plus ``blobs``, the bytes of its uploads (``cmssync.sync.uploads``), so it carries
everything apply writes: pages' and files' write forms, users' password *variables*, the bytes. ``apply`` of a plan
file reads no content directory:

* the site is observed for what the plan names (:func:`planned_objects`: its actions' objects, the pages its pages
  link to, and, as for any plan, everything the state manages), not for what a content directory holds;
* the content's digest is compared only when the directory exists: a directory that holds other content than the
  plan was made from is a stale plan (CI plans a pull request and applies it on merge), and with no directory the
  plan is applied as saved, which apply says in one line;
* every precondition is checked as before (:func:`check_fresh`), from the plan: a file adoption against the
  SHA-256 the plan carries, a create against what now stands at its key.
"""

from __future__ import annotations

import contextlib
import io
import logging
from pathlib import Path
from typing import BinaryIO

from pydantic import Field, ValidationError

from cmssync.api.client import ConcreteClient
from cmssync.config import Settings
from cmssync.content.fields import Location
from cmssync.content.files import FileSpec
from cmssync.content.lists import list_kind
from cmssync.content.models import FileSidecar, LocatedSpec, PageSpec, UserSpec
from cmssync.content.paths import object_page_path
from cmssync.content.site import SiteContent
from cmssync.content.text import PageIdRef, PageLinkRef, Text
from cmssync.errors import PlanError
from cmssync.fileio import write_streamed
from cmssync.logs import note
from cmssync.plan.actions import OUTPUT_FORMAT_VERSION, Action, Plan, markup_free_json
from cmssync.plan.snapshot import Snapshot
from cmssync.state.records import State
from cmssync.sync.kinds import Registry, discover, stale_now
from cmssync.sync.observe import observe, read_pages_alone
from cmssync.sync.plan_file_json import BlobSpans, split_plan_file
from cmssync.sync.planning import pages_to_write
from cmssync.sync.uploads import SavedBlobs, decode_blob, decode_blobs, uploads, write_blobs
from cmssync.sync.workspace import Workspace


class PlanFile(Plan):
    """The document of a plan file: the plan and the bytes of its uploads (base64, keyed by ``sha256:<hex>``),
    read apart from each other (:mod:`cmssync.sync.plan_file_json`)."""

    blobs: dict[str, str] = Field(default_factory=dict)


def write_plan_file(plan: Plan, path: Path, content: SiteContent | None = None) -> None:
    """The plan as JSON, markup escaped (:func:`markup_free_json`), then its ``blobs``: the bytes of its uploads
    streamed from ``content`` (the plan's content directory; None only for a plan that uploads nothing), written
    atomically."""
    head = markup_free_json(plan.model_dump_json(indent=2)).rstrip()
    assert head.endswith("}")

    def fill(handle: BinaryIO) -> None:
        handle.write(head[:-1].rstrip().encode("utf-8") + b',\n  "blobs": ')
        write_blobs(handle, plan, content)
        handle.write(b"\n}\n")

    write_streamed(path, fill)


def read_plan_file(path: Path) -> Plan:
    """The plan a plan file holds, without its bytes."""
    return _read(path)[0]


def read_plan_uploads(path: Path) -> tuple[Plan, dict[str, bytes]]:
    """The plan a plan file holds and the bytes it uploads by content path (``show`` inlines new images from
    them); bytes that do not match the plan's hash are left out, never shown."""
    plan, spans = _read(path)
    found: dict[str, bytes] = {}
    for key, form in uploads(plan):
        sink = io.BytesIO()
        with contextlib.suppress(PlanError):
            decode_blob(key, form, spans, path, sink)
            found[key] = sink.getvalue()
    return plan, found


def _read(path: Path) -> tuple[Plan, BlobSpans]:
    document, spans = split_plan_file(path)
    try:
        saved = PlanFile.model_validate_json(document)
    except ValidationError as exc:
        raise PlanError(f"{path}: not a cmssync plan file ({exc.errors()[0]['msg']})") from None
    if saved.format_version != OUTPUT_FORMAT_VERSION:
        raise PlanError(
            f"{path}: a plan file of format {saved.format_version}, and this cmssync reads format "
            f"{OUTPUT_FORMAT_VERSION}; run `cmssync plan` again"
        )
    plan = Plan.model_construct(**{name: getattr(saved, name) for name in Plan.model_fields})
    return plan, spans


async def load_plan_file(
    path: Path, workspace: Workspace, *, client: ConcreteClient, state: State
) -> tuple[Plan, Snapshot, SavedBlobs]:
    """A saved plan, the site as it is now and the plan's bytes (checked before anything is read from the site);
    refused when the plan went stale (:func:`check_fresh`)."""
    plan, spans = _read(path)
    blobs = decode_blobs(plan, spans, path)
    try:
        content = workspace.content if workspace.has_content else None
        if content is None:
            message = f"the content directory {workspace.directory} does not exist: the plan is applied as saved"
            note(message, level=logging.WARNING)
        planned = planned_objects(plan, workspace.settings, workspace.directory)
        snapshot = await observe(client, planned, state, kinds=workspace.kinds)
        snapshot = await read_pages_alone(client, snapshot, pages_to_write(plan, snapshot, state))
        check_fresh(plan, content, snapshot, state, workspace.kinds)
    except BaseException:
        blobs.close()
        raise
    return plan, snapshot, blobs


def planned_objects(plan: Plan, settings: Settings, root: Path) -> SiteContent:
    """The objects a saved plan names, in the form observe reads them (keys, pinned ids, a file's size and folder
    for adoption candidates); not a content directory: nothing is planned from it. Pages the plan's pages link to
    by path are looked up like ``existing_pages`` (an unmanaged page has no state record to find it by)."""
    pages: dict[str, PageSpec] = {}
    files: dict[str, FileSpec] = {}
    lists: dict[str, dict[str, LocatedSpec]] = {}
    linked: set[str] = set()
    for action in plan.actions:
        path = object_page_path(action.kind, action.key)  # a page, or a stack at its page's path
        if path is not None and action.op != "delete":
            remote = action.precondition.remote_id
            pages[path] = PageSpec(name=action.key, id=int(remote) if remote is not None else None)
            linked |= _linked_pages(action)
        elif action.kind == "file" and action.file is not None:
            form = action.file
            source = Location(file=f"files/{action.key}")
            files[action.key] = FileSpec(action.key, form.size, form.sha256, FileSidecar(), form.folder_id, source)
        elif action.kind == "user" and action.user is not None:
            lists.setdefault(action.kind, {})[action.key] = UserSpec(username=action.key, email=action.user.email)
        elif (listed := list_kind(action.kind)) is not None and listed.key_only:
            lists.setdefault(action.kind, {})[action.key] = listed.stub(action.key)
    existing = sorted(set(settings.existing_pages) | (linked - set(pages)))
    looked_up = settings.model_copy(update={"existing_pages": existing})
    return SiteContent(root=root, settings=looked_up, pages=pages, files=files, lists=lists)


def _linked_pages(action: Action) -> set[str]:
    if action.page is None:
        return set()
    texts = [value for value in action.page.fields.values() if isinstance(value, Text)]
    references = [ref for text in texts for ref in text.references]
    references += [ref for blocks in action.page.areas.values() for block in blocks for ref in block.references()]
    return {ref.path for ref in references if isinstance(ref, PageLinkRef | PageIdRef)}


def check_fresh(
    plan: Plan,
    content: SiteContent | None,
    snapshot: Snapshot,
    state: State,
    kinds: Registry | None = None,
) -> None:
    """Refuse a plan file whose content changed, or one of whose preconditions no longer holds on the site.

    ``content`` is the content directory as it is now, None when there is none (the plan is applied as saved).
    Every action's precondition is checked against ``snapshot`` (the site now) and ``state``: an object the action
    changes or deletes must still exist (a page also still at the live version the plan saw), and an object the
    action creates must still be absent (``Precondition.absent``). A plan file applied twice, say by a re-run CI
    job, is so refused instead of creating ``/news-1``, a second group and second copies of every file. Each kind
    checks its own actions (``ManagedKind.stale``: the built-in kinds' in ``cmssync.plan.preconditions``), a kind
    that observes itself against what its observer read now (``Snapshot.kinds``).
    """
    if content is not None and plan.content_digest != content.digest():
        raise PlanError("the plan file is stale: the content changed since it was made; run `cmssync plan` again")
    if plan.site.rstrip("/") != snapshot.site_url.rstrip("/"):
        raise PlanError(f"the plan file was made for {plan.site}, not {snapshot.site_url}")
    registry = kinds or discover()
    for action in plan.actions:
        problem = stale_now(registry, action, snapshot, state)
        if problem is not None:
            raise PlanError(f"the plan file is stale: {action.kind} {action.key} {problem}; run `cmssync plan` again")
