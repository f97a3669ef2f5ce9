"""The page attribute display block: one attribute of the page, with a title (``raw: true``; block-types.jsonl
``types.page_attribute_display``)."""

from cmssync.content.blocktypes.descriptor import BlockType

TYPE = BlockType("page_attribute_display", edit_field="attributeTitleText")
