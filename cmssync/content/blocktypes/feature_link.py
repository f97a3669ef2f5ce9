"""The feature link block: a title, a body and a button (``raw: true``). The button's link goes through the link
chooser, which the write adds from the three button columns (block-types.jsonl ``types.feature_link.linked``); the
API reads the button's page as a plain page id."""

from cmssync.content.blocktypes.descriptor import BlockType, link_chooser

TYPE = BlockType(
    "feature_link",
    write=lambda value, page_id: link_chooser(
        value, page="buttonInternalLinkCID", file="buttonFileLinkID", url="buttonExternalLink"
    ),
    edit_field="title",
)
