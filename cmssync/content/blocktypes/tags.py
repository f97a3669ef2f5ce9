"""The tags block: the page's tags or a tag cloud (``raw: true``; its target page as ``${page-id:…}``;
block-types.jsonl ``types.tags``)."""

from cmssync.content.blocktypes.descriptor import BlockType

TYPE = BlockType("tags", edit_field="title")
