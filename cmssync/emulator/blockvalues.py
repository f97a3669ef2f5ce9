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
from cmssync.emulator.blocktypes import BLOCK_TYPES, DATABASE_NAME, Where
from cmssync.emulator.blocktypes.model import php_string, whole_number
from cmssync.emulator.blocktypes.text import CORE_VIEWS, ENTRIES_KEY

BASE_URL_PLACEHOLDER = markup.BASE_URL_PLACEHOLDER


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
        strict = BLOCK_TYPES[self.block_type].strict_file
        assert strict is not None
        table, column, columns = strict
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


def save(block_type: str, value: dict[str, Any], where: Where) -> dict[str, str] | None:
    """The stored record of a block: one string per column of the type's table (``None``: no table).

    The controller's ``save()`` rewrites the value first (:attr:`BlockType.save`). Raises :class:`LayoutKeyError`
    (a key ``save()`` reads without a default) or :class:`ColumnError` where the real controller fails.
    """
    kind = BLOCK_TYPES[block_type]
    if kind.required is not None and kind.required not in value:
        raise LayoutKeyError(kind.required)
    if kind.columns is None:
        return None
    args = kind.save(dict(value), where) if kind.save is not None else dict(value)
    # A null is not written (the column keeps its database default), as BlockController::save skips nulls.
    record = {
        column: php_string(args[column]) if args.get(column) is not None else default
        for column, default in kind.columns
    }
    if kind.strict_file is not None:
        _strict_file_column(block_type, args, record)
    for column in kind.lenient_files:
        raw = args.get(column, "")
        record[column] = str(int(str(raw).strip())) if whole_number(raw) else "0"
    if kind.entries:
        record[ENTRIES_KEY] = json.dumps(entries(block_type, value))
    return record


def stored(block_type: str, value: dict[str, Any]) -> dict[str, str] | None:
    """A record exactly as given (seeds hold blocks in stored form: numeric ids, ``{CCM:…}`` placeholders)."""
    kind = BLOCK_TYPES[block_type]
    if kind.columns is None:
        return None
    record = {column: php_string(value[column]) if column in value else default for column, default in kind.columns}
    if kind.entries:
        record[ENTRIES_KEY] = json.dumps(entries(block_type, value))
    return record


def _strict_file_column(block_type: str, args: dict[str, Any], record: dict[str, str]) -> None:
    """A file id handed to the database as sent: the statement's other columns as cast, then the SQL error."""
    strict = BLOCK_TYPES[block_type].strict_file
    assert strict is not None
    _, column, columns = strict
    raw = args.get(column, "")
    params: list[Any] = []
    for name in columns:
        if name == column:
            params.append(raw)
        elif name in ("externalLink", "altText", "sizingOption"):
            params.append(record[name])
        else:
            params.append(markup.leading_number(record[name]))
            record[name] = str(params[-1])
    if not (raw in ("", None) or whole_number(raw)):
        raise ColumnError(block_type, raw, params)


def entries(block_type: str, value: dict[str, Any]) -> list[dict[str, str]]:
    """A multi-record block's entries from the parallel arrays of its value."""
    fields = BLOCK_TYPES[block_type].entries
    lists = {f: value[f] for f in fields if isinstance(value.get(f), list)}
    count = max((len(v) for v in lists.values()), default=0)
    return [{f: php_string(v[i]) if i < len(v) else "" for f, v in lists.items()} for i in range(count)]


def validate(block_type: str, value: dict[str, Any]) -> tuple[list[str], dict[str, str]]:
    """Messages of a failed ``validate()`` on block update (the real server answers them with HTTP 200), and the
    form field each names, if any."""
    check = BLOCK_TYPES[block_type].validate
    messages: list[str] = []
    fields: dict[str, str] = {}
    for found in check(value) if check is not None else []:
        if isinstance(found, tuple):
            fields[found[0]] = found[1]
            found = found[0]
        messages.append(found)
    return messages, fields


def links_to_placeholders(text: str, base_url: str) -> str:
    """Absolute links into this site become placeholders (see :func:`markup.translate_to`)."""
    return markup.translate_to(text, base_url)


BLOCK_VIEWS = "block_views"
"""Meta key: ``core`` when the site's theme overrides no block view (a seed's ``block_views``), else the
``atomik`` theme's views."""


def render_html(
    block_type: str,
    record: dict[str, str] | None,
    base_url: str,
    expand: Any = None,
    page_name: str = "",
    *,
    core_views: bool = False,
) -> str:
    """The HTML a block renders to (a plausible stand-in for the theme's view: the type's own, else its fields).

    ``expand`` turns a stored value into rendered HTML (placeholders → URLs); without it only ``{CCM:BASE_URL}``
    is expanded. ``core_views``: as Concrete's own views print it (:data:`BLOCK_VIEWS`).
    """
    if record is None:
        return f'\n\n    <div class="ccm-block-{block_type.replace("_", "-")}"></div>\n'
    view = (CORE_VIEWS.get(block_type) if core_views else None) or BLOCK_TYPES[block_type].render
    if view is not None:
        return view(record, expand or (lambda text: text.replace(BASE_URL_PLACEHOLDER, base_url)), page_name)
    shown = {k: v for k, v in record.items() if not k.startswith("@")}
    fields = json.dumps(shown, sort_keys=True)
    return f'\n\n    <div class="ccm-block-{block_type.replace("_", "-")}" data-fields="{html.escape(fields)}"></div>\n'


_SCRIPT_OR_STYLE = re.compile(r"<(script|style)\b.*?</\1\s*>", re.IGNORECASE | re.DOTALL)


def clean_html(raw: str) -> str:
    """The ``content`` member of a Content object: the markup without scripts and styles, trimmed."""
    return _SCRIPT_OR_STYLE.sub("", raw).strip()
