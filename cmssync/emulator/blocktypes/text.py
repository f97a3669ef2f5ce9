"""Text blocks: rich text, raw HTML, headings, a page attribute, a question (see :mod:`.model`)."""

from __future__ import annotations

import html
import json
from collections.abc import Callable, Mapping

from cmssync.emulator import markup
from cmssync.emulator.blocktypes.model import Args, BlockType, Where, flag, php_string

ENTRIES_KEY = "@entries"
"""Record key of a multi-record block's entries (a JSON list); never exported."""


def _content_save(args: Args, where: Where) -> Args:
    args["content"] = markup.translate_to(php_string(args.get("content")), where.base_url)
    return args


def _render_content(record: Mapping[str, str], expand: Callable[[str], str], page_name: str) -> str:
    """As the ``atomik`` theme's view of the block prints it: in a ``ccm-block-content`` wrapper."""
    return f'\n\n    \n<div class="ccm-block-content">\n    {expand(record["content"])}</div>\n\n'


def _render_content_core(record: Mapping[str, str], expand: Callable[[str], str], page_name: str) -> str:
    """As Concrete's own view prints it (a theme that overrides none, as ``elemental``): the HTML alone."""
    return expand(record["content"])


CORE_VIEWS = {"content": _render_content_core}
"""The block views of a theme that overrides none (a seed's ``block_views: core``), where they differ."""


def _render_html(record: Mapping[str, str], expand: Callable[[str], str], page_name: str) -> str:
    return f"\n\n    {record['content']}\n"


def _render_page_title(record: Mapping[str, str], expand: Callable[[str], str], page_name: str) -> str:
    """The page's name, unless the block has a custom title (or the page none)."""
    tag = record.get("formatting") or "h1"
    custom = record.get("useCustomTitle") == "1" or not page_name
    title = html.escape(record.get("titleText", "") if custom else page_name)
    return f'\n\n    <{tag} class="ccm-block-page-title page-title">{title}</{tag}>\n'


def _render_faq(record: Mapping[str, str], expand: Callable[[str], str], page_name: str) -> str:
    found = json.loads(record.get(ENTRIES_KEY, "[]"))
    items = "".join(
        f'<div class="ccm-faq-entry-content"><h3>{html.escape(e.get("title", ""))}</h3>{e.get("description", "")}</div>'
        for e in found
    )
    return f'\n\n    <div class="ccm-faq-container">{items}</div>\n'


def _survey_validate(args: Args) -> list[str | tuple[str, str]]:
    options = args.get("survivingOptionNames") or args.get("pollOption")
    return [] if options else [("Survey must have at least 1 answer.", "optionValue")]


TYPES = (
    BlockType("content", (("content", ""),), save=_content_save, render=_render_content),
    BlockType("html", (("content", ""),), render=_render_html),
    BlockType("horizontal_rule"),
    BlockType(
        "page_title",
        (
            ("useCustomTitle", "0"),
            ("useFilterTitle", "0"),
            ("useFilterTopic", "0"),
            ("useFilterTag", "0"),
            ("useFilterDate", "0"),
            ("topicTextFormat", ""),
            ("tagTextFormat", ""),
            ("dateTextFormat", ""),
            ("filterDateFormat", ""),
            ("titleText", ""),
            ("formatting", "h1"),
        ),
        render=_render_page_title,
    ),
    BlockType(
        "page_attribute_display",
        (
            ("attributeHandle", ""),
            ("attributeTitleText", ""),
            ("displayTag", "div"),
            ("dateFormat", ""),
            ("thumbnailHeight", "250"),
            ("thumbnailWidth", "250"),
            ("delimiter", "comma"),
        ),
    ),
    BlockType("switch_language", (("label", ""),)),
    BlockType(
        "survey",
        (("question", ""), ("requiresRegistration", "0"), ("showResults", "0"), ("customMessage", "")),
        required="customMessage",
        validate=_survey_validate,
        save=lambda args, where: {
            **args,
            "requiresRegistration": flag(args.get("requiresRegistration")),
            "showResults": flag(args.get("showResults")),
        },
    ),
    BlockType(
        "faq", (("blockTitle", ""),), entries=("sortOrder", "title", "linkTitle", "description"), render=_render_faq
    ),
    BlockType(
        "accordion",
        (("initialState", "closed"), ("itemHeadingFormat", "h2"), ("alwaysOpen", ""), ("flush", "")),
        entries=("title", "description"),
    ),
)
