"""The bytes of a plan's uploads: from the content directory (a plain ``apply``), or carried by a saved plan.

A plan says *which* bytes a file upload sends (``FileForm.sha256``), never the bytes. ``apply`` without a plan file
streams them from ``files/<path>`` of the content it just planned (:class:`ContentFiles`), so a plain apply pays
nothing. ``plan -o`` puts them in the plan file (:func:`write_blobs`: a ``blobs`` section, base64 keyed by
``sha256:<hex>``), so ``apply PLANFILE`` needs no content directory (:class:`SavedBlobs`); every blob is checked
against its key, and every upload of the plan must have one and no other blob may be there, before anything is
read from the site or written (:func:`decode_blobs`): a plan file whose bytes were altered is refused, naming the
file. Both ways stream: a blob is never whole in memory (written in chunks from the content file, decoded in chunks
from the plan file into a private temporary file that the upload then streams), so memory stays flat whatever the
uploads weigh.
"""

from __future__ import annotations

import base64
import binascii
import hashlib
import json
import shutil
import tempfile
import weakref
from dataclasses import dataclass
from pathlib import Path
from typing import BinaryIO, Protocol

from cmssync.content.layout import link_problem
from cmssync.content.site import SiteContent
from cmssync.errors import ContentError, PlanError, Problem
from cmssync.plan.actions import Plan
from cmssync.plan.asset_forms import FileForm
from cmssync.sync.plan_file_json import BlobSpans, read_span

UPLOADS = ("create", "replace")
"""File operations that send bytes."""
BLOB_CHUNK = 3 << 16


class Uploads(Protocol):
    def source(self, path: str, form: FileForm) -> Path | bytes:
        """What to upload for the content file ``path``: a path to stream, or the bytes."""
        ...

    def close(self) -> None:
        """Let go of what holds the bytes (the apply is over)."""
        ...


@dataclass(frozen=True)
class ContentFiles:
    """The bytes in the content directory (``files/<path>``), streamed from disk."""

    content: SiteContent

    def source(self, path: str, form: FileForm) -> Path:
        local = self.content.root / "files" / path
        refused = link_problem(self.content.root, local)  # again: the tree may have changed since validation
        if refused is not None:
            raise ContentError([Problem(f"files/{path}", 0, 0, f"{refused}; not uploaded")])
        return local

    def close(self) -> None:
        pass


class SavedBlobs:
    """The bytes a saved plan carries, already checked against their SHA-256 and decoded into files of a private
    temporary directory, streamed from there like a content file (:func:`decode_blobs`). The directory goes with
    :meth:`close`, or with this object (the apply that held it is over), or at exit."""

    def __init__(self) -> None:
        self.blobs: dict[str, Path] = {}
        self.directory = Path(tempfile.mkdtemp(prefix="cmssync-plan-"))  # 0700
        self._remove = weakref.finalize(self, shutil.rmtree, self.directory, ignore_errors=True)

    def source(self, path: str, form: FileForm) -> Path:
        return self.blobs[form.sha256]

    def close(self) -> None:
        self._remove()


def uploads(plan: Plan) -> list[tuple[str, FileForm]]:
    """The content paths and forms of the plan's file actions that send bytes."""
    return [(a.key, a.file) for a in plan.actions if a.kind == "file" and a.op in UPLOADS and a.file is not None]


def sha256_of(data: bytes) -> str:
    return "sha256:" + hashlib.sha256(data).hexdigest()


def write_blobs(handle: BinaryIO, plan: Plan, content: SiteContent | None) -> None:
    """The plan file's ``blobs`` object: the bytes of each upload, base64, keyed by their SHA-256, streamed from
    ``content`` in chunks and checked against the hash the plan was made with (a file changed since is refused:
    the caller's atomic write then leaves no plan file)."""
    written: set[str] = set()
    handle.write(b"{")
    for path, form in uploads(plan):
        if content is None:
            raise ValueError(f"file {path}: a plan that uploads bytes is saved with its content")
        if form.sha256 in written:
            continue
        handle.write(b"," if written else b"")
        handle.write(b"\n    " + json.dumps(form.sha256).encode() + b': "')
        digest = hashlib.sha256()
        with ContentFiles(content).source(path, form).open("rb") as source:
            while chunk := source.read(BLOB_CHUNK):  # a multiple of 3: base64 without padding until the end
                digest.update(chunk)
                handle.write(base64.b64encode(chunk))
        if "sha256:" + digest.hexdigest() != form.sha256:
            raise PlanError(f"files/{path} changed while the plan was made; run `cmssync plan` again")
        handle.write(b'"')
        written.add(form.sha256)
    handle.write(b"\n  }" if written else b"}")


def decode_blobs(plan: Plan, spans: BlobSpans, where: Path) -> SavedBlobs:
    """The bytes of every upload of ``plan`` from the plan file ``where`` (``spans``: where each blob lies), each
    decoded as a stream into a private temporary file and checked (:func:`decode_blob`); a blob no upload of the
    plan sends is refused (a plan file carries its uploads, nothing else)."""
    wanted = {form.sha256 for _path, form in uploads(plan)}
    extra = sorted(set(spans) - wanted)
    if extra:
        raise PlanError(
            f"{where}: the plan file holds bytes no upload of the plan sends ({', '.join(extra[:3])}"
            f"{' …' if len(extra) > 3 else ''}); nothing applied"
        )
    saved = SavedBlobs()
    try:
        for path, form in uploads(plan):
            if form.sha256 not in saved.blobs:
                target = saved.directory / form.sha256.removeprefix("sha256:")
                with target.open("wb") as sink:
                    decode_blob(path, form, spans, where, sink)
                saved.blobs[form.sha256] = target
    except BaseException:
        saved.close()
        raise
    return saved


def decode_blob(path: str, form: FileForm, spans: BlobSpans, where: Path, sink: BinaryIO) -> None:
    """Write the bytes the plan uploads for the content file ``path`` to ``sink``, from the plan file ``where``;
    ``PlanError`` naming the file when they are missing, not base64, larger than planned, or not the bytes the plan
    was made with (``form.sha256``)."""
    wanted = form.sha256
    span = spans.get(wanted)
    if span is None:
        raise PlanError(f"{where}: the plan file holds no bytes for file {path} ({wanted}); nothing applied")
    digest, size, rest = hashlib.sha256(), 0, b""
    for part in read_span(where, span):
        text = rest + part
        cut = len(text) - len(text) % 4
        try:
            data = base64.b64decode(text[:cut], validate=True)
        except (binascii.Error, ValueError):
            raise PlanError(f"{where}: the bytes of file {path} are not base64; nothing applied") from None
        rest, size = text[cut:], size + len(data)
        if size > form.size:
            raise PlanError(
                f"{where}: the bytes of file {path} do not match the plan ({wanted}: more than its {form.size} "
                "bytes): the plan file was altered or damaged; nothing applied"
            )
        digest.update(data)
        sink.write(data)
    if rest:
        raise PlanError(f"{where}: the bytes of file {path} are not base64; nothing applied")
    found = "sha256:" + digest.hexdigest()
    if found != wanted:
        raise PlanError(
            f"{where}: the bytes of file {path} do not match the plan ({wanted}, the bytes hash to "
            f"{found}): the plan file was altered or damaged; nothing applied"
        )
