"""Block types as a fresh Concrete CMS 9.3.1 site (``atomik_full``) has them, one entry per type: its table, how its
ids export, what its controller does on save and on validate, how it renders (:class:`.model.BlockType`); and two
that a theme or package would add (:mod:`.theme`).

Recorded in ``blocks.jsonl`` and ``tests/conformance/concrete-9.3.1/block-types.jsonl`` (one round trip per type).
"""

from __future__ import annotations

from cmssync.emulator.blocktypes import listings, media, navigation, text, theme
from cmssync.emulator.blocktypes.model import BlockType, Where

__all__ = ["BLOCK_TYPES", "DATABASE_NAME", "LAYOUT_TYPES", "BlockType", "Where", "file_columns"]

BLOCK_TYPES: dict[str, BlockType] = {t.handle: t for m in (text, media, navigation, listings, theme) for t in m.TYPES}

#: Types whose ``add`` needs keys only their editors post; a failed add leaves an orphan block whose read is a 500.
LAYOUT_TYPES = frozenset({"core_area_layout", "core_container"})

#: The database the recorded site's SQL errors name.
DATABASE_NAME = "concrete_rec"


def file_columns() -> frozenset[str]:
    """Every column any type exports as a file (used to find the files a page refers to)."""
    return frozenset(column for t in BLOCK_TYPES.values() for column in (*t.files, *t.lenient_files))
