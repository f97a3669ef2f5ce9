"""The raw HTML block."""

from cmssync.content.blocktypes.descriptor import BlockType, required

TYPE = BlockType("html", fields=(required("content", "text", "Raw HTML, output as it is."),), edit_field="content")
