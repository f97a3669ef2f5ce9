"""The block types cmssync knows: one module per type in this package, each declaring one
:class:`~cmssync.content.blocktypes.descriptor.BlockType` named ``TYPE``.

This table is the only place a block type is named. Validation and the content models (``cmssync.content.blocks``),
desired-form rendering and reference translation (``cmssync.plan.desired``), comparison
(``cmssync.plan.normalize``), planning (``cmssync.plan.pages``) and ``pull`` read it; nothing else switches on a
type's handle. Adding a type is adding a module here (see ``docs/architecture.md``); modules are found by listing
the package, so no other file changes.

A type not in the table is unknown: content writes it ``raw: true``, and pull keeps it as a placeholder unless
``cmssync probe-block-type`` found it round-trips on the site (``cmssync.sync.probed_types``).
"""

from __future__ import annotations

from collections.abc import Mapping
from functools import cache

from cmssync.content.blocktypes.descriptor import BlockField, BlockType, FieldKind
from cmssync.declared import declared

__all__ = [
    "BlockField",
    "BlockType",
    "FieldKind",
    "block_type",
    "block_types",
    "keep_reason",
    "modelled_types",
    "uncreatable_types",
]


@cache
def block_types() -> Mapping[str, BlockType]:
    """Every declared type by handle, in handle order (found by listing this package)."""
    found: dict[str, BlockType] = {}
    for block_type in declared(__name__, __path__, "TYPE", BlockType):
        if block_type.handle in found:
            raise RuntimeError(f"block type {block_type.handle!r} is declared twice")
        found[block_type.handle] = block_type
    return dict(sorted(found.items()))


def block_type(handle: str) -> BlockType | None:
    return block_types().get(handle)


def modelled_types() -> tuple[BlockType, ...]:
    """Types with a content model (``- type: X`` and its fields), in handle order."""
    return tuple(t for t in block_types().values() if t.has_model)


def uncreatable_types() -> tuple[BlockType, ...]:
    return tuple(t for t in block_types().values() if t.uncreatable is not None)


def keep_reason(handle: str, value: object) -> str | None:
    """Why a block read as ``value`` must be pulled as a placeholder, or None when it can be pulled as content."""
    declared = block_type(handle)
    if declared is None:
        return f"cmssync has not verified that {handle} blocks round-trip through the API"
    if declared.keep_reason is not None:
        return declared.keep_reason
    if not isinstance(value, Mapping):
        return f"the API reads this {handle} block without a value"
    return declared.kept_when(value) if declared.kept_when is not None else None
