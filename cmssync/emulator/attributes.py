"""Custom attribute values: how a JSON value sent by a client is stored, and which stored values are listed.

The mapping follows ``AttributeValueMapFactory`` as far as the recording confirms it: unknown handles are ignored,
text types get PHP's string conversion, numbers become numbers, booleans only count as true for ``true``/``1``/
``"1"``/``"true"`` (the recorded ``"yes"`` did not show up), a select takes option ids (the emulated site defines no
options, so any selection ends up empty) and ``image_file`` is not settable (the recording set it by numeric id and
by UUID and neither took effect). Seeds may set selected options and topics as lists of the objects the API lists
(``[{"id": 7, "value": "resource", "display_value": "resource"}]``). Values that are false or empty are not listed
in ``custom_attributes``.
"""

from __future__ import annotations

from typing import Any

from cmssync.emulator.blocktypes.model import php_string
from cmssync.emulator.catalog import AttributeKey

_TRUE = (True, 1, "1", "true")


def coerce(key: AttributeKey, value: Any, *, from_seed: bool = False) -> Any:
    """The stored form of ``value`` for attribute ``key`` (``None``: nothing to store).

    Seeds may set an ``image_file`` attribute with ``{"file": "<uuid>"}``; the API cannot.
    """
    if from_seed and key.type == "image_file" and isinstance(value, dict) and isinstance(value.get("file"), str):
        return {"file": value["file"].lower()}
    if from_seed and key.type in ("select", "topics") and isinstance(value, list):
        return [dict(option) for option in value if isinstance(option, dict)] or None
    if key.type == "boolean":
        return value in _TRUE and not isinstance(value, float)
    if key.type == "number":
        try:
            number = float(value)
        except (TypeError, ValueError):
            return None
        return int(number) if number.is_integer() else number
    if key.type in ("select", "image_file", "topics"):
        return None
    return php_string(value)


def listed(key: AttributeKey, stored: Any) -> bool:
    """Whether a stored value appears in ``custom_attributes``."""
    if key.type == "boolean":
        return bool(stored)
    return stored is not None
