"""Optimal alignment of an area's live blocks with its desired blocks (design.md §5, "Blocks").

The API can do three things to an area: append a block at the **end**, change a block's value (never its type), and
delete a block. Blocks have no stable identity across versions, so an area is aligned by position and type. Whatever
we do, the area ends as *the live blocks we keep, in their original relative order, followed by the blocks we add*.
So a solution is: a number ``k``, a strictly increasing choice of ``k`` live blocks that become desired blocks
``0..k-1`` (each of matching type; updated in place when its value differs), every other live block deleted, and the
desired blocks ``k..m-1`` added in order. Its cost is the number of API calls: updates + deletes + adds.

:func:`align_area` finds a cheapest solution by dynamic programming over (live index, desired index) in
O(n·m) time and space. Ties are broken deterministically: lowest cost, then fewest deletes (more live blocks kept,
which also means fewer adds), then keep the earliest live blocks.

**Placeholders.** A desired block with ``keep_id`` (content ``- keep: {type: …, id: N}``) stands for live block
``N``, which must stay exactly as it is: it can only be matched with that live block (cost 0, never updated), that
live block can never be deleted, and a placeholder can never be added (the API cannot re-create what it reads
lossily). Because adds only append, desired blocks before a placeholder must be matched with live blocks before it;
when that is impossible :func:`align_area` raises :class:`AlignmentError` instead of planning a damaging change.
Placeholders for blocks that are not in the live area must be removed by the caller first (they cannot be honoured).

**Fast paths** (same result as the full search, proved by ``tests/sync/test_blocks.py``): an area whose live blocks
already are the desired ones, one for one (same count, same types, every value matching or every placeholder on its
own block), is the only solution of cost 0 and is returned without the search; that is every area of a no-op plan.
Otherwise each (live, desired) pair is compared at most once (the search and the reconstruction share the
answers), so an area of ``n`` and ``m`` blocks costs at most ``n·m`` value comparisons.

Values are compared with :func:`values_match`: a live block matches when every field the desired value names has
the same (normalised) value; fields the content does not name are not managed. The real server returns every column
of the block's table (an ``image`` block has fifteen), and content writes only the ones it cares about, so exact
equality would plan an update on every run. Values must be normalised (``cmssync.plan.normalize``) by the caller.

This module is pure: no I/O, and nothing from ``cmssync.api``.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import ClassVar

from cmssync.content.paths import page_named
from cmssync.plan.block_form import BlockForm
from cmssync.plan.canonical_html import same_html

BlockValue = Mapping[str, str]
ValueMatcher = Callable[[BlockValue, BlockValue], bool]


@dataclass(frozen=True, slots=True)
class LiveBlock:
    """A block as observed in the area of the page version being changed."""

    id: int
    type: str
    value: BlockValue = field(hash=False)


@dataclass(frozen=True)
class DesiredBlock:
    """A block as the content wants it; with ``keep_id``, a placeholder for that live block, left as it is."""

    type: str
    value: BlockValue = field(hash=False)
    keep_id: int | None = None
    index: int = field(default=0, compare=False)
    """Its index in the content's area."""
    form: BlockForm | None = field(default=None, compare=False, hash=False)
    """What apply writes for it (:mod:`cmssync.plan.block_form`)."""


class AlignmentError(ValueError):
    """The desired area cannot be reached without rewriting, deleting or re-creating a kept block."""


_IMPOSSIBLE = 10**9


@dataclass(frozen=True)
class Keep:
    """Live block ``live_id`` stays as it is and ends as desired block ``index``. Costs nothing."""

    live_id: int
    index: int
    cost: ClassVar[int] = 0


@dataclass(frozen=True)
class Update:
    """Change live block ``live_id``'s value to ``value`` (from ``before``); it ends as desired block ``index``."""

    live_id: int
    index: int
    value: BlockValue = field(hash=False)
    before: BlockValue = field(hash=False)
    cost: ClassVar[int] = 1


@dataclass(frozen=True)
class Delete:
    """Delete live block ``live_id``."""

    live_id: int
    cost: ClassVar[int] = 1


@dataclass(frozen=True)
class Add:
    """Append a new block at the end of the area; it ends as desired block ``index``."""

    index: int
    type: str
    value: BlockValue = field(hash=False)
    cost: ClassVar[int] = 1


