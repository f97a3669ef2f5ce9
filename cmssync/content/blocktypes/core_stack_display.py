"""The stack display block: a stack shown in an area of a page, written ``value: {stack: <handle>}`` with the handle
of the stack's file (``stacks/<handle>.yaml``).

The API writes it with ``{"stID": <the stack's page id>}`` and reads it as ``value: []`` whatever it shows
(stack-displays.jsonl); only the page's rendering shows which stack that is, so ``cmssync.plan.stack_displays``
names it from there (the stack's own rendering found in the area's). A display whose stack cannot be told so (a
stack that renders nothing, or the same as another; one not read) is pulled as a ``keep:`` placeholder, with why.
"""

from collections.abc import Mapping
from typing import Any

from cmssync.content.blocktypes.descriptor import STACK_UNNAMED, BlockType, required


def _write(value: dict[str, Any], page_id: Any) -> dict[str, Any]:
    stack = str(value.get("stack", "")).strip()
    return {"stID": int(stack) if stack.isdigit() else stack}


def _unnamed(read: Mapping[str, Any]) -> str | None:
    if read.get("stack"):
        return None
    return str(read.get(STACK_UNNAMED) or "the stack it shows cannot be told from the page's rendering")


TYPE = BlockType(
    "core_stack_display",
    fields=(required("stack", "stack", "The stack shown: the handle of its file, stacks/<handle>.yaml."),),
    shows_stack="stack",
    kept_when=_unnamed,
    derived=frozenset({STACK_UNNAMED}),
    write=_write,
)
