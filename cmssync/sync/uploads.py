"""The bytes of a plan's uploads: from the content directory (a plain ``apply``), or carried by a saved plan.

A plan says *which* bytes a file upload sends (``FileForm.sha256``), never the bytes. ``apply`` without a plan file
streams them from ``files/<path>`` of the content it just planned (:class:`ContentFiles`), so a plain apply pays
nothing. ``plan -o`` puts them in the plan file (:func:`encode_blobs`: a ``blobs`` section, base64 keyed by
``sha256:<hex>``), so ``apply PLANFILE`` needs no content directory (:class:`SavedBlobs`); every blob is checked
against its key, and every upload of the plan must have one, before anything is read from the site or written
(:func:`decode_blobs`): a plan file whose bytes were altered is refused, naming the file.
"""

from __future__ import annotations

import base64
import binascii
import hashlib
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Protocol

from cmssync.content.layout import link_problem
from cmssync.content.site import SiteContent
from cmssync.errors import ContentError, PlanError, Problem
from cmssync.plan.actions import Plan
from cmssync.plan.asset_forms import FileForm

UPLOADS = ("create", "replace")
"""File operations that send bytes."""


class Uploads(Protocol):
    def source(self, path: str, form: FileForm) -> Path | bytes:
        """What to upload for the content file ``path``: a path to stream, or the bytes."""
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


@dataclass(frozen=True)
class SavedBlobs:
    """The bytes a saved plan carries, already checked against their SHA-256 (:func:`decode_blobs`)."""

    blobs: Mapping[str, bytes]

    def source(self, path: str, form: FileForm) -> bytes:
        return self.blobs[form.sha256]


def uploads(plan: Plan) -> list[tuple[str, FileForm]]:
    """The content paths and forms of the plan's file actions that send bytes."""
    return [(a.key, a.file) for a in plan.actions if a.kind == "file" and a.op in UPLOADS and a.file is not None]


def sha256_of(data: bytes) -> str:
    return "sha256:" + hashlib.sha256(data).hexdigest()


def encode_blobs(plan: Plan, content: SiteContent | None) -> dict[str, str]:
    """The plan file's ``blobs``: the bytes of each upload, base64, keyed by their SHA-256, read from ``content``
    and checked against the hash the plan was made with (a file changed since is refused, not saved)."""
    blobs: dict[str, str] = {}
    for path, form in uploads(plan):
        if content is None:
            raise ValueError(f"file {path}: a plan that uploads bytes is saved with its content")
        if form.sha256 in blobs:
            continue
        data = ContentFiles(content).source(path, form).read_bytes()
        if sha256_of(data) != form.sha256:
            raise PlanError(f"files/{path} changed while the plan was made; run `cmssync plan` again")
        blobs[form.sha256] = base64.b64encode(data).decode("ascii")
    return blobs


def decode_blobs(plan: Plan, encoded: Mapping[str, str], where: Path) -> SavedBlobs:
    """The bytes of every upload of ``plan`` from a plan file's ``blobs``, each checked (:func:`decode_blob`)."""
    return SavedBlobs({form.sha256: decode_blob(path, form, encoded, where) for path, form in uploads(plan)})


def decode_blob(path: str, form: FileForm, encoded: Mapping[str, str], where: Path) -> bytes:
    """The bytes the plan uploads for the content file ``path``, from a plan file's ``blobs``; ``PlanError`` naming
    the file when they are missing, not base64, or not the bytes the plan was made with (``form.sha256``)."""
    wanted = form.sha256
    text = encoded.get(wanted)
    if text is None:
        raise PlanError(f"{where}: the plan file holds no bytes for file {path} ({wanted}); nothing applied")
    try:
        data = base64.b64decode(text, validate=True)
    except (binascii.Error, ValueError):
        raise PlanError(f"{where}: the bytes of file {path} are not base64; nothing applied") from None
    found = sha256_of(data)
    if found != wanted:
        raise PlanError(
            f"{where}: the bytes of file {path} do not match the plan ({wanted}, the bytes hash to "
            f"{found}): the plan file was altered or damaged; nothing applied"
        )
    return data
