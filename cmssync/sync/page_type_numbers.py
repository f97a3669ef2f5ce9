"""Page-type ids, which a page list's (or date navigation's) page-type column stores and the API never shows.

The API reads such a column as ``{ccm:export:pagetype:<handle>}`` and offers no list of page types. The one way
to learn an id is to store a candidate and read the export back: a page list block with ``ptID = n`` answers
``{ccm:export:pagetype:<handle of n>}`` (block-types.jsonl ``setup.probe_page_type_ids.*``). But an id that no page
type has makes **every read of that block fail** (HTTP 500, ``Call to a member function getPageTypeHandle() on
null``), and the failed answer does not say which block to remove. So the probe never runs in a page that matters:

* **One scratch page, reused.** It is created once per site — named :data:`SCRATCH_NAME`, under the page being
  written, moved to the trash at once (trashed pages still take blocks; nothing public shows it) — and its id is
  kept in the state (``SiteRecord.probe_page``), so every later run probes on the same page instead of leaving a new
  one behind. If that page is gone (the trash was emptied), a new one is made and recorded. Each probe block is
  deleted right after it is read, so the page holds no block between runs (but for one unreadable block when an id
  past the last page type was stored: the probe stops at the first failure).
* **Created with a page type the site has.** Sites built from other themes or starting points have other page types
  (none with the handle ``page``, perhaps), and the API lists none. The scratch page is created with a type and
  template pair a page of the site shows — first the page being written, then the most common pairs of the pages
  read — trying the next pair when the site refuses one.
* **Ids 1, 2, … until every handle wanted is known**, continued where it stopped when a later block wants another
  handle, up to the first id no page type has. Learned once per run.

A probe that cannot run (no pair is accepted, the scratch page cannot take a block) raises :class:`ProbeFailed`
with the site's reasons, for this and every later block of the run that needs it; it is never taken for "no page
type has this handle".
"""

from __future__ import annotations

import asyncio
import contextlib
import re
from collections import Counter
from collections.abc import Awaitable, Callable, Iterable

from cmssync.api.client import ConcreteClient
from cmssync.api.errors import NotFound
from cmssync.content.blocktypes import block_type, block_types
from cmssync.errors import ApiError
from cmssync.plan.block_form import BlockForm
from cmssync.plan.snapshot import LivePage
from cmssync.state.records import State

MAX_ID = 100
Probe = Callable[[int], Awaitable[str | None]]
SCRATCH_NAME = "cmssync page type probe"
_EXPORT = re.compile(r"\{ccm:export:pagetype:([^{}]+)\}")


class ProbeFailed(Exception):
    """The probe could not run: why (the site's answers)."""


class PageTypeNumbers:
    """Page type handle → id, learned by probing (see the module docstring); safe for concurrent pages."""

    def __init__(self) -> None:
        self.known: dict[str, int] = {}
        self.next_id = 1
        self.exhausted = False
        self.failure: str | None = None
        self._probe: Probe | None = None
        self._lock = asyncio.Lock()

    def missing(self, handles: Iterable[str]) -> set[str]:
        return {handle for handle in handles if handle and handle not in self.known}

    async def learn(self, handles: Iterable[str], make_probe: Callable[[], Awaitable[Probe]]) -> set[str]:
        """Probe ids from where the last probe stopped (``probe(n)``: the export read back, None when the add
        failed) until every handle is known or the ids run out (``make_probe`` is called once, when first needed);
        returns the handles still unknown. :class:`ProbeFailed` when the probe cannot run (said again on every
        call of the run)."""
        async with self._lock:
            missing = self.missing(handles)
            if not missing or self.exhausted:
                return missing
            if self.failure is not None:
                raise ProbeFailed(self.failure)
            if self._probe is None:
                try:
                    self._probe = await make_probe()
                except ProbeFailed as exc:
                    self.failure = str(exc)
                    raise
            while missing and self.next_id <= MAX_ID:
                found = _EXPORT.fullmatch(await self._probe(self.next_id) or "")
                if found is None:
                    self.exhausted = True
                    break
                self.known.setdefault(found.group(1), self.next_id)
                self.next_id += 1
                missing = self.missing(missing)
            return missing


