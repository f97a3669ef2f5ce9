"""The date navigation block: archive links by month (``raw: true``; parent and target pages as ``${page-id:…}``,
the page type by handle; block-types.jsonl ``types.date_navigation``)."""

from cmssync.content.blocktypes.descriptor import BlockType, optional

TYPE = BlockType(
    "date_navigation",
    columns=(optional("ptID", "page_type", "The page type listed (its handle), or empty for any."),),
    edit_field="title",
)
