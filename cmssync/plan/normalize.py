"""Normalise values before comparing desired with live, so that a freshly applied site plans empty (design.md §5).

The real server changes what it stores (concrete-api.md §6, §13), and each function here undoes one such change on
**both** sides of a comparison. Every function is idempotent (``f(f(x)) == f(x)``) and pure.

* Block values: every field comes back as a string (booleans ``"0"``/``"1"``, numbers in their string form, a
  missing value ``""``); blocks without a table come back as ``[]``. Content HTML goes through Concrete's
  ``LinkAbstractor``, which rewrites the site's own absolute URL to ``{CCM:BASE_URL}``. We rewrite
  ``http(s)://<site host>[/<site path>]`` to ``{CCM:BASE_URL}`` in every string field the way the server does: anywhere
  in the text, case-insensitively, with no boundary check (not only inside ``href``). The scheme is not compared
  (the server rewrites only its canonical scheme, and we rewrite both): ``http`` and ``https`` links to the site are
  the same link here.
* HTML and other text: trailing whitespace at the end of each line and at the end of the text is not significant
  (YAML block scalars add a final newline; editors add or drop trailing blanks). ``\\r\\n`` counts as ``\\n``.
* Tags: stored as ``"\\ntag1\\ntag2\\n"``; a ``PUT`` splits a string on commas and newlines, trims, and drops
  empty entries. We do the same, keeping the order, and also drop repeats (keeping the first): a repeated tag means
  nothing, and whether the server keeps it does not matter once both sides are normalised.
* Dates: ATOM (``2024-05-01T10:11:12+00:00``), DB (``2024-05-01 10:11:12``, no zone) and plain dates
  (``2024-05-01``, meaning midnight) become ``"YYYY-MM-DD HH:MM:SS"``. An aware value is converted to UTC; a naive one
  is taken as it is. That assumes the site's time zone is UTC (as on the recorded site) whenever a DB date is compared
  with an ATOM one; on another time zone such a comparison is off by the zone's offset, so compare like with like.
* Page attributes: see :func:`normalize_attribute`.

Nothing here imports ``cmssync.api``: the functions take plain JSON-shaped values.
"""

from __future__ import annotations

import hashlib
import json
import math
import re
from collections.abc import Iterable, Mapping
from datetime import UTC, date, datetime
from functools import lru_cache
from typing import Any
from urllib.parse import urlsplit

from cmssync.content.blocktypes import block_type as block_type_of
from cmssync.plan.references import canonical_content

BASE_URL_PLACEHOLDER = "{CCM:BASE_URL}"

_TRAILING_SPACE = re.compile(r"[ \t\f\v]+$", re.MULTILINE)
_TAG_SEPARATORS = re.compile(r"[,\r\n]")
_ZERO_DATES = {"", "0000-00-00", "0000-00-00 00:00:00"}
_TRUE_STRINGS = {"1", "true"}


def normalize_block_value(
    block_type: str, value: Mapping[str, Any] | list[Any] | None, *, base_url: str
) -> dict[str, str]:
    """A block value as the server would return it: every field a string, site links as ``{CCM:BASE_URL}``.

    A list (the server's ``[]`` for blocks without a table) or None is an empty value. A ``rich_text`` field's HTML
    (:mod:`cmssync.content.blocktypes`) is also put in the form the API reads back after a save
    (:func:`cmssync.plan.references.canonical_content`: tag and attribute names lower-cased, pictures in export
    layout), on both sides, so that a desired value rendered with export forms equals the live read of the same links.
    Keys the type declares ``derived`` (they only mirror its columns) are left out on both sides.
    """
    if not isinstance(value, Mapping):
        return {}
    rich, derived = _rich_text_fields(block_type), _derived_fields(block_type)
    result: dict[str, str] = {}
    for key, item in value.items():
        name = str(key)
        if name not in derived:
            result[name] = _normalized_field(block_field(item), base_url, content=name in rich)
    return result


@lru_cache(maxsize=256)
def _rich_text_fields(block_type: str) -> frozenset[str]:
    declared = block_type_of(block_type)
    return frozenset(f.name for f in declared.fields if f.kind == "rich_text") if declared else frozenset()


