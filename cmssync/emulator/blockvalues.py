"""What a block controller does with a ``value``: save it into its table's columns, validate it, export it.

The real server copies only the keys that name a column of the block type's table, stores them as the database
would (so every value comes back as a string: ``true`` → ``"1"``, ``null`` → ``""``), rewrites links to the site in
``content`` blocks to ``{CCM:BASE_URL}`` and answers ``[]`` for types without a table. Adding a block does not
validate; updating one runs the controller's ``validate`` (the file block wants a file and a link text).
"""

from __future__ import annotations

import html
import json
import re
from typing import Any

from cmssync.emulator.catalog import BLOCK_COLUMNS, BLOCK_FILE_COLUMNS

BASE_URL_PLACEHOLDER = "{CCM:BASE_URL}"


def php_string(value: Any) -> str:
    """PHP's string conversion of a decoded JSON value, as a database column receives it."""
    if value is None or value is False:
        return ""
    if value is True:
        return "1"
    if isinstance(value, float):
        return str(int(value)) if value.is_integer() else repr(value)
    if isinstance(value, (list, dict)):
        return "Array"
    return str(value)


def save(block_type: str, value: dict[str, Any], base_url: str) -> dict[str, str] | None:
    """The stored record of a block: one string per column of the type's table (``None``: no table)."""
    columns = BLOCK_COLUMNS[block_type]
    if columns is None:
        return None
    record: dict[str, str] = {}
    for column, default in columns:
        record[column] = php_string(value[column]) if column in value else default
        if column in BLOCK_FILE_COLUMNS and record[column] in ("0", "0.0"):
            # A file column holds a file id; 0 means "no file" and exports as an empty string.
            record[column] = ""
    if block_type == "content":
        record["content"] = links_to_placeholders(record["content"], base_url)
    return record


def validate(block_type: str, value: dict[str, Any]) -> list[str]:
    """Messages of a failed ``validate()`` on block update (the real server answers them with HTTP 200)."""
    errors: list[str] = []
    if block_type == "file":
        if php_string(value.get("fID")) in ("", "0"):
            errors.append("You must select a file.")
        if php_string(value.get("fileLinkText")).strip() == "":
            errors.append("You must enter the link text.")
    elif block_type == "image" and php_string(value.get("fID")) in ("", "0"):
        errors.append("You must select an image.")
    elif block_type == "youtube" and php_string(value.get("videoURL")).strip() == "":
        errors.append("You must specify a video URL.")
    return errors


def links_to_placeholders(text: str, base_url: str) -> str:
    """``LinkAbstractor::translateTo``: absolute links into this site become ``{CCM:BASE_URL}…``."""
    base = base_url.rstrip("/")
    if not base:
        return text
    return text.replace(base + "/", BASE_URL_PLACEHOLDER + "/").replace(f'"{base}"', f'"{BASE_URL_PLACEHOLDER}"')


def placeholders_to_links(text: str, base_url: str) -> str:
    return text.replace(BASE_URL_PLACEHOLDER, base_url.rstrip("/"))


def render_html(block_type: str, record: dict[str, str] | None, base_url: str) -> str:
    """The HTML a block renders to, for the ``content`` includes (a plausible stand-in for the theme's view)."""
    if record is None:
        return f'\n\n    <div class="ccm-block-{block_type.replace("_", "-")}"></div>\n'
    if block_type == "content":
        body = placeholders_to_links(record["content"], base_url)
        return f'\n\n    \n<div class="ccm-block-content">\n    {body}</div>\n\n'
    if block_type == "html":
        return f"\n\n    {record['content']}\n"
    if block_type == "page_title":
        tag = record.get("formatting") or "h1"
        title = html.escape(record.get("titleText", ""))
        return f'\n\n    <{tag} class="ccm-block-page-title page-title">{title}</{tag}>\n'
    fields = json.dumps(record, sort_keys=True)
    return f'\n\n    <div class="ccm-block-{block_type.replace("_", "-")}" data-fields="{html.escape(fields)}"></div>\n'


_SCRIPT_OR_STYLE = re.compile(r"<(script|style)\b.*?</\1\s*>", re.IGNORECASE | re.DOTALL)


def clean_html(raw: str) -> str:
    """The ``content`` member of a Content object: the markup without scripts and styles, trimmed."""
    return _SCRIPT_OR_STYLE.sub("", raw).strip()
