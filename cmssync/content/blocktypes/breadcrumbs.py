"""The breadcrumbs block: three flags (``raw: true``; block-types.jsonl ``types.breadcrumbs``)."""

from cmssync.content.blocktypes.descriptor import BlockType

TYPE = BlockType("breadcrumbs")
