"""The faq block: multi-record, read without its entries (blocks.jsonl ``multi.*``)."""

from cmssync.content.blocktypes.descriptor import BlockType

TYPE = BlockType("faq", keep_reason="the API reads faq blocks without their entries or settings")
