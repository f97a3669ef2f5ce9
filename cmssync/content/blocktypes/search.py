"""The search block: a form and where it searches and shows results (``raw: true``).

Its controller ignores the path and results columns: it reads modes — ``baseSearchPath`` ``ALL`` / ``OTHER`` with
``searchUnderCID``, ``resultsPageKind`` ``CID`` / ``URL``, ``allowUserOptions`` ``ALLOW`` — which the write adds
(block-types.jsonl ``types.search.paths``).
"""

from collections.abc import Callable
from typing import Any

from cmssync.content.blocktypes.descriptor import BlockType


def _modes(value: dict[str, Any], page_id: Callable[[str], int | None]) -> dict[str, Any]:
    out = dict(value)
    path = str(value.get("baseSearchPath") or "")
    if str(value.get("search_all")) == "1":
        out["baseSearchPath"] = "ALL"
    elif path and page_id(path) is not None:
        out["baseSearchPath"], out["searchUnderCID"] = "OTHER", page_id(path)
    results = str(value.get("postTo_cID") or "0")
    if results.isdigit() and int(results):
        out["resultsPageKind"] = "CID"
    elif str(value.get("resultsURL") or ""):
        out["resultsPageKind"] = "URL"
    out["allowUserOptions"] = "ALLOW" if str(value.get("allow_user_options")) == "1" else ""
    return out


TYPE = BlockType("search", write=_modes, edit_field="buttonText")
