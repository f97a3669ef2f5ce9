"""Adopting site files by their bytes, never by name and size alone (issue 15, item 1).

When the state does not know a content file (a first adoption, a lost state, a run killed between an upload and
the state save) a site file may already hold it; adopting that file instead of uploading again avoids a duplicate.
Name and size prove nothing, though: an editor's unrelated ``x.txt`` of the same size, or ``a/x.txt`` and
``b/x.txt`` of one size uploaded by a killed run, would be taken for ours and the site would serve the wrong bytes
while ``plan`` says "No changes". So a site file is adopted only when the SHA-256 of the bytes it serves equals the
content's hash.

Where the bytes are compared: the planner is pure and cannot download, so **observe** does it
(:func:`hash_adoption_candidates`): for each content file the state does not know, the unmanaged site files with the
same stored name, folder and size (the only ones that could match; usually none, rarely more than one) are
downloaded as a stream and hashed, and the snapshot carries their ``sha256``. The planner then adopts only a
byte-identical file (``Snapshot.file_to_adopt``), adds it to the managed set at once (so two content paths never
adopt one site file) and otherwise plans an upload. So a plan says truthfully what apply does, and a plan file's
preconditions can be re-checked against a fresh snapshot. Cost: one download per candidate, only while the state
does not know the file; a site with many same-named files of one size costs one download each, streamed (memory
stays bounded by the 64 KiB chunk).

After an ambiguous upload (``OutcomeUnknown``), apply looks the upload up (:func:`uploaded_copy`) with stricter
rules: the copy must be a file that did not exist when the run observed the site, that no content path of this run
claims, and whose bytes are the content's; exactly one such file is adopted. Several (or one whose bytes could not
be read) leave the file for the next run, saying so, rather than guess.
"""

from __future__ import annotations

import asyncio
import dataclasses
from collections.abc import Iterable, Mapping, Set
from pathlib import PurePosixPath

from cmssync.api.client import ConcreteClient
from cmssync.api.models import File
from cmssync.content.site import SiteContent
from cmssync.errors import ApiError, ApplyError
from cmssync.plan.asset_forms import FileForm
from cmssync.plan.snapshot import LiveFile, adoption_candidates
from cmssync.state.records import State


async def hash_adoption_candidates(
    client: ConcreteClient,
    content: SiteContent,
    state: State,
    files: Mapping[str, LiveFile],
    warnings: list[str],
) -> dict[str, LiveFile]:
    """``files`` with ``sha256`` set on every site file that a content file unknown to the state could adopt.

    A candidate whose bytes cannot be read (no URL, a 404 or 403 on its public URL, a dropped connection after the
    retries) keeps ``sha256=None``, so it is not adopted; a warning names it.
    """
    managed = {str(record.id).lower() for record in state.files.values()}
    wanted: dict[str, list[str]] = {}
    for path, spec in sorted(content.files.items()):
        if path in state.files:
            continue
        name = PurePosixPath(path).name
        for candidate in adoption_candidates(files.values(), name, spec.folder_id, spec.size, managed):
            wanted.setdefault(candidate.id, []).append(path)
    if not wanted:
        return dict(files)
    ids = sorted(wanted)
    digests = await asyncio.gather(*(_sha256(client, files[file_id]) for file_id in ids))
    result = dict(files)
    for file_id, (digest, problem) in zip(ids, digests, strict=True):
        if digest is not None:
            result[file_id] = dataclasses.replace(files[file_id], sha256=digest)
        else:
            paths = ", ".join(wanted[file_id])
            warnings.append(
                f"file {paths}: the site file {file_id} has the same name and size, but its bytes could not be read "
                f"to compare ({problem}); it is not adopted"
            )
    return result


async def _sha256(client: ConcreteClient, file: LiveFile) -> tuple[str | None, str]:
    """``(sha256:<hex>, "")`` of the bytes served at the file's URL, or ``(None, reason)``."""
    if not file.url:
        return None, "it has no URL"
    try:
        hexdigest, _size = await client.sha256_at(file.url)
    except ApiError as exc:
        return None, str(exc)
    return f"sha256:{hexdigest}", ""


async def uploaded_copy(
    client: ConcreteClient, path: str, form: FileForm, *, claimed: Set[str], existed: Set[str]
) -> File | None:
    """After an ambiguous upload of the content file ``path`` (``form``: what the plan uploads): the one site file
    the upload made, or None if it made none.

    A candidate has the stored name, folder and size of ``form``, did not exist when the run observed the site
    (``existed``: an editor's file, or one another content path adopts, is never ours), is not ``claimed`` (ids the
    state or this run already gave to a content path), and serves the content's bytes. Exactly one is adopted; with
    several, or a candidate whose bytes cannot be read, the upload is left for the next run (``ApplyError``) —
    returning None would let the caller send the upload again.
    """
    name = PurePosixPath(path).name
    candidates: list[File] = []
    async for found in client.iter_files():
        file_id = found.id.lower()
        url_name = PurePosixPath((found.url or "").split("?")[0]).name
        size = found.size.exact if found.size else None
        folder_ok = form.folder_id is None or found.folder == form.folder_id
        if file_id in claimed or file_id in existed or url_name != name or size != form.size or not folder_ok:
            continue
        candidates.append(found)
    if not candidates:
        return None
    wanted = form.sha256
    same: list[File] = []
    for candidate in candidates:
        if not candidate.url:
            raise _undecided(path, f"the new site file {candidate.id} has no URL to compare its bytes")
        try:
            hexdigest, _size = await client.sha256_at(candidate.url)
        except ApiError as exc:
            raise _undecided(path, f"the bytes of the new site file {candidate.id} could not be read ({exc})") from exc
        if f"sha256:{hexdigest}" == wanted:
            same.append(candidate)
    if len(same) > 1:
        raise _undecided(path, f"{len(same)} new site files hold its bytes ({_ids(same)}) and none is adopted")
    return same[0] if same else None


def _undecided(path: str, reason: str) -> ApplyError:
    return ApplyError(
        f"file {path}: the upload's outcome is unknown and {reason}; it is left for the next run, which "
        "adopts a site file only if it holds these bytes"
    )


def _ids(files: Iterable[File]) -> str:
    return ", ".join(sorted(f.id.lower() for f in files))
