"""The accordion block: multi-record, read without its entries (blocks.jsonl ``multi.*``)."""

from cmssync.content.blocktypes.descriptor import BlockType

TYPE = BlockType("accordion", keep_reason="the API reads accordion blocks without their entries or settings")
