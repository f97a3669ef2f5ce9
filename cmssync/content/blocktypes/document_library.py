"""The document_library block: multi-record, read without its entries (blocks.jsonl ``multi.*``)."""

from cmssync.content.blocktypes.descriptor import BlockType

TYPE = BlockType(
    "document_library", keep_reason="the API reads document_library blocks without their entries or settings"
)
