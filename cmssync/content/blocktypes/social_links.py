"""The social links block: kept as a placeholder (block-types.jsonl ``types.social_links``)."""

from cmssync.content.blocktypes.descriptor import BlockType

TYPE = BlockType(
    "social_links",
    keep_reason="the API reads social_links blocks without their links (value []), and an update without links is "
    "refused",
)
