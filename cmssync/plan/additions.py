"""Blocks an editor added to a managed area: shown as additions on the site and, by default, kept in place.

Pure. A managed area is the content's, but an editor may add a block to it in the page editor. Deleting such a
block as drift surprised people (nothing said so, the summary counted no delete), so by default cmssync *shares*
the area: a live block that is not one cmssync last applied is an addition on the site, kept where it is, left out
of the comparison and listed in the plan (:class:`~cmssync.plan.actions.SiteAdditions`). ``areas: owned`` in
``cmssync.yaml``, or ``areas_owned: true`` in a page file, says the content owns its areas: such blocks are then
deleted like any drift (and counted as block deletes in the summary).

Which live blocks are additions is decided against the page's base (what cmssync last applied, recorded in the
state): the base's blocks are matched, in order and by type, to the live blocks; the live blocks left over are the
additions. Of several ways to match, the one whose matched blocks hold the most values the content wants wins, so an
added block of the same type as its neighbours is told apart by its value. A page without a base (never applied
by cmssync, or an old state) has no additions: its areas are as written.

In cmssync's own unapproved draft (left by a run that was killed), only blocks the draft started from
(``PageRecord.draft_from``, journaled before the first write) can be an editor's: any other block there is one of
cmssync's own writes whose answer may have been lost, so it stays in the area and is aligned with the content —
matched to the block it was written for, or deleted as surplus — instead of being kept and written a second time.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Collection, Mapping, Sequence

from cmssync.content.paths import page_object
from cmssync.plan.actions import SiteAdditions
from cmssync.plan.blocks import DesiredBlock, LiveBlock, values_match
from cmssync.plan.snapshot import LivePage
from cmssync.state.records import AreaBase, PageBase


def without_additions(
    path: str,
    live: LivePage,
    desired: Mapping[str, Sequence[DesiredBlock]],
    base: PageBase,
    draft_from: Collection[int] | None = None,
) -> tuple[LivePage, list[SiteAdditions]]:
    """``live`` without the blocks editors added to its managed areas (``desired``: area → blocks), and those
    blocks as plan entries. ``draft_from``: ``live`` is cmssync's own draft, begun with these blocks (see the
    module docstring)."""
    areas = dict(live.areas)
    found: list[SiteAdditions] = []
    for area, wanted in desired.items():
        added = site_additions(live.blocks(area), base.areas.get(area), wanted)
        if draft_from is not None:
            added = tuple(block for block in added if block.id in draft_from)
        if added:
            ids = {block.id for block in added}
            areas[area] = tuple(block for block in live.blocks(area) if block.id not in ids)
            kind, key = page_object(path)
            blocks = tuple((block.type, block.id) for block in added)
            found.append(SiteAdditions(kind=kind, key=key, area=area, blocks=blocks))
    return (dataclasses.replace(live, areas=areas) if found else live), found


def site_additions(
    live: Sequence[LiveBlock], base: AreaBase | None, desired: Sequence[DesiredBlock]
) -> tuple[LiveBlock, ...]:
    """The blocks of ``live`` an editor added since cmssync last applied the area (see the module docstring)."""
    if base is None or len(live) <= len(base.shape):
        return ()
    score = _scorer(base, desired)
    best = _best_matching(live, len(base.shape), score)
    if best[0][0] < 0:
        return ()  # the live area no longer holds the base's blocks in order: not a case of additions
    added: list[LiveBlock] = []
    rows, cols = len(live), len(base.shape)
    i = j = 0
    while i < rows:
        worth = score(live[i], j) if j < cols else None
        if worth is not None and best[i + 1][j + 1] >= 0 and best[i][j] == best[i + 1][j + 1] + worth:
            i, j = i + 1, j + 1
        else:
            added.append(live[i])
            i += 1
    return tuple(added)


_Scorer = Callable[[LiveBlock, int], int | None]


def _scorer(base: AreaBase, desired: Sequence[DesiredBlock]) -> _Scorer:
    """The worth of matching a live block to base block ``index`` (None: impossible): 3 for a kept block on its own
    id or a block holding a value the content wants, 2 for another block of the base's type."""
    types = [entry[0] if entry else "" for entry in base.shape]
    kept_ids = {
        int(entry[1].removeprefix("keep:")) for entry in base.shape if len(entry) > 1 and entry[1].startswith("keep:")
    }
    wanted = {block.type: [b.value for b in desired if b.type == block.type and b.keep_id is None] for block in desired}

    def score(block: LiveBlock, index: int) -> int | None:
        if block.type != types[index]:
            return None
        entry = base.shape[index]
        if len(entry) > 1 and entry[1].startswith("keep:"):
            return 3 if block.id == int(entry[1].removeprefix("keep:")) else None
        if block.id in kept_ids:
            return None
        return 3 if any(values_match(block.value, value) for value in wanted.get(block.type, [])) else 2

    return score


def _best_matching(live: Sequence[LiveBlock], cols: int, score: _Scorer) -> list[list[int]]:
    """``best[i][j]``: the best total matching ``live[i:]`` to base blocks ``j:``, every base block matched (-1:
    impossible)."""
    rows = len(live)
    best = [[-1] * (cols + 1) for _ in range(rows + 1)]
    for i in range(rows, -1, -1):
        best[i][cols] = 0
        for j in range(cols - 1, -1, -1):
            if i == rows:
                continue
            skip = best[i + 1][j]
            worth = score(live[i], j)
            take = best[i + 1][j + 1] + worth if worth is not None and best[i + 1][j + 1] >= 0 else -1
            best[i][j] = max(skip, take)
    return best
