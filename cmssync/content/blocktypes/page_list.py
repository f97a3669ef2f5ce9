"""The page list block: which pages it lists and how (``raw: true``; the parent as ``${page-id:…}``, the page type
by handle).

Its controller sets the topic flags from ``topicFilter`` and compares the parent *strictly* with the page's own id
and its parent's id, so no parent is sent as ``""`` — a 0 equals the home page's parent and would turn on "under
this page's parent" (block-types.jsonl ``inplace.page_list``).
"""

from typing import Any

from cmssync.content.blocktypes.descriptor import BlockType, optional


def _write(value: dict[str, Any], page_id: Any) -> dict[str, Any]:
    related, custom = str(value.get("filterByRelated")) == "1", str(value.get("filterByCustomTopic")) == "1"
    parent = str(value.get("cParentID") or "").strip()
    return {
        **value,
        "topicFilter": "related" if related else "custom" if custom else "",
        "cParentID": int(parent) if parent.isdigit() and int(parent) else "",
    }


TYPE = BlockType(
    "page_list",
    columns=(optional("ptID", "page_type", "The page type listed (its handle), or empty for any."),),
    write=_write,
    page_type_probe={"num": 1},  # save() reads ``num`` without a default (HTTP 500 without it)
    edit_field="pageListTitle",
)
