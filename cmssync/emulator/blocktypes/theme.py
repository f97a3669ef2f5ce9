"""Block types a theme or a package adds, which a fresh ``atomik_full`` site does not have and cmssync does not
model: installed in the sandbox so ``cmssync probe-block-type`` and the content form it unlocks can be tested on
loopback (see :mod:`.model`).

* ``callout`` — a heading, a paragraph, a button label and a flag in one table; its ``save()`` stores the flag as
  ``0``/``1``. The block type the real-site suite installs on a 9.3.1 site (``tests/realsite/theme_blocks/``), as
  recorded in ``tests/conformance/concrete-9.3.1/theme-blocks.jsonl``: its read shows every column as a string, its
  value written back reads the same, a key that is no column is dropped, and the view escapes each text.
* ``countdown`` — a title and an end date; its ``validate()`` (run by the API's block update, never by an add)
  wants a ``timezone`` key that is no column, so its read written back is refused with HTTP 200 and the message,
  as the recorded one answers (``put.countdown.as_read``) and as ``google_map`` does without the site's key.
"""

from __future__ import annotations

import html
from collections.abc import Callable, Mapping

from cmssync.emulator.blocktypes.model import Args, BlockType, Where, flag


def _callout_save(args: Args, where: Where) -> Args:
    args["showIcon"] = int(flag(args.get("showIcon")))
    return args


def _render_callout(record: Mapping[str, str], expand: Callable[[str], str], page_name: str) -> str:
    button = record.get("buttonText", "")
    body = html.escape(record.get("body", "")).replace("\n", "<br />\n")
    return (
        f'\n<div class="cmssync-callout">\n    <h3>{html.escape(record.get("heading", ""))}</h3>\n'
        f"    <p>{body}</p>\n"
        + (f'    <span class="btn">{html.escape(button)}</span>' if button else "    ")
        + "</div>\n"
    )


def _countdown_validate(args: Args) -> list[str | tuple[str, str]]:
    return [] if args.get("timezone") else [("Choose a time zone.", "timezone")]


def _render_countdown(record: Mapping[str, str], expand: Callable[[str], str], page_name: str) -> str:
    end = html.escape(record.get("endDate", ""))
    return f'\n<div class="countdown" data-end="{end}">{html.escape(record.get("title", ""))}</div>\n'


TYPES = (
    BlockType(
        "callout",
        (("heading", ""), ("body", ""), ("buttonText", ""), ("showIcon", "0")),
        save=_callout_save,
        render=_render_callout,
    ),
    BlockType("countdown", (("title", ""), ("endDate", "")), validate=_countdown_validate, render=_render_countdown),
)