BlockOp = Keep | Update | Delete | Add


@dataclass(frozen=True)
class AreaAlignment:
    """The operations that turn one live area into the desired one, in execution order.

    ``ops`` lists every live block once (as :class:`Keep`, :class:`Update` or :class:`Delete`, in live order),
    then the :class:`Add` operations in desired order. Executing them in that order leaves the area exactly as
    desired; reordering the adds would not.
    """

    ops: tuple[BlockOp, ...]

    @property
    def cost(self) -> int:
        """Number of API calls (updates + deletes + adds); approving the page version is not counted."""
        return sum(op.cost for op in self.ops)

    @property
    def changed(self) -> bool:
        """Whether the area needs any API call (and so the page needs a new version)."""
        return self.cost > 0

    @property
    def changes(self) -> tuple[Update | Delete | Add, ...]:
        """The operations that cost an API call, in execution order."""
        return tuple(op for op in self.ops if not isinstance(op, Keep))


def values_match(live: BlockValue, desired: BlockValue) -> bool:
    """True when every field of ``desired`` that the live block has holds the same value there.

    Extra live fields are ignored (the content manages only what it writes). Desired fields the live block lacks
    are ignored too: the server returns every column of a block's table and silently drops value keys that are not
    columns (concrete-api.md §7, ``performSave``), so such a key can never be stored and must not plan a change.

    Markup is compared in canonical form (``cmssync.plan.canonical_html``): an editor's re-serialisation of the
    same HTML is not a difference.
    """
    return all(same_html(live[key], value) for key, value in desired.items() if key in live)


def align_area(
    live: Sequence[LiveBlock],
    desired: Sequence[DesiredBlock],
    *,
    matches: ValueMatcher = values_match,
) -> AreaAlignment:
    """Choose the cheapest way to make ``live`` end as ``desired`` (see the module docstring).

    Raises :class:`AlignmentError` when placeholders make the desired order unreachable.
    """
    matches = _memoised(matches)
    if _unchanged(live, desired, matches):
        # Cost 0 with no delete and no add: the only optimum (any other solution deletes, updates or adds).
        return AreaAlignment(tuple(Keep(live_id=block.id, index=index) for index, block in enumerate(live)))
    return search_area(live, desired, matches)


def search_area(live: Sequence[LiveBlock], desired: Sequence[DesiredBlock], matches: ValueMatcher) -> AreaAlignment:
    """The dynamic programme of :func:`align_area`, without its fast path (the tests hold the two equal)."""
    best = _cheapest(live, desired, matches)
    if best[0][0][0] >= _IMPOSSIBLE:
        raise AlignmentError(_unreachable(live, desired))
    ops: list[BlockOp] = []
    j = 0
    for i, block in enumerate(live):
        kept = _keep_option(block, desired, j, best[i + 1], matches)
        if kept is not None and kept == best[i][j]:
            # Prefer keeping on a tie: this keeps the earliest live blocks among the optimal solutions.
            target = desired[j]
            if target.keep_id is not None or matches(block.value, target.value):
                ops.append(Keep(live_id=block.id, index=j))
            else:
                ops.append(Update(live_id=block.id, index=j, value=target.value, before=block.value))
            j += 1
        else:
            ops.append(Delete(live_id=block.id))
    ops.extend(Add(index=k, type=desired[k].type, value=desired[k].value) for k in range(j, len(desired)))
    alignment = AreaAlignment(tuple(ops))
    assert alignment.cost == best[0][0][0], "reconstruction must follow the optimum"
    return alignment


