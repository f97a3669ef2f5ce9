"""The page title block: the page's name, or a custom title, in a heading."""

from cmssync.content.blocktypes.descriptor import BlockType, optional

TYPE = BlockType(
    "page_title",
    fields=(
        optional("useCustomTitle", "bool", default=False),
        optional("titleText", "text"),
        optional("formatting", "string", "The heading element, e.g. ``h1``.", default="h1"),
    ),
    edit_field="titleText",
)
