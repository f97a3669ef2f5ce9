"""Sub-areas of layouts and containers: which can be written so that the page shows them.

A layout block renders its columns as areas ``<area> : <n>`` (``Main : 16``); a container renders its own areas as
``<area> : <n> : <name>`` (``Main : 10 : Title``), and a container inside one of those nests further
(``Main : 10 : Body : 11 : Item 1``). The API lists them flat among the page's areas, and a block is added, updated
or deleted in a sub-area like in any area, addressed by the sub-area's exact name (through its parent area the
block is "not found"). The number is the layout's or container's instance, not a block id, and nothing in the API
ties a sub-area to its block (tests/conformance/concrete-9.3.1/subareas.jsonl).

What the API cannot do, and the plan therefore refuses for an area (with the reason, planning nothing there):

* write into a sub-area **no container has**: the API accepts a block in ``Main : 999 : Item 1`` and lists it, but
  no page ever shows it, and layouts and containers cannot be created through the API. A sub-area counts as
  existing when the live page lists it or cmssync saw it there before (the state's base: a sub-area emptied by
  cmssync is no longer listed, as the API lists only areas that hold blocks);
* write into a sub-area **whose container is gone**: after a layout or container block is deleted its sub-areas keep
  their blocks and still take writes, but the page no longer shows them. Without a tie, this is known for sure only
  when the parent area holds no block of the right kind any more (no layout for ``Main : 16``, no container for
  ``Main : 10 : Title``).

Pure.
"""

from __future__ import annotations

from collections.abc import Collection, Iterable, Mapping
from dataclasses import dataclass
from typing import TypeVar

from cmssync.content.blocktypes import block_type
from cmssync.content.paths import page_named
from cmssync.plan.snapshot import LivePage

B = TypeVar("B")


@dataclass(frozen=True)
class SubArea:
    """``Main : 10 : Body : 11 : Item 1`` → parent ``Main : 10 : Body``, instance 11, name ``Item 1``."""

    parent: str
    instance: int
    name: str | None
    """The container's area name; None for a layout column (``Main : 16``)."""

    @property
    def held_by(self) -> str:
        """The kind of block that renders it (:attr:`~cmssync.content.blocktypes.BlockType.holds_areas`)."""
        return "columns" if self.name is None else "named"


def sub_area(name: str) -> SubArea | None:
    """The parts of a sub-area's name, or None for a page's own area (``Main``, ``Page Header``)."""
    parts = name.split(" : ")
    for index in range(len(parts) - 1, 0, -1):
        if parts[index].isdigit():
            rest = parts[index + 1 :]
            if len(rest) > 1:
                return None
            return SubArea(" : ".join(parts[:index]), int(parts[index]), rest[0] if rest else None)
    return None


def is_sub_area(name: str) -> bool:
    return sub_area(name) is not None


def unwritable(name: str, live_areas: Mapping[str, Iterable[str]], known: Collection[str]) -> str | None:
    """Why the blocks of area ``name`` cannot be written so that the page shows them, or None when they can.

    ``live_areas`` maps each live area to the block types it holds, in order; ``known`` names the areas cmssync
    saw on this page before (the state's base).
    """
    found = sub_area(name)
    if found is None:
        return None
    if name not in live_areas and name not in known:
        return (
            f"no layout or container on the page has the sub-area {name!r} (the API cannot create layouts or "
            "containers, and blocks written into a sub-area no container has are never shown)"
        )
    holders = [t for t in live_areas.get(found.parent, ()) if _holds(t) == found.held_by]
    if not holders:
        what = "layout" if found.name is None else "container"
        return (
            f"the {what} that showed sub-area {name!r} is no longer in area {found.parent!r}: blocks written there "
            "stay in the page but are never shown (restore the layout in the page editor, or remove the sub-area "
            "from the content)"
        )
    return None


def hidden_sub_areas(live: LivePage) -> frozenset[str]:
    """The live page's sub-areas whose layout or container is gone: their blocks stay in the page, never shown."""
    live_types = {name: [block.type for block in blocks] for name, blocks in live.areas.items()}
    return frozenset(name for name in live_types if unwritable(name, live_types, ()) is not None)


def writable_areas(
    path: str, desired: Mapping[str, list[B]], live: LivePage, known: Collection[str], warnings: list[str]
) -> dict[str, list[B]]:
    """``desired`` without the sub-areas that cannot be written so that the page shows them; a warning for each
    that the content or the site has blocks in."""
    live_types = {name: [block.type for block in blocks] for name, blocks in live.areas.items()}
    kept: dict[str, list[B]] = {}
    for area, wanted in desired.items():
        reason = unwritable(area, live_types, known)
        if reason is None:
            kept[area] = wanted
        elif wanted or live.blocks(area):
            warnings.append(f"{page_named(path)}, area {area}: {reason}; nothing planned for this area")
    return kept


def _holds(type_handle: str) -> str:
    declared = block_type(type_handle)
    return declared.holds_areas if declared is not None else ""
