"""The YouTube block: a video URL and player options (``raw: true``; block-types.jsonl ``types.youtube``)."""

from cmssync.content.blocktypes.descriptor import BlockType

TYPE = BlockType("youtube", edit_field="title")
