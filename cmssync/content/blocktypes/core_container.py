"""The container block: a theme container whose own areas are sub-areas (``Main : 10 : Title``)."""

from cmssync.content.blocktypes.descriptor import BlockType

TYPE = BlockType(
    "core_container",
    keep_reason="the API reads core_container blocks without their entries or settings",
    # Concrete answers 500 (``Undefined array key "containerID"``), blocks.jsonl ``layout.add.*``.
    uncreatable="the API cannot create a core_container block (Concrete answers 500)",
    holds_areas="named",
)
