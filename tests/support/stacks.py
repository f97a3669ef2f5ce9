"""A sandbox site with stacks (global areas) as the recorded sample site has them (stacks.jsonl): ``/!stacks/footer``
shown on every page as the global area "Footer", ``/!stacks/sidebar`` shown nowhere; the e2e and reliability tests
of stacks seed it."""

from __future__ import annotations

from typing import Any


def content_block(text: str) -> dict[str, Any]:
    """A content block of one paragraph, in the sandbox seed's form."""
    return {"type": "content", "value": {"content": f"<p>{text}</p>"}}


SEED: dict[str, Any] = {
    "pages": [
        {"path": "/", "name": "Home", "areas": {"Main": [content_block("Welcome")]}},
        {"path": "/about", "name": "About", "areas": {"Main": [content_block("About us")]}},
        {"path": "/dashboard", "name": "Dashboard", "type": False, "template": False, "id": 5},
        {"path": "/!stacks", "name": "Stacks", "type": False, "template": False, "id": 6},
        {
            "path": "/!stacks/footer",
            "name": "Footer",
            "type": "core_stack",
            "template": False,
            "id": 7,
            "areas": {"Main": [content_block("Footer text")]},
        },
        {
            "path": "/!stacks/sidebar",
            "name": "Sidebar",
            "type": "core_stack",
            "template": False,
            "id": 8,
            "areas": {"Main": [content_block("Sidebar text")]},
        },
    ],
    "global_areas": ["Footer"],
}
