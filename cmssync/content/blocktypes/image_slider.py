"""The image_slider block: multi-record, read without its entries (blocks.jsonl ``multi.*``)."""

from cmssync.content.blocktypes.descriptor import BlockType

TYPE = BlockType("image_slider", keep_reason="the API reads image_slider blocks without their entries or settings")
