"""The survey block: kept as a placeholder (block-types.jsonl ``types.survey``)."""

from cmssync.content.blocktypes.descriptor import BlockType

TYPE = BlockType(
    "survey",
    keep_reason="the API reads survey blocks without their answers, and an update without answers is refused",
)