async def page_type_ids(
    numbers: PageTypeNumbers, block: BlockForm, make_probe: Callable[[], Awaitable[Probe]]
) -> dict[str, int]:
    """The page-type ids ``block``'s page-type columns need (probing with ``make_probe`` when not known yet);
    LookupError naming a handle no page type has, :class:`ProbeFailed` when the probe cannot run."""
    declared = block_type(block.type)
    if declared is None:
        return {}
    handles = {str(block.value[c]).strip() for c in declared.columns_of("page_type") if c in block.value} - {""}
    if numbers.missing(handles):
        await numbers.learn(handles, make_probe)
    unknown = numbers.missing(handles)
    if unknown:
        raise LookupError(
            f"no page type on the site has the handle {', '.join(sorted(unknown))} (page types 1-"
            f"{numbers.next_id - 1} probed: {', '.join(sorted(numbers.known))})"
        )
    return dict(numbers.known)


def type_pairs(page: LivePage | None, pages: Iterable[LivePage]) -> list[tuple[str, str]]:
    """The (page type, template) pairs to create the scratch page with: ``page``'s own first, then those of
    ``pages``, most common first; only pairs a page of the site shows (a type and template of its own)."""
    counted = Counter((p.type, p.template) for p in pages if p.type and p.template)
    first = [(page.type, page.template)] if page is not None and page.type and page.template else []
    common = [(str(kind), str(template)) for (kind, template), _ in counted.most_common()]
    return list(dict.fromkeys([*first, *common]))


async def scratch_probe(
    client: ConcreteClient, state: State, parent_id: int, pairs: list[tuple[str, str]], save: Callable[[], None]
) -> Probe:
    """A probe on the site's scratch page (the state's, or a new one: see the module docstring); ``save`` writes
    the state once a new scratch page is recorded."""
    prober = next(t for t in block_types().values() if t.page_type_probe is not None)
    column, extra = min(prober.columns_of("page_type")), dict(prober.page_type_probe or {})
    recorded = state.site.probe_page if state.site is not None else None
    page_id = recorded if recorded is not None else await new_scratch_page(client, state, parent_id, pairs, save)

    async def add(number: int) -> str | None:
        added = await client.add_block(page_id, "Main", type=prober.handle, value={**extra, column: number})
        with contextlib.suppress(ApiError):  # not deleted: it stays on the scratch page, in the trash, unseen
            await client.delete_block(added.id)
        return str(added.value.get(column, "")) if isinstance(added.value, dict) else None

    async def probe(number: int) -> str | None:
        nonlocal page_id
        try:
            return await add(number)
        except NotFound:  # the recorded scratch page is gone (the trash was emptied): make a new one
            page_id = await new_scratch_page(client, state, parent_id, pairs, save)
        except ApiError:
            return None
        try:
            return await add(number)
        except ApiError:
            return None

    return probe


async def new_scratch_page(
    client: ConcreteClient,
    state: State,
    parent_id: int,
    pairs: list[tuple[str, str]],
    save: Callable[[], None],
    *,
    failing: str = "page-type ids cannot be learned",
) -> int:
    """A new scratch page under ``parent_id`` (the first of ``pairs`` the site takes), trashed at once and recorded
    as the state's ``site.probe_page``; :class:`ProbeFailed` with the site's reasons when every pair is refused,
    saying first what ``failing`` (the probe that needed it)."""
    reasons: list[str] = []
    for page_type, template in pairs:
        try:
            page = await client.create_page(parent_id=parent_id, name=SCRATCH_NAME, type=page_type, template=template)
        except ApiError as exc:
            reasons.append(f"type {page_type} with template {template}: {exc}")
            continue
        await client.delete_page(page.id)
        state.record_probe_page(page.id)
        save()
        return page.id
    if not pairs:
        raise ProbeFailed(
            f"{failing}: no page read in this run shows a page type and template to create the scratch page with "
            "(run a full plan or apply)"
        )
    raise ProbeFailed(
        f"{failing}: the site refused the scratch page of the probe with every page type and template its pages "
        f"show ({'; '.join(reasons)})"
    )
