"""The share this page block: kept as a placeholder (block-types.jsonl ``types.share_this_page.add``)."""

from cmssync.content.blocktypes.descriptor import BlockType

TYPE = BlockType(
    "share_this_page",
    keep_reason="the API reads share_this_page blocks without their services (value []), and writing that back "
    "fails (HTTP 500)",
)
