"""The horizontal rule block: no fields."""

from cmssync.content.blocktypes.descriptor import BlockType

TYPE = BlockType("horizontal_rule", modelled=True)