def _cheapest(
    live: Sequence[LiveBlock], desired: Sequence[DesiredBlock], matches: ValueMatcher
) -> list[list[tuple[int, int]]]:
    """``best[i][j]`` = (cost, deletes) of the cheapest way to finish when ``live[:i]`` is settled and
    ``desired[:j]`` has been matched to kept live blocks: either keep going with ``live[i]``, or delete it. At
    ``i == n`` the rest is added. Comparing (cost, deletes) tuples gives the tie-break "fewest deletes" for free.
    ``_IMPOSSIBLE`` marks states from which no solution respects the placeholders."""
    n, m = len(live), len(desired)
    pinned = {block.keep_id for block in desired if block.keep_id is not None}
    best: list[list[tuple[int, int]]] = [[(0, 0)] * (m + 1) for _ in range(n + 1)]
    for j in range(m + 1):
        addable = all(block.keep_id is None for block in desired[j:])
        best[n][j] = (m - j, 0) if addable else (_IMPOSSIBLE, 0)
    for i in range(n - 1, -1, -1):
        for j in range(m, -1, -1):
            cost, deletes = best[i + 1][j]
            option = (cost + 1, deletes + 1) if live[i].id not in pinned else (_IMPOSSIBLE, 0)
            kept = _keep_option(live[i], desired, j, best[i + 1], matches)
            best[i][j] = option if kept is None or option < kept else kept
            if best[i][j][0] >= _IMPOSSIBLE:
                best[i][j] = (_IMPOSSIBLE, 0)
    return best


def _unchanged(live: Sequence[LiveBlock], desired: Sequence[DesiredBlock], matches: ValueMatcher) -> bool:
    """Whether every live block already is its desired block, one for one, in order (so nothing is to be done)."""
    if len(live) != len(desired):
        return False
    for block, target in zip(live, desired, strict=True):
        if block.type != target.type:
            return False
        if target.keep_id is not None:
            if target.keep_id != block.id:
                return False
        elif not matches(block.value, target.value):
            return False
    return True


def _memoised(matches: ValueMatcher) -> ValueMatcher:
    """``matches`` answering each (live value, desired value) pair once: the search asks about every pair of the
    same type, and the reconstruction asks again along its path. Keyed by the values' identities, which the blocks
    keep alive for the whole alignment (two blocks sharing one value object share its answer, rightly)."""
    answers: dict[tuple[int, int], bool] = {}

    def memoised(live_value: BlockValue, desired_value: BlockValue) -> bool:
        key = (id(live_value), id(desired_value))
        found = answers.get(key)
        if found is None:
            found = answers[key] = matches(live_value, desired_value)
        return found

    return memoised


def _keep_option(
    block: LiveBlock,
    desired: Sequence[DesiredBlock],
    j: int,
    after: Sequence[tuple[int, int]],
    matches: ValueMatcher,
) -> tuple[int, int] | None:
    """(cost, deletes) of keeping ``block`` as ``desired[j]``, or None when it cannot be kept (no slot, other type,
    or a placeholder for another block)."""
    if j >= len(desired) or desired[j].type != block.type:
        return None
    cost, deletes = after[j + 1]
    if desired[j].keep_id is not None:
        return None if desired[j].keep_id != block.id else (cost, deletes)
    return (cost + (0 if matches(block.value, desired[j].value) else 1), deletes)


def _unreachable(live: Sequence[LiveBlock], desired: Sequence[DesiredBlock]) -> str:
    kept = [block.keep_id for block in desired if block.keep_id is not None]
    live_ids = [block.id for block in live]
    if any(k not in live_ids for k in kept):
        missing = next(k for k in kept if k not in live_ids)
        return f"kept block {missing} is not in the area (it cannot be re-created)"
    order = [k for k in live_ids if k in kept]
    if order != kept:
        return f"kept blocks are listed in the order {kept}, but the area holds them as {order} (blocks cannot move)"
    return (
        "a block placed before a kept block can only be added at the end of the area (the API only appends), "
        "and a kept block is never deleted and re-added; move the new block after the last kept block"
    )


def honourable(
    path: str, area: str, wanted: list[DesiredBlock], live_types: Mapping[int, str], warnings: list[str]
) -> list[DesiredBlock]:
    """The desired blocks without placeholders whose block is gone (they cannot be re-created): a warning each."""
    kept: list[DesiredBlock] = []
    for block in wanted:
        if block.keep_id is not None and live_types.get(block.keep_id) != block.type:
            found = live_types.get(block.keep_id)
            reason = "is not in this area" if found is None else f"is a {found} block"
            warnings.append(
                f"{page_named(path)}, area {area}: kept block {block.keep_id} ({block.type}) {reason}; the placeholder "
                "is ignored (the API cannot re-create such a block)"
            )
            continue
        kept.append(block)
    return kept
