"""The gallery block: multi-record, read without its entries (blocks.jsonl ``multi.*``)."""

from cmssync.content.blocktypes.descriptor import BlockType

TYPE = BlockType("gallery", keep_reason="the API reads gallery blocks without their entries or settings")
