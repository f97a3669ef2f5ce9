"""A sandbox site with a second locale tree (de_DE): pages, a stack and a global area in each tree."""

from __future__ import annotations

from typing import Any


def _content(text: str) -> dict[str, Any]:
    return {"type": "content", "value": {"content": f"<p>{text}</p>"}}


SEED: dict[str, Any] = {
    "pages": [
        {"path": "/", "name": "Home", "areas": {"Main": [_content("Welcome")]}},
        {"path": "/about", "name": "About", "areas": {"Main": [_content("About us"), _content("Our story")]}},
        {"path": "/about/team", "name": "Team", "areas": {"Main": [_content("The team")]}},
        {"path": "/!stacks", "name": "Stacks", "type": False, "template": False, "id": 20},
        {
            "path": "/!stacks/footer",
            "name": "Footer",
            "type": "core_stack",
            "template": False,
            "id": 21,
            "areas": {"Main": [_content("Footer text")]},
        },
    ],
    "global_areas": ["Footer"],
    "locales": [{"locale": "de_DE"}],
}
