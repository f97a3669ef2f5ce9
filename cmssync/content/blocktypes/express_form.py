"""The express form block: which form (by its UUID), its labels and notifications (``raw: true``). An empty redirect
page must be sent as 0, not ``""`` (an SQL error; block-types.jsonl ``types.express_form``)."""

from cmssync.content.blocktypes.descriptor import BlockType

TYPE = BlockType(
    "express_form",
    write=lambda value, page_id: {**value, "redirectCID": str(value.get("redirectCID") or "") or "0"},
    edit_field="submitLabel",
)
