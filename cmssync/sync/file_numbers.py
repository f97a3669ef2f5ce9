"""Numeric file ids, which Concrete's stored block forms need and its API never shows.

A download link is stored as ``{CCM:FID_DL_<n>}``, a picture as ``<concrete-picture fID="<n>" …/>`` and an image
column as the integer ``n``, where ``n`` is the file's numeric id. The REST API names files only by UUID (a numeric
``GET /files/<n>`` answers 404 for every 9.x file), and a UUID in those places is read back by its leading digits,
i.e. as another file (blocks.jsonl ``links.*``, ``filecol.*``). The one way the API tells numeric ids is the
export of a download link: a content block holding ``{CCM:FID_DL_1}`` … ``{CCM:FID_DL_250}`` reads back as
``{ccm:export:file:<prefix>:<name>}`` for every id that exists (``setup.probe_numeric_file_ids``).

So, when a block to be written refers to a file whose numeric id is not known yet, the page writer adds such a
probe block to an area no template renders (:data:`PROBE_AREA`) of the page's draft — the draft the write goes
into anyway — reads the answer and deletes the probe block again in the same draft: no extra version, nothing
visible. Ids are probed in batches of :data:`BATCH` from 1 upwards until every wanted file is found, a batch finds
no file at all (past the newest id; a run of :data:`BATCH` deleted files in a row would stop it early), or
:data:`MAX_ID` is reached. What was learned is kept for the rest of the run (one :class:`FileNumbers` per apply).

Limits: a file the probe does not find makes the write fail with a message naming it (the write never falls back
to a UUID, which would store a link to another file). If the answer to the probe's add is lost, its block may stay
in :data:`PROBE_AREA` of the draft: harmless, as no template renders that area.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable, Iterable

from cmssync.plan.references import file_numbers_from_probe, probe_html

PROBE_AREA = "cmssync file id probe"
BATCH = 250
MAX_ID = 20_000

Probe = Callable[[str], Awaitable[str]]
"""Writes a probe block with the given HTML to a page, returns the block's content as read back, removes it."""


class FileNumbers:
    """Export name (``<prefix>:<name>``) → numeric file id, learned by probing; safe for concurrent pages."""

    def __init__(self) -> None:
        self.known: dict[str, int] = {}
        self._probed_up_to = 0
        self._exhausted = False
        self._lock = asyncio.Lock()

    def missing(self, names: Iterable[str]) -> set[str]:
        return {name for name in names if name not in self.known}

    async def learn(self, names: Iterable[str], probe: Probe) -> set[str]:
        """Probe until every name is known (or nothing more can be found); returns the names still unknown."""
        async with self._lock:
            missing = self.missing(names)
            while missing and not self._exhausted:
                first = self._probed_up_to + 1
                html = await probe(probe_html(first, BATCH))
                found = file_numbers_from_probe(html)
                for name, number in found.items():
                    self.known.setdefault(name, number)
                self._probed_up_to += BATCH
                self._exhausted = not found or self._probed_up_to >= MAX_ID
                missing = self.missing(missing)
            return missing
