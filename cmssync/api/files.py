"""Files: list, read, upload (streamed from disk, or bytes a saved plan carries), update, move, delete, download.

Uploads are multipart with the file object handed to httpx, which reads and sends it in 64 KiB chunks: a file of any
size never sits in memory (tests/api check the peak). The file is reopened for each attempt. An upload is a create:
never retried after an ambiguous failure (``OutcomeUnknown``). ``move`` and the upload's ``folder`` are form fields
(a real server ignores a JSON body there). File ids are UUIDs on 9.x; the numeric id of a 9.x file does not resolve.

``sha256_at`` hashes a file's public bytes as they stream in (64 KiB at a time, nothing kept): it is how cmssync
proves that a site file holds the content's bytes before adopting it (``cmssync.sync.file_adoption``).
"""

from __future__ import annotations

import contextlib
import hashlib
import io
import mimetypes
import os
import tempfile
from collections.abc import AsyncIterator, Iterator, Mapping, Sequence
from pathlib import Path
from typing import IO, Any

from cmssync.api.models import DeleteResult, File
from cmssync.api.pagination import Endpoints, includes_param
from cmssync.api.retry import Kind


class _HashingSink(io.BytesIO):
    """A write-only sink that keeps the SHA-256 of what it is given, not the bytes (memory stays bounded).

    ``stream_to`` rewinds and truncates its sink before each attempt; here that starts the hash again.
    """

    def __init__(self) -> None:
        super().__init__()
        self._hash = hashlib.sha256()
        self.size = 0

    def write(self, data: Any, /) -> int:
        chunk = bytes(data)
        self._hash.update(chunk)
        self.size += len(chunk)
        return len(chunk)

    def seek(self, offset: int, whence: int = 0, /) -> int:
        if (offset, whence) != (0, 0):
            raise io.UnsupportedOperation("a hashing sink can only be rewound to its start")
        self._hash = hashlib.sha256()
        self.size = 0
        return 0

    def truncate(self, size: int | None = None, /) -> int:
        return 0

    def hexdigest(self) -> str:
        return self._hash.hexdigest()


class FilesApi(Endpoints):
    def iter_files(self, *, includes: Sequence[str] = (), limit: int = 100) -> AsyncIterator[File]:
        """Every file the acting user may see, newest first, each once (see pagination for the caveats)."""
        return self._walk(
            File, "/files", params=includes_param(tuple(includes)), limit=limit, sort_key=lambda item: item.date_added
        )

    async def latest_files(self, *, limit: int, after: str | None = None) -> list[File]:
        """The most recently added file versions (``GET /files``, newest first), one request: an upload or an
        update (a new version) moves a file to the top (``feed.files.*`` in ``lists.jsonl``)."""
        return await self._first_page(File, "/files", limit=limit, after=after)

    async def get_file(self, file_id: str, *, includes: Sequence[str] = ()) -> File:
        return await self._get(File, "/files/{file_id}", params=includes_param(tuple(includes)), file_id=file_id)

    async def upload_file(
        self,
        source: Path | bytes,
        *,
        folder_id: int | None = None,
        filename: str | None = None,
        content_type: str | None = None,
    ) -> File:
        """Upload ``source`` (a path, streamed; or bytes a saved plan carries, with their ``filename``) into a
        file-manager folder (``None``: the root folder)."""
        name = filename or (source.name if isinstance(source, Path) else "")
        if not name:
            raise ValueError("an upload of bytes needs its filename")
        mime = content_type or mimetypes.guess_type(name)[0] or "application/octet-stream"

        @contextlib.contextmanager
        def files() -> Iterator[Mapping[str, tuple[str, IO[bytes], str]]]:
            with source.open("rb") if isinstance(source, Path) else io.BytesIO(source) as handle:
                yield {"file": (name, handle, mime)}

        form = {"folder": str(folder_id)} if folder_id is not None else None
        return await self._one(File, "POST", "/files", kind=Kind.CREATE, form=form, upload=files)

    async def update_file(
        self,
        file_id: str,
        *,
        title: str | None = None,
        description: str | None = None,
        tags: Sequence[str] | str | None = None,
        attributes: Mapping[str, Any] | None = None,
    ) -> File:
        """Change a file's properties; ``tags`` as a list (sent newline separated, the form the server stores)."""
        body: dict[str, Any] = {}
        if title is not None:
            body["title"] = title
        if description is not None:
            body["description"] = description
        if tags is not None:
            body["tags"] = tags if isinstance(tags, str) else "\n".join(tags)
        if attributes is not None:
            body["attributes"] = dict(attributes)
        return await self._one(File, "PUT", "/files/{file_id}", kind=Kind.UPDATE, json=body, file_id=file_id)

    async def move_file(self, file_id: str, folder_id: int) -> File:
        """Move a file to a file-manager folder (by tree node id). Idempotent, so retried."""
        return await self._one(
            File, "POST", "/files/{file_id}/move", kind=Kind.UPDATE, form={"folder": str(folder_id)}, file_id=file_id
        )

    async def delete_file(self, file_id: str) -> DeleteResult:
        route = "/files/{file_id}"
        body = await self._t.call("DELETE", route, kind=Kind.DELETE, file_id=file_id)
        return self._deleted(body, file_id, "files", route)

    async def download_file(self, file: File | str, destination: Path) -> int:
        """Stream a file's bytes to ``destination`` (written atomically); returns the number of bytes.

        The bytes come from the file's public ``url`` (``tracked_url`` if it has none), without the bearer token.
        """
        record = file if isinstance(file, File) else await self.get_file(file)
        url = record.url or record.tracked_url
        if not url:
            raise ValueError(f"file {record.id} has no URL to download from")
        destination.parent.mkdir(parents=True, exist_ok=True)
        fd, temp = tempfile.mkstemp(prefix=f".{destination.name}.", suffix=".part", dir=destination.parent)
        try:
            with os.fdopen(fd, "wb") as sink:
                written = await self._t.stream_to(url, sink, route="/files/{file_id}/download")
            os.replace(temp, destination)
        except BaseException:
            with contextlib.suppress(OSError):
                os.unlink(temp)
            raise
        return written

    async def sha256_at(self, url: str) -> tuple[str, int]:
        """The SHA-256 (hex) and length of the bytes served at a file's public ``url``, streamed, never stored.

        Retried like a read (an interrupted attempt starts the hash again). No bearer token is sent.
        """
        sink = _HashingSink()
        await self._t.stream_to(url, sink, route="/files/{file_id}/download")
        return sink.hexdigest(), sink.size
