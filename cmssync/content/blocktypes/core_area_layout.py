"""The layout block: a grid whose columns are sub-areas (``Main : 16``, one number per column)."""

from cmssync.content.blocktypes.descriptor import BlockType

TYPE = BlockType(
    "core_area_layout",
    keep_reason="the API reads core_area_layout blocks without their entries or settings",
    # Concrete answers 500 (``Undefined array key "gridType"``): its save() needs data only the page editor sends
    # (blocks.jsonl ``layout.add.*``).
    uncreatable="the API cannot create a core_area_layout block (Concrete answers 500)",
    holds_areas="columns",
)
