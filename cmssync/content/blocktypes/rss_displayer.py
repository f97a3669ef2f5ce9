"""The RSS displayer block: a feed URL and how many items to show (``raw: true``; block-types.jsonl
``types.rss_displayer``)."""

from cmssync.content.blocktypes.descriptor import BlockType

TYPE = BlockType(
    "rss_displayer",
    # the controller stores ``standardDateFormat`` (or ``customDateFormat``) as ``dateFormat``
    write=lambda value, page_id: {**value, "standardDateFormat": value.get("dateFormat", "")},
    edit_field="title",
)
