"""What a block controller does with a ``value``: save it into its table's columns, validate it, render it.

The real server copies only the keys that name a column of the block type's table and stores them as the database
would (so every value comes back as a string: ``true`` → ``"1"``, ``null`` → ``""``); ``content`` blocks go through
``LinkAbstractor::translateTo`` (:mod:`cmssync.emulator.markup`); types without a table answer ``[]``. Integer file
columns are cast the way each controller does it (``blocks.jsonl``, ``filecol.*``): ``image`` hands its ``fID`` to
the database as sent, so anything but a whole number is an SQL error (HTTP 500), while ``hero_image`` casts a value
that is not a whole number to 0 ("no image"). Layouts and containers cannot be added through the API: their
controllers read keys only their editors post (HTTP 500). Multi-record types keep their entries (sent as parallel
arrays) beside the record; the API never shows them. Adding a block does not validate; updating one runs the
controller's ``validate``.
"""

from __future__ import annotations

import html
import json
import re
from typing import Any

from cmssync.emulator import markup
from cmssync.emulator.blocktypes import (
    BLOCK_COLUMNS,
    DATABASE_NAME,
    ENTRY_FIELDS,
    LAYOUT_REQUIRED_KEY,
    LENIENT_FILE_COLUMNS,
    STRICT_FILE_COLUMNS,
)

BASE_URL_PLACEHOLDER = markup.BASE_URL_PLACEHOLDER
#: Record key of a multi-record block's entries (a JSON list); never exported.
ENTRIES_KEY = "@entries"
_WHOLE_NUMBER = re.compile(r"^-?\d+$")


class LayoutKeyError(Exception):
    """A layout or container added without the key its controller reads (``Undefined array key``)."""

    def __init__(self, key: str) -> None:
        super().__init__(f'Undefined array key "{key}"')
        self.key = key


class ColumnError(Exception):
    """The database refused a value for an integer column; :meth:`message` is the Doctrine message."""

    def __init__(self, block_type: str, value: Any, params: list[Any]) -> None:
        super().__init__(block_type)
        self.block_type = block_type
        self.value = value
        self.params = params

    def message(self, block_id: int, *, update: bool) -> str:
        table, column, columns = STRICT_FILE_COLUMNS[self.block_type]
        if update:
            command = "UpdatePageBlockCommand"
            sets = ", ".join(f"{c} = ?" for c in ("bID", *columns))
            sql, params = f"UPDATE {table} SET {sets} WHERE bID = ?", [block_id, *self.params, block_id]
        else:
            command = "AddBlockToPageCommand"
            names = ", ".join(("bID", *columns))
            marks = ", ".join("?" for _ in range(len(columns) + 1))
            sql, params = f"INSERT INTO {table} ({names}) VALUES ({marks})", [block_id, *self.params]
        text = php_string(self.value)
        if markup.leading_number(text) or text[:1] == "0":
            cause = f"SQLSTATE[01000]: Warning: 1265 Data truncated for column '{column}' at row 1"
        else:
            cause = (
                f"SQLSTATE[22007]: Invalid datetime format: 1366 Incorrect integer value: '{text}' for column "
                f"`{DATABASE_NAME}`.`{table}`.`{column}` at row 1"
            )
        listed = ", ".join(json.dumps(p, ensure_ascii=False) for p in params)
        return (
            f'Handling "Concrete\\Core\\Block\\Command\\{command}" failed: An exception occurred while executing '
            f"'{sql}' with params [{listed}]: {cause}"
        )


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


def _is_whole_number(value: Any) -> bool:
    if isinstance(value, bool):
        return False
    return isinstance(value, int) or (isinstance(value, str) and bool(_WHOLE_NUMBER.match(value.strip())))


def save(block_type: str, value: dict[str, Any], base_url: str) -> dict[str, str] | None:
    """The stored record of a block: one string per column of the type's table (``None``: no table).

    Raises :class:`LayoutKeyError` or :class:`ColumnError` where the real controller fails.
    """
    if block_type in LAYOUT_REQUIRED_KEY and LAYOUT_REQUIRED_KEY[block_type] not in value:
        raise LayoutKeyError(LAYOUT_REQUIRED_KEY[block_type])
    columns = BLOCK_COLUMNS[block_type]
    if columns is None:
        return None
    record: dict[str, str] = {}
    for column, default in columns:
        record[column] = php_string(value[column]) if column in value else default
    if block_type in STRICT_FILE_COLUMNS:
        _strict_file_column(block_type, value, record)
    for column in LENIENT_FILE_COLUMNS.get(block_type, frozenset()):
        raw = value.get(column, "")
        record[column] = str(int(str(raw).strip())) if _is_whole_number(raw) else "0"
    if block_type == "content":
        record["content"] = markup.translate_to(record["content"], base_url)
    if block_type in ENTRY_FIELDS:
        record[ENTRIES_KEY] = json.dumps(entries(block_type, value))
    return record


def stored(block_type: str, value: dict[str, Any]) -> dict[str, str] | None:
    """A record exactly as given (seeds hold blocks in stored form: numeric ids, ``{CCM:…}`` placeholders)."""
    columns = BLOCK_COLUMNS[block_type]
    if columns is None:
        return None
    record = {column: php_string(value[column]) if column in value else default for column, default in columns}
    if block_type in ENTRY_FIELDS:
        record[ENTRIES_KEY] = json.dumps(entries(block_type, value))
    return record


