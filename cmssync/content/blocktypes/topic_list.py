"""The topic_list block: multi-record, read without its entries (blocks.jsonl ``multi.*``)."""

from cmssync.content.blocktypes.descriptor import BlockType

TYPE = BlockType("topic_list", keep_reason="the API reads topic_list blocks without their entries or settings")
