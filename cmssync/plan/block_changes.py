"""An area's alignment (:func:`cmssync.plan.blocks.align_area`) as the plan's block changes.

Pure. Used by the planner for an existing page and by apply for a new page whose page type placed default blocks
(``cmssync.sync.type_defaults``): one way from an alignment to ``BlockChange``s.
"""

from __future__ import annotations

from collections.abc import Sequence

from cmssync.plan.actions import BlockChange
from cmssync.plan.blocks import Add, AreaAlignment, Delete, DesiredBlock, LiveBlock, Update


def alignment_changes(
    area: str, live: Sequence[LiveBlock], wanted: Sequence[DesiredBlock], alignment: AreaAlignment
) -> list[BlockChange]:
    """Updates and adds carry the desired block's write form and its index in the content's area; updates and
    deletes the live block's id and index; ``before`` is what the live block holds (for reviews)."""
    positions = {block.id: index for index, block in enumerate(live)}
    by_id = {block.id: block for block in live}
    changes: list[BlockChange] = []
    for op in alignment.changes:
        if isinstance(op, Update):
            before = {key: op.before.get(key, "") for key in op.value}
            changes.append(desired_change(area, wanted[op.index], by_id[op.live_id], positions[op.live_id], before))
        elif isinstance(op, Add):
            changes.append(desired_change(area, wanted[op.index]))
        elif isinstance(op, Delete):
            gone = by_id[op.live_id]
            changes.append(
                BlockChange(
                    area=area,
                    op="delete",
                    live_position=positions[op.live_id],
                    block_type=gone.type,
                    block_id=gone.id,
                    before=dict(gone.value),
                )
            )
    return changes


def desired_change(
    area: str,
    block: DesiredBlock,
    live: LiveBlock | None = None,
    live_position: int | None = None,
    before: dict[str, str] | None = None,
) -> BlockChange:
    """An add of ``block`` or, given the ``live`` block it starts from, an update of that block to it."""
    return BlockChange(
        area=area,
        op="add" if live is None else "update",
        position=block.index,
        live_position=live_position,
        block_type=block.type if live is None else live.type,
        block_id=None if live is None else live.id,
        before=before,
        after=dict(block.value),
        write=block.form,
    )