@lru_cache(maxsize=256)
def _derived_fields(block_type: str) -> frozenset[str]:
    """Keys a read shows that only mirror other columns: never compared (see ``BlockType.derived``)."""
    declared = block_type_of(block_type)
    return declared.derived if declared else frozenset()


@lru_cache(maxsize=1 << 14)
def _normalized_field(text: str, base_url: str, *, content: bool) -> str:
    """One field of :func:`normalize_block_value`, once per distinct text: a page that needs no change holds the
    same texts on both sides (the live read, then the content), so the desired side finds them done."""
    normalized = normalize_text(rewrite_site_links(text, base_url))
    return canonical_content(normalized) if content else normalized


def block_field(value: Any) -> str:
    """One block field as the server returns it: PHP's string form of the stored column."""
    if value is None:
        return ""
    if isinstance(value, bool):
        return "1" if value else "0"
    if isinstance(value, int):
        return str(value)
    if isinstance(value, float):
        if math.isfinite(value) and value.is_integer():
            return str(int(value))
        return repr(value)
    if isinstance(value, str):
        return value
    # Nested structures do not occur in core block exports; compare them by their canonical JSON.
    return canonical_json(value)


def rewrite_site_links(text: str, base_url: str) -> str:
    """Rewrite absolute links to the site (``http`` or ``https``) into ``{CCM:BASE_URL}``, as the server does."""
    pattern = _site_url_pattern(base_url)
    if pattern is None or "://" not in text:  # the pattern needs "://": most fields have no link at all
        return text
    return pattern.sub(lambda _m: BASE_URL_PLACEHOLDER, text)


@lru_cache(maxsize=16)
def _site_url_pattern(base_url: str) -> re.Pattern[str] | None:
    """Built once per base URL (every block field of every page is rewritten with it)."""
    parts = urlsplit(base_url.strip())
    if not parts.netloc:
        return None
    host = re.escape(parts.netloc)
    path = re.escape(parts.path.rstrip("/"))
    # Like LinkAbstractor::translateTo, no boundary is required after the URL ("http://site:80901" becomes
    # "{CCM:BASE_URL}1"): the rewrite is lossless (rendering expands it back), and doing exactly what the server does
    # is what makes both sides compare equal.
    return re.compile(rf"https?://{host}{path}", re.IGNORECASE)


def normalize_text(text: str) -> str:
    """Text without trailing whitespace per line or at the end, with ``\\n`` line ends."""
    text = text.replace("\r\n", "\n").replace("\r", "\n")
    return _TRAILING_SPACE.sub("", text).rstrip()


def normalize_html(html: str, *, base_url: str | None = None) -> str:
    """HTML compared as the server stores it: trailing whitespace removed, site links rewritten when a base is given."""
    if base_url is not None:
        html = rewrite_site_links(html, base_url)
    return normalize_text(html)


def normalize_tags(tags: str | Iterable[str] | None) -> list[str]:
    """Tags as an ordered list of distinct, stripped, non-empty strings, from a list or the stored string form."""
    if tags is None:
        return []
    items = [tags] if isinstance(tags, str) else list(tags)
    result: list[str] = []
    for item in items:
        for tag in _TAG_SEPARATORS.split(item):
            tag = tag.strip()
            if tag and tag not in result:
                result.append(tag)
    return result


def normalize_date(value: str | date | datetime | None) -> str | None:
    """A date or date-time as ``"YYYY-MM-DD HH:MM:SS"`` (UTC when the value has a zone); None when empty.

    A string that is not a date is returned stripped, so that it still compares (and shows) as itself.
    """
    if value is None:
        return None
    if isinstance(value, datetime):
        moment = value
    elif isinstance(value, date):
        moment = datetime(value.year, value.month, value.day)
    else:
        text = value.strip()
        if text in _ZERO_DATES:
            return None
        try:
            moment = datetime.fromisoformat(text)
        except ValueError:
            return text
    if moment.tzinfo is not None:
        moment = moment.astimezone(UTC).replace(tzinfo=None)
    return moment.replace(microsecond=0).isoformat(sep=" ")


