"""Reading a plan file without holding its uploads' bytes: the plan's JSON apart from where each blob lies.

A plan file is one JSON object: the plan's fields and ``blobs`` (``sha256:<hex>`` → the bytes in base64). Parsed
whole, a plan with 109 MiB of uploads took 348 MB to apply (issue 37). :func:`split_plan_file` reads the file in
chunks and finds the structure only (braces, brackets, the ends of strings: a regular expression skips everything
else, base64 holds no quote or backslash), so it keeps the plan's JSON with ``blobs`` replaced by ``{}`` and, for
each blob, the byte span of its base64 text; :mod:`cmssync.sync.uploads` decodes each span from the file as a
stream. The plan's JSON is bounded (:data:`MAX_PLAN_BYTES`), so a plan file's size is that plus its uploads.
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterator
from pathlib import Path

from cmssync.errors import PlanError

CHUNK = 1 << 20
MAX_PLAN_BYTES = 256 << 20
"""The most a plan file may hold besides its uploads' bytes (a 10,000-page plan is a few tens of MiB)."""
_OUTSIDE = re.compile(rb'["{}\[\]]')
_INSIDE = re.compile(rb'["\\]')
BlobSpans = dict[str, tuple[int, int]]
"""A blob's key → the byte offsets of its base64 text in the plan file (start, end)."""


def split_plan_file(path: Path) -> tuple[bytes, BlobSpans]:
    """The plan file's JSON with its ``blobs`` emptied, and where each blob's text lies (see the module docstring);
    ``PlanError`` naming the file when the plan alone is too large or ``blobs`` is not an object of strings."""
    try:
        fd = os.open(path, os.O_RDONLY | getattr(os, "O_CLOEXEC", 0))
    except OSError as exc:
        raise PlanError(f"{path}: not a cmssync plan file ({exc})") from None
    try:
        size = os.fstat(fd).st_size
        value, spans = _blobs(fd, path)
        kept = size - (value[1] - value[0])
        if kept > MAX_PLAN_BYTES:
            raise PlanError(
                f"{path}: the plan holds {kept / (1 << 20):.0f} MiB besides its uploads' bytes, more than the "
                f"{MAX_PLAN_BYTES >> 20} MiB a plan file may hold; nothing applied"
            )
        if value == (0, 0):
            return _pread(fd, 0, size), spans
        return _pread(fd, 0, value[0]) + b"{}" + _pread(fd, value[1], size - value[1]), spans
    finally:
        os.close(fd)


def _blobs(fd: int, path: Path) -> tuple[tuple[int, int], BlobSpans]:
    """The span of the top-level ``blobs`` object ((0, 0) without one) and each of its values' spans."""
    depth = 0
    started = 0
    after_key = False  # the last event was the end of the top-level key "blobs"
    blobs: tuple[int, int] = (0, 0)
    inside = False
    key: str | None = None
    spans: BlobSpans = {}
    for event, at in _events(fd):
        if event == b'"':
            started = at
            continue
        if event == b"e":
            if depth == 1:
                after_key = at - started == 6 and _pread(fd, started + 1, 5) == b"blobs"
            elif inside and depth == 2:
                if key is None:
                    key = _pread(fd, started + 1, min(at - started - 1, 200)).decode("ascii", "replace")
                else:
                    spans[key], key = (started + 1, at), None
            continue
        if inside and depth == 2 and event in b"{[":
            raise PlanError(f"{path}: not a cmssync plan file (a blob is not a string)")
        if event in b"{[":
            if depth == 1 and after_key and event == b"{":
                inside, blobs = True, (at, at)
            depth += 1
        else:
            depth -= 1
            if inside and depth == 1:
                inside, blobs = False, (blobs[0], at + 1)
        after_key = False
    return blobs, spans


def _events(fd: int) -> Iterator[tuple[bytes, int]]:
    """The structure of a JSON document: ``{ } [ ]`` outside strings, ``"`` where a string starts and ``e`` where
    it ends (the offset of its closing quote)."""
    offset = 0
    in_string = escaped = False
    while chunk := os.read(fd, CHUNK):
        position = 0
        if escaped:  # the escaped character is the first of this chunk
            position, escaped = 1, False
        while (found := (_INSIDE if in_string else _OUTSIDE).search(chunk, position)) is not None:
            at = found.start()
            position = at + 1
            if in_string:
                if found.group() == b"\\":
                    if at + 1 >= len(chunk):
                        escaped = True
                        break
                    position = at + 2
                    continue
                in_string = False
                yield b"e", offset + at
                continue
            in_string = found.group() == b'"'
            yield found.group(), offset + at
        offset += len(chunk)


def _pread(fd: int, offset: int, length: int) -> bytes:
    parts: list[bytes] = []
    while length > 0:
        part = os.pread(fd, min(length, CHUNK), offset)
        if not part:
            break
        parts.append(part)
        offset, length = offset + len(part), length - len(part)
    return b"".join(parts)


def read_span(path: Path, span: tuple[int, int]) -> Iterator[bytes]:
    """The bytes of ``span`` of the file ``path``, in chunks."""
    start, end = span
    with path.open("rb") as handle:
        handle.seek(start)
        while start < end and (part := handle.read(min(CHUNK, end - start))):
            start += len(part)
            yield part
