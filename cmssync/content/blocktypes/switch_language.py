"""The switch language block: a label (``raw: true``; block-types.jsonl ``types.switch_language``)."""

from cmssync.content.blocktypes.descriptor import BlockType

TYPE = BlockType("switch_language", edit_field="label")
