"""A sandbox installation with two sites (Concrete 9's multisite, as ``sites.jsonl`` recorded it on a real 9.3.1
install): the default site and ``second``, whose pages share paths with the default site's (``/about`` in both).
Requests whose host is ``second.localhost`` are about the second site (``GET /pages``, public pages)."""

from __future__ import annotations

from typing import Any

from tests.support.locale_trees import SEED as LOCALE_SEED

SECOND_HOST = "second.localhost"


def _content(text: str) -> dict[str, Any]:
    return {"type": "content", "value": {"content": f"<p>{text}</p>"}}


SEED: dict[str, Any] = {
    **{key: LOCALE_SEED[key] for key in ("pages", "global_areas")},  # the default site: the one-locale sample
    "sites": [
        {
            "handle": "second",
            "name": "Second Site",
            "host": SECOND_HOST,
            "pages": [
                {"path": "/", "name": "Second Site", "areas": {"Main": [_content("Welcome to Second Site.")]}},
                {"path": "/about", "name": "About", "areas": {"Main": [_content("About of Second Site.")]}},
                {"path": "/contact", "name": "Contact", "areas": {"Main": [_content("Contact of Second Site.")]}},
            ],
        }
    ],
}


def host_of(url: str, host: str = SECOND_HOST) -> str:
    """The ``Host`` header that makes a request to the sandbox at ``url`` about the site ``host``."""
    return f"{host}:{url.rsplit(':', 1)[1].split('/')[0]}"
