"""The next/previous block: the labels of its links and their order (``raw: true``; block-types.jsonl
``types.next_previous``)."""

from cmssync.content.blocktypes.descriptor import BlockType

TYPE = BlockType("next_previous", edit_field="nextLabel")
