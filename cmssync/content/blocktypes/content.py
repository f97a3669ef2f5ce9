"""The core rich-text block."""

from cmssync.content.blocktypes.descriptor import BlockType, required

TYPE = BlockType(
    "content",
    fields=(required("content", "rich_text", "Rich-text HTML; reference uploaded files with ``${file:PATH}``."),),
    rendered_wrapper='<div class="ccm-block-content">',
    edit_field="content",
)
