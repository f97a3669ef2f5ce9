"""The board block: multi-record, read without its entries (blocks.jsonl ``multi.*``)."""

from cmssync.content.blocktypes.descriptor import BlockType

TYPE = BlockType("board", keep_reason="the API reads board blocks without their entries or settings")