def _strict_file_column(block_type: str, value: dict[str, Any], record: dict[str, str]) -> None:
    """The image controller's ``save()``: integer casts of its other columns, the file id passed on as sent."""
    _, column, columns = STRICT_FILE_COLUMNS[block_type]
    raw = value.get(column, "")
    params: list[Any] = []
    for name in columns:
        if name == column:
            params.append(raw)
        elif name in ("externalLink", "altText", "sizingOption"):
            params.append(record[name])
        else:
            params.append(markup.leading_number(record[name]))
            record[name] = str(params[-1])
    if not (raw in ("", None) or _is_whole_number(raw)):
        raise ColumnError(block_type, raw, params)


def entries(block_type: str, value: dict[str, Any]) -> list[dict[str, str]]:
    """A multi-record block's entries from the parallel arrays of its value."""
    fields = ENTRY_FIELDS[block_type]
    lists = {f: value[f] for f in fields if isinstance(value.get(f), list)}
    count = max((len(v) for v in lists.values()), default=0)
    return [{f: php_string(v[i]) if i < len(v) else "" for f, v in lists.items()} for i in range(count)]


def validate(block_type: str, value: dict[str, Any]) -> list[str]:
    """Messages of a failed ``validate()`` on block update (the real server answers them with HTTP 200)."""
    errors: list[str] = []
    if block_type == "file":
        if php_string(value.get("fID")) in ("", "0"):
            errors.append("You must select a file.")
        if php_string(value.get("fileLinkText")).strip() == "":
            errors.append("You must enter the link text.")
    elif block_type == "image":
        if php_string(value.get("fID")) in ("", "0"):
            errors.append("You must select an image.")
        if "cropImage" in value and (
            markup.leading_number(php_string(value.get("maxWidth"))) <= 0
            or markup.leading_number(php_string(value.get("maxHeight"))) <= 0
        ):
            errors.append("Cropping an image requires setting a max width and max height.")
    elif block_type == "youtube" and php_string(value.get("videoURL")).strip() == "":
        errors.append("You must specify a video URL.")
    return errors


def links_to_placeholders(text: str, base_url: str) -> str:
    """Absolute links into this site become placeholders (see :func:`markup.translate_to`)."""
    return markup.translate_to(text, base_url)


def render_html(
    block_type: str, record: dict[str, str] | None, base_url: str, expand: Any = None, page_name: str = ""
) -> str:
    """The HTML a block renders to (a plausible stand-in for the theme's view).

    ``expand`` turns a stored content value into rendered HTML (placeholders → URLs); without it only
    ``{CCM:BASE_URL}`` is expanded. A page title block shows ``page_name`` unless it has a custom title; a hero image
    shows its title only when its image is a file (``blocks.jsonl``: after a write-back stored 0, the ``/resources``
    hero lost its heading and background).
    """
    if record is None:
        return f'\n\n    <div class="ccm-block-{block_type.replace("_", "-")}"></div>\n'
    if block_type == "content":
        body = expand(record["content"]) if expand else record["content"].replace(BASE_URL_PLACEHOLDER, base_url)
        return f'\n\n    \n<div class="ccm-block-content">\n    {body}</div>\n\n'
    if block_type == "html":
        return f"\n\n    {record['content']}\n"
    if block_type == "page_title":
        tag = record.get("formatting") or "h1"
        custom = record.get("useCustomTitle") == "1" or not page_name
        title = html.escape(record.get("titleText", "") if custom else page_name)
        return f'\n\n    <{tag} class="ccm-block-page-title page-title">{title}</{tag}>\n'
    if block_type == "hero_image":
        image = expand("{CCM:FID_" + record.get("image", "0") + "}") if expand and record.get("image") else ""
        if not image:
            return '\n\n    <div class="ccm-block-hero-image"></div>\n'
        tag = record.get("titleFormat") or "h1"
        return (
            f'\n\n    <div class="ccm-block-hero-image" style="background-image: url({html.escape(image)})">'
            f"<{tag}>{html.escape(record.get('title', '').strip())}</{tag}>{record.get('body', '')}</div>\n"
        )
    if block_type == "faq":
        found = json.loads(record.get(ENTRIES_KEY, "[]"))
        items = "".join(
            f'<div class="ccm-faq-entry-content"><h3>{html.escape(e.get("title", ""))}</h3>{e.get("description", "")}'
            "</div>"
            for e in found
        )
        return f'\n\n    <div class="ccm-faq-container">{items}</div>\n'
    shown = {k: v for k, v in record.items() if not k.startswith("@")}
    fields = json.dumps(shown, sort_keys=True)
    return f'\n\n    <div class="ccm-block-{block_type.replace("_", "-")}" data-fields="{html.escape(fields)}"></div>\n'


_SCRIPT_OR_STYLE = re.compile(r"<(script|style)\b.*?</\1\s*>", re.IGNORECASE | re.DOTALL)


def clean_html(raw: str) -> str:
    """The ``content`` member of a Content object: the markup without scripts and styles, trimmed."""
    return _SCRIPT_OR_STYLE.sub("", raw).strip()
