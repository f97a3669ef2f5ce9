"""The hero image block: round-trips as ``raw: true`` (file columns as ``${file-id:…}``). Its button's link goes
through the link chooser, which the write adds from the three button columns (block-types.jsonl
``types.hero_image.linked``)."""

from cmssync.content.blocktypes.descriptor import BlockType, link_chooser

TYPE = BlockType(
    "hero_image",
    write=lambda value, page_id: link_chooser(
        value, page="buttonInternalLinkCID", file="buttonFileLinkID", url="buttonExternalLink"
    ),
    edit_field="title",
)
