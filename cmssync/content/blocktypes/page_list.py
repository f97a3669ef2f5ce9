"""The page list block: which pages it lists and how (``raw: true``; the parent as ``${page-id:…}``, the page type
by handle).

Its controller sets the topic flags from ``topicFilter`` and compares the parent *strictly* with the page's own id
and its parent's id, so no parent is sent as ``""`` — a 0 equals the home page's parent and would turn on "under
this page's parent" (block-types.jsonl ``inplace.page_list``) — and a parent as the editor's "other page" choice
(``cParentID: OTHER`` + ``cParentIDValue``), which stores the id without comparing it.
"""

from collections.abc import Mapping
from typing import Any

from cmssync.content.blocktypes.descriptor import BlockType, optional


def _write(value: dict[str, Any], page_id: Any) -> dict[str, Any]:
    related, custom = str(value.get("filterByRelated")) == "1", str(value.get("filterByCustomTopic")) == "1"
    parent = str(value.get("cParentID") or "").strip()
    out = {**value, "topicFilter": "related" if related else "custom" if custom else "", "cParentID": ""}
    if parent.isdigit() and int(parent):
        # as the editor's "other page" choice: a bare id equal to the page's own parent would turn on cThisParent
        out.update(cParentID="OTHER", cParentIDValue=int(parent))
    return out


def _own_page(read: Mapping[str, Any]) -> str | None:
    """A list of the pages below the block's own page or its parent (``cThis`` / ``cThisParent``): ``save()`` sets
    those flags by comparing ids strictly, and through the API ``cThisParent`` came back off (observed on the
    ``elemental_full`` sample site's blog entries; not recorded), which would list other pages."""
    if str(read.get("cThis")) == "1" or str(read.get("cThisParent")) == "1":
        return "it lists the pages below its own page or its parent, which a write through the API does not keep"
    return None


TYPE = BlockType(
    "page_list",
    kept_when=_own_page,
    columns=(optional("ptID", "page_type", "The page type listed (its handle), or empty for any."),),
    write=_write,
    page_type_probe={"num": 1},  # save() reads ``num`` without a default (HTTP 500 without it)
    edit_field="pageListTitle",
)
