"""One block as apply writes it (:class:`BlockForm`), references unresolved: the part of a page's desired form
(:mod:`cmssync.plan.page_form`) that the area alignment (:mod:`cmssync.plan.blocks`) carries along.

Pure. In a plan file a text holding references is ``{"text": "<as written>"}``.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import Annotated, Any

from pydantic import BaseModel, ConfigDict, Field, PlainSerializer, PlainValidator

from cmssync.content.text import Reference, Text


def _from_json(value: Any) -> Any:
    if isinstance(value, Mapping) and set(value) == {"text"} and isinstance(value["text"], str):
        return Text(value["text"])
    if isinstance(value, list | tuple):
        return [_from_json(item) for item in value]
    return value


def _to_json(value: Any) -> Any:
    if isinstance(value, Text):
        return {"text": value.source}
    if isinstance(value, list | tuple):
        return [_to_json(item) for item in value]
    return value


FormValue = Annotated[Any, PlainValidator(_from_json), PlainSerializer(_to_json)]
"""A scalar, a :class:`~cmssync.content.text.Text` (references unresolved) or a list of them."""


class FrozenForm(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class BlockForm(FrozenForm):
    """One block as apply writes it, references unresolved; ``keep_id``: a placeholder, never written."""

    type: str
    value: dict[str, FormValue] = Field(default_factory=dict)
    columns: tuple[str, ...] = ()
    """Fields that hold one file or page as their whole value (written as its id)."""
    keep_id: int | None = None

    def references(self) -> Iterator[Reference]:
        for item in self.value.values():
            if isinstance(item, Text):
                yield from item.references
