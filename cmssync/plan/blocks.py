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

BlockValue = Mapping[str, str]
ValueMatcher = Callable[[BlockValue, BlockValue], bool]


@dataclass(frozen=True)
class LiveBlock:
    """A block as observed in the area of the page version being changed."""

    id: int
    type: str
    value: BlockValue = field(hash=False)


@dataclass(frozen=True)
class DesiredBlock:
    """A block as the content wants it."""

    type: str
    value: BlockValue = field(hash=False)


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
    """
    return all(live[key] == value for key, value in desired.items() if key in live)


def align_area(
    live: Sequence[LiveBlock],
    desired: Sequence[DesiredBlock],
    *,
    matches: ValueMatcher = values_match,
) -> AreaAlignment:
    """Choose the cheapest way to make ``live`` end as ``desired`` (see the module docstring)."""
    n, m = len(live), len(desired)
    # best[i][j] = (cost, deletes) of the cheapest way to finish when live[:i] is settled and desired[:j] has been
    # matched to kept live blocks: either keep going with live[i], or delete it. At i == n the rest is added.
    # Comparing (cost, deletes) tuples gives the tie-break "fewest deletes" for free.
    best: list[list[tuple[int, int]]] = [[(0, 0)] * (m + 1) for _ in range(n + 1)]
    for j in range(m + 1):
        best[n][j] = (m - j, 0)
    for i in range(n - 1, -1, -1):
        for j in range(m, -1, -1):
            cost, deletes = best[i + 1][j]
            option = (cost + 1, deletes + 1)
            kept = _keep_option(live[i], desired, j, best[i + 1], matches)
            best[i][j] = option if kept is None or option < kept else kept

    ops: list[BlockOp] = []
    j = 0
    for i, block in enumerate(live):
        kept = _keep_option(block, desired, j, best[i + 1], matches)
        if kept is not None and kept == best[i][j]:
            # Prefer keeping on a tie: this keeps the earliest live blocks among the optimal solutions.
            target = desired[j]
            if matches(block.value, target.value):
                ops.append(Keep(live_id=block.id, index=j))
            else:
                ops.append(Update(live_id=block.id, index=j, value=target.value, before=block.value))
            j += 1
        else:
            ops.append(Delete(live_id=block.id))
    ops.extend(Add(index=k, type=desired[k].type, value=desired[k].value) for k in range(j, m))
    alignment = AreaAlignment(tuple(ops))
    assert alignment.cost == best[0][0][0], "reconstruction must follow the optimum"
    return alignment


def _keep_option(
    block: LiveBlock,
    desired: Sequence[DesiredBlock],
    j: int,
    after: Sequence[tuple[int, int]],
    matches: ValueMatcher,
) -> tuple[int, int] | None:
    """(cost, deletes) of keeping ``block`` as ``desired[j]``, or None when it cannot be kept (no slot, other type)."""
    if j >= len(desired) or desired[j].type != block.type:
        return None
    cost, deletes = after[j + 1]
    return (cost + (0 if matches(block.value, desired[j].value) else 1), deletes)
