"""The feature block: an icon, a title, a paragraph, an optional image and link (``raw: true``).

Its controller keeps the page link only with ``linkType`` 1 and the external one only with 2, and clears both
otherwise (block-types.jsonl ``types.feature.linked`` / ``.external``), so the write adds ``linkType``.
"""

from typing import Any

from cmssync.content.blocktypes.descriptor import BlockType


def _with_link_type(value: dict[str, Any], page_id: Any) -> dict[str, Any]:
    page = str(value.get("internalLinkCID") or "0").strip()
    kind = 1 if page.isdigit() and int(page) else 2 if str(value.get("externalLink") or "") else 0
    return {**value, "linkType": kind}


TYPE = BlockType("feature", write=_with_link_type, edit_field="title")
