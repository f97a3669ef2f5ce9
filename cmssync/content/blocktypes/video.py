"""The video block: up to four files (``${file-id:…}``), a size and a title (``raw: true``; block-types.jsonl
``types.video``)."""

from cmssync.content.blocktypes.descriptor import BlockType

TYPE = BlockType("video", edit_field="title")
