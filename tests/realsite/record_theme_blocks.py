"""Record how the REST API reads and writes block types a theme or package adds (issue 36 item 3, what
``cmssync probe-block-type`` relies on): ``python -m tests.realsite.record_theme_blocks ENV_FILE OUT`` (OUT:
``tests/conformance/concrete-9.3.1/theme-blocks.jsonl``).

Opt-in, against a freshly reset real Concrete 9.3.1 site of ``../shared/realsite/``; the env file must name
``CONCRETE_SITE_DIR`` (``php`` on the path): the two block types of ``theme_blocks/`` are installed first
(:func:`tests.realsite.harness.install_block_type`) — ``callout`` (a heading, a paragraph, a button label, a flag
its ``save()`` stores as 0/1) and ``countdown`` (a title and an end date; its ``validate()`` wants a ``timezone`` key
that is no column). One scenario, ``theme-blocks``, in order:

* ``add.*``: a page under home; a callout (``showIcon: 1``, a body with a line break) and a countdown (with
  ``timezone``) added; approval.
* ``read.*``: each block (``GET /blocks/{id}``); the page with ``areas``.
* ``put.callout.*``: the value exactly as read; with ``heading`` changed; with ``showIcon: "0"``; with a key that is
  no column (``colour``).
* ``put.countdown.*``: the value exactly as read (refused: its validation); with ``timezone`` added.
* ``public``: approval, the public page (the note says what the blocks render).
* ``odd.*``: an add of a type no one installed (``callout_pro``); the callout deleted (``DELETE /blocks/{id}``) and
  read again.
"""

from __future__ import annotations

import html
import re
import sys
from pathlib import Path
from typing import Any

from tests.realsite.harness import install_block_type
from tests.realsite.record_lists import PREFIX, Recorder, record

CALLOUT = {"heading": "Questions? Call us", "body": "We answer on weekdays\nfrom 9 to 5.", "buttonText": "Call"}
THEME_TYPES = ("callout", "countdown")


def rendered(page_html: str) -> str:
    """What a public page shows of the theme's blocks: each callout's heading, paragraph and button, each
    countdown's end date and title (markup and whitespace aside)."""
    found = []
    for block in re.findall(r'<div class="cmssync-callout">(.*?)</div>', page_html, re.S):
        parts = re.findall(r"<(h3|p|span)[^>]*>(.*?)</\1>", block, re.S)
        texts = [" ".join(html.unescape(re.sub(r"<[^>]+>", "", part)).split()) for _, part in parts]
        found.append("callout " + " | ".join(texts))
    for end, title in re.findall(r'<div class="countdown" data-end="([^"]*)">([^<]*)</div>', page_html):
        found.append(f"countdown {html.unescape(end)} {html.unescape(title)}")
    return "; ".join(found)


class ThemeBlockRecorder(Recorder):
    def install(self) -> None:
        for handle in THEME_TYPES:
            install_block_type(Path(self.env["CONCRETE_SITE_DIR"]), handle)

    def put(self, step: str, page: int, block: int, value: dict[str, Any]) -> int:
        """A block update; the id the block has afterwards (a new one after an approval)."""
        answer = self.call(step, "PUT", f"{PREFIX}/pages/{page}/Main/{block}", json={"value": value}).json()
        data = answer.get("data") if isinstance(answer, dict) else None
        return int(data["id"]) if isinstance(data, dict) and "id" in data else block

    def run(self) -> None:
        self.scenario = "theme-blocks"
        self.install()
        page_id, path = self.new_page("add.page", "Theme Blocks")
        body = {"type": "callout", "value": {**CALLOUT, "showIcon": 1}}
        callout = self.call("add.callout", "POST", f"{PREFIX}/pages/{page_id}/Main", json=body).json()["data"]["id"]
        body = {"type": "countdown", "value": {"title": "Launch in", "endDate": "2027-01-01", "timezone": "UTC"}}
        countdown = self.call("add.countdown", "POST", f"{PREFIX}/pages/{page_id}/Main", json=body).json()["data"]["id"]
        self.approve_recent("add.approve", page_id)
        read = self.call("read.callout", "GET", f"{PREFIX}/blocks/{callout}").json()["data"]["value"]
        counted = self.call("read.countdown", "GET", f"{PREFIX}/blocks/{countdown}").json()["data"]["value"]
        self.call("read.areas", "GET", f"{PREFIX}/pages/{page_id}", params={"includes": "areas"})
        callout = self.put("put.callout.as_read", page_id, callout, read)
        self.call("put.callout.as_read.read", "GET", f"{PREFIX}/blocks/{callout}")
        changed = {**read, "heading": "Talk to us"}
        callout = self.put("put.callout.changed", page_id, callout, changed)
        callout = self.put("put.callout.flag_off", page_id, callout, {**changed, "showIcon": "0"})
        callout = self.put("put.callout.extra_key", page_id, callout, {**changed, "colour": "red"})
        self.call("put.callout.read", "GET", f"{PREFIX}/blocks/{callout}")
        countdown = self.put("put.countdown.as_read", page_id, countdown, counted)
        countdown = self.put("put.countdown.timezone", page_id, countdown, {**counted, "timezone": "UTC"})
        self.call("put.countdown.read", "GET", f"{PREFIX}/blocks/{countdown}")
        self.approve_recent("public.approve", page_id)
        self.guest_page("public.page", path, rendered)
        body = {"type": "callout_pro", "value": dict(CALLOUT)}
        self.call("odd.uninstalled_type", "POST", f"{PREFIX}/pages/{page_id}/Main", json=body)
        self.call("odd.delete", "DELETE", f"{PREFIX}/blocks/{callout}")
        self.call("odd.read_deleted", "GET", f"{PREFIX}/blocks/{callout}")


if __name__ == "__main__":
    sys.exit(record(sys.argv[1:], ThemeBlockRecorder, ThemeBlockRecorder.run))
