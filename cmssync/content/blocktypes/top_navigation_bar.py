"""The top navigation bar block: branding text and logos (``${file-id:…}``), menu and search options (``raw:
true``; block-types.jsonl ``types.top_navigation_bar``)."""

from cmssync.content.blocktypes.descriptor import BlockType

TYPE = BlockType("top_navigation_bar", edit_field="brandingText")