def normalize_attribute(value: Any, *, attribute_type: str | None = None) -> Any:
    """A page/file/user attribute value in a form that compares equal on both sides.

    ``attribute_type`` is the type handle the server reports (``CustomAttribute.type``), when known.

    * ``boolean``: True/False. True only for ``True``, ``1``, ``"1"`` and ``"true"``: what the recorded server took
      as true (it did not take ``"yes"``, although ``filter_var`` would).
    * ``number``: an int when integral, else a float (``"7"``, ``7`` and ``7.0`` are equal).
    * ``select``: the server answers a nested collection ``{"data": [option, ...]}`` and is written with option
      **ids**; each option becomes its ``id`` (else ``value``, ``name``, ``display_value``) as a string, content ids
      become strings too, and the selection is sorted, because it is a set. Option names given by content are kept
      as strings and so only match options that have no id.
    * any other ``{"data": obj}`` (an ``image_file`` answers ``{"data": File}``): the object's ``id`` as a string;
      ``{"data": [...]}`` without a type is read as a selection.
    * Without a type, ``None``, ``False`` and ``""`` are all ``""``: the server leaves false and empty values out of
      ``custom_attributes``, so an absent attribute (no value, no type) must equal a desired ``false``.
    * Otherwise: strings → :func:`normalize_text`; mappings → their values normalised; lists → their items
      normalised, order kept; an integral float → int.
    """
    if attribute_type == "boolean":
        return _boolean(value)
    if attribute_type == "number":
        return _number(value)
    if attribute_type == "select":
        return _selection(value)
    if isinstance(value, Mapping) and set(value) == {"data"}:
        return _nested(value["data"])
    if value is None or value is False:
        return ""
    if isinstance(value, str):
        return normalize_text(value)
    if isinstance(value, float) and math.isfinite(value) and value.is_integer():
        return int(value)
    if isinstance(value, Mapping):
        return {str(k): normalize_attribute(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [normalize_attribute(item) for item in value]
    return value


def _boolean(value: Any) -> bool:
    if isinstance(value, str):
        return value.strip().lower() in _TRUE_STRINGS
    return value is True or (type(value) is int and value == 1)


def _number(value: Any) -> Any:
    if isinstance(value, bool) or value is None:
        return value
    try:
        number = float(value)
    except (TypeError, ValueError):
        return normalize_attribute(value)
    if math.isfinite(number) and number.is_integer():
        return int(number)
    return number


def _selection(value: Any) -> list[str]:
    if isinstance(value, Mapping) and "data" in value:
        value = value["data"]
    if value is None or value == "":
        return []
    items = value if isinstance(value, list | tuple) else [value]
    return sorted({_option_name(item) for item in items} - {""})


def _option_name(option: Any) -> str:
    if isinstance(option, Mapping):
        for key in ("id", "value", "name", "display_value"):
            if option.get(key) not in (None, ""):
                return str(option[key]).strip()
        return ""
    return "" if option is None else block_field(option).strip()


def _nested(data: Any) -> Any:
    if isinstance(data, Mapping) and "id" in data:
        return str(data["id"])
    if isinstance(data, list):
        return _selection(data)  # a collection without a known type: almost surely select options
    return normalize_attribute(data)


def canonical_json(obj: Any) -> str:
    """JSON with sorted keys and no insignificant whitespace: the same object always gives the same text."""
    return json.dumps(obj, sort_keys=True, separators=(",", ":"), ensure_ascii=False, allow_nan=False, default=_default)


def digest(obj: Any) -> str:
    """``sha256:<hex>`` of the canonical JSON of ``obj``; the "last applied digest" kept in the state."""
    return "sha256:" + hashlib.sha256(canonical_json(obj).encode("utf-8")).hexdigest()


def _default(obj: Any) -> Any:
    if isinstance(obj, datetime | date):
        return obj.isoformat()
    if isinstance(obj, set | frozenset):
        return sorted(obj, key=canonical_json)
    if hasattr(obj, "model_dump"):
        return obj.model_dump(mode="json")
    raise TypeError(f"cannot digest a {type(obj).__name__}")
