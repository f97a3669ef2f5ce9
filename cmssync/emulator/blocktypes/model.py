"""What the sandbox knows of one block type: its table, how its ids export, and what its controller does on save.

The real server copies only the keys of a block's ``value`` that match a column of the block's table (after the
controller's ``save()`` rewrote them) and returns every column as a string; a type without a table answers ``[]``.
``BlockController::export`` — what every API read of a block shows — turns the columns a controller lists as file,
page, page-type, file-folder and page-feed columns into portable references:

* file columns: ``{ccm:export:file:<prefix without slashes>:<filename>}``, or ``""`` when the id is 0 or no file
  has it;
* page columns: ``{ccm:export:page:<path>}`` (``""`` for 0 and for a missing page; home is ``{ccm:export:page:}``);
* page-type columns: ``{ccm:export:pagetype:<handle>}`` (an id no page type has: HTTP 500); file-folder columns:
  ``{ccm:export:filefolder:<path>}``; page-feed columns: ``""`` (a fresh site has no feeds).

Columns a controller does not list stay as stored, numbers included (``feature_link.buttonInternalLinkCID``).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

Args = dict[str, Any]
_WHOLE_NUMBER = re.compile(r"^-?\d+$")


@dataclass(frozen=True)
class Where:
    """The page a block is saved on, as a controller's ``save()`` sees it."""

    page_id: int
    parent_id: int
    page_path: Callable[[int], str | None]
    """The path of a page id (``""`` for home), None when there is no such page."""
    base_url: str


Save = Callable[[Args, Where], Args]
Validate = Callable[[Args], list[str | tuple[str, str]]]
"""A failed ``validate()``: its messages, each alone or with the form field it names."""


@dataclass(frozen=True)
class BlockType:
    handle: str
    columns: tuple[tuple[str, str], ...] | None = None
    """(column, default) in table order; None: no table the export shows (the value reads ``[]``)."""
    files: tuple[str, ...] = ()
    pages: tuple[str, ...] = ()
    page_types: tuple[str, ...] = ()
    folders: tuple[str, ...] = ()
    feeds: tuple[str, ...] = ()
    save: Save | None = None
    """The controller's rewrite of the sent value before the columns are copied."""
    validate: Validate | None = None
    """``validate()`` on update: the messages of a failed validation (answered with HTTP 200)."""
    required: str | None = None
    """A key ``save()`` reads without a default: adding without it is ``Undefined array key`` (HTTP 500)."""
    entries: tuple[str, ...] = ()
    """Multi-record types: the per-entry fields, sent as parallel arrays, kept beside the record, never exported."""
    lenient_files: tuple[str, ...] = ()
    """Integer file columns the controller casts itself: anything but a whole number is stored as 0."""
    strict_file: tuple[str, str, tuple[str, ...]] | None = None
    """(table, column, statement columns): a file column handed to the database as sent — anything but a whole number
    is an SQL error (HTTP 500) after the draft was made and a block id consumed."""
    render: Callable[[Mapping[str, str], Callable[[str], str], str], str] | None = None
    """``(record, expand, page name)`` → the block's HTML on the public page."""
    exported: bool = True
    """False: the type's export writes no data record, so every read shows ``value: []`` although its table holds
    the columns (a stack display's ``stID``, stack-displays.jsonl)."""


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


def flag(value: Any) -> str:
    """PHP's truthiness of a sent value as the ``0``/``1`` a controller stores."""
    return "0" if value in (None, False, "", "0", 0, [], {}) else "1"


def whole_number(value: Any) -> bool:
    if isinstance(value, bool):
        return False
    return isinstance(value, int) or (isinstance(value, str) and bool(_WHOLE_NUMBER.match(value.strip())))


def int_value(value: Any) -> int:
    """PHP's ``(int)`` of a sent value (leading digits of a string, 0 when none)."""
    if isinstance(value, bool):
        return int(value)
    if isinstance(value, (int, float)):
        return int(value)
    found = re.match(r"\s*([+-]?\d+)", str(value or ""))
    return int(found.group(1)) if found else 0


def link_picker(args: Args, *, page: str, file: str, url: str) -> Args:
    """``DestinationPicker::decode('imageLink', …)``: the chosen kind (``imageLink__which``) and its value
    (``imageLink_page`` / ``imageLink_file`` / ``imageLink_external_url``) become the three link columns; anything
    else (the columns sent as they are) clears them."""
    which = args.get("imageLink__which")
    args[page] = int_value(args.get("imageLink_page")) if which == "page" else 0
    args[file] = int_value(args.get("imageLink_file")) if which == "file" else 0
    args[url] = str(args.get("imageLink_external_url") or "") if which == "external_url" else ""
    return args
