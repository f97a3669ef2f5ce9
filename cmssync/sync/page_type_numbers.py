"""Page-type ids, which a page list's (or date navigation's) page-type column stores and the API never shows.

The API reads such a column as ``{ccm:export:pagetype:<handle>}`` and offers no list of page types. The one way
to learn an id is to store a candidate and read the export back: a page list block with ``ptID = n`` answers
``{ccm:export:pagetype:<handle of n>}`` (block-types.jsonl ``setup.probe_page_type_ids.*``). But an id that no page
type has makes **every read of that block fail** (HTTP 500, ``Call to a member function getPageTypeHandle() on
null``), and the failed answer does not say which block to remove. So the probe never runs in a page that matters:
it creates a scratch page, moves it to the trash at once (trashed pages still take blocks; nothing public shows it
after that), adds one probe block per id from 1 upwards until an add fails (past the last id), and leaves the
scratch page in the trash. Done once per run, on the first write that needs it.
"""

from __future__ import annotations

import asyncio
import re
from collections.abc import Awaitable, Callable, Iterable

from cmssync.api.client import ConcreteClient
from cmssync.content.blocktypes import block_type, block_types
from cmssync.errors import ApiError
from cmssync.plan.page_form import BlockForm

MAX_ID = 100
Probe = Callable[[int], Awaitable[str | None]]
SCRATCH_NAME = "cmssync page type probe"
_EXPORT = re.compile(r"\{ccm:export:pagetype:([^{}]+)\}")


class PageTypeNumbers:
    """Page type handle → id, learned by probing (at most once per run); safe for concurrent pages."""

    def __init__(self) -> None:
        self.known: dict[str, int] = {}
        self.probed = False
        self._lock = asyncio.Lock()

    def missing(self, handles: Iterable[str]) -> set[str]:
        return {handle for handle in handles if handle and handle not in self.known}

    async def learn(self, handles: Iterable[str], make_probe: Callable[[], Awaitable[Probe]]) -> set[str]:
        """Probe ids 1, 2, … (``probe(n)``: the export read back, None when the add failed) until the ids run out,
        once per run (``make_probe`` is called only then); returns the handles still unknown."""
        async with self._lock:
            missing = self.missing(handles)
            if missing and not self.probed:
                self.probed = True
                probe = await make_probe()
                for number in range(1, MAX_ID + 1):
                    found = _EXPORT.fullmatch(await probe(number) or "")
                    if found is None:
                        break
                    self.known.setdefault(found.group(1), number)
            return self.missing(missing)


async def page_type_ids(
    numbers: PageTypeNumbers, block: BlockForm, client: ConcreteClient, parent_id: int, template: str | None
) -> dict[str, int]:
    """The page-type ids ``block``'s page-type columns need (learning them on a scratch page under ``parent_id``
    when not known yet); LookupError naming a handle no page type has."""
    declared = block_type(block.type)
    if declared is None:
        return {}
    handles = {str(block.value[c]).strip() for c in declared.columns_of("page_type") if c in block.value} - {""}
    if numbers.missing(handles):
        await numbers.learn(handles, lambda: scratch_probe(client, parent_id, template or "full"))
    unknown = numbers.missing(handles)
    if unknown:
        raise LookupError(f"no page type on the site has the handle {', '.join(sorted(unknown))}")
    return dict(numbers.known)


async def scratch_probe(
    client: ConcreteClient, parent_id: int, template: str
) -> Callable[[int], Awaitable[str | None]]:
    """A probe on a new page moved to the trash at once (see the module docstring)."""
    page = await client.create_page(parent_id=parent_id, name=SCRATCH_NAME, type="page", template=template)
    await client.delete_page(page.id)

    prober = next(t for t in block_types().values() if t.page_type_probe is not None)
    column, extra = min(prober.columns_of("page_type")), dict(prober.page_type_probe or {})

    async def probe(number: int) -> str | None:
        try:
            added = await client.add_block(page.id, "Main", type=prober.handle, value={**extra, column: number})
        except ApiError:
            return None
        return str(added.value.get(column, "")) if isinstance(added.value, dict) else None

    return probe
