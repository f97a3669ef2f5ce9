"""The testimonial block: a photo, a name, a position and company, a quote (``raw: true``; photo and award image as
``${file-id:…}``; block-types.jsonl ``types.testimonial*``)."""

from cmssync.content.blocktypes.descriptor import BlockType

TYPE = BlockType("testimonial", edit_field="name")
