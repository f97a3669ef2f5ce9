"""Ignore rules: differences on a page that editors own, neither shown as drift nor reverted (docs/editor-safety.md).

Pure. A page's rules are the global ``ignore:`` rules of ``cmssync.yaml`` whose ``pages`` patterns (fnmatch) match
its path, plus the page file's own ``ignore:``. They apply to *updates* of existing pages only, like Terraform's
``lifecycle.ignore_changes``: a page cmssync creates gets the content's values.

What is ignored disappears from both sides of the comparison before anything is planned:

* fields (``name``, ``description``, ``type``, ``template``, ``publish_end_date``) and attributes by handle are not
  compared;
* a whole area is not managed;
* blocks by type: the live blocks of that type are invisible to the alignment (never updated, moved or deleted),
  and the content's blocks of that type are dropped too (they would describe the editor's block);
* blocks by position ``n``: the ``n``-th block of the live area (0-based) is invisible, and so is the content's
  ``n``-th block. New blocks are appended by the API at the end of an area, so hidden blocks keep their place.

Limits: positions are counted in the live area as observed, so an editor inserting a block above the ignored one
moves the rule onto another block; prefer ``type`` where it identifies the block.
"""

from __future__ import annotations

import dataclasses
import fnmatch
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field

from cmssync.config import GlobalIgnoreRule, IgnoreRule
from cmssync.plan.blocks import DesiredBlock, LiveBlock
from cmssync.plan.snapshot import LivePage


@dataclass(frozen=True)
class PageIgnore:
    """The effective ignore rules of one page."""

    fields: frozenset[str] = frozenset()
    """Field names as in a plan (``name``, ``attributes.meta_title``, ``publish_end_date``)."""
    areas: frozenset[str] = frozenset()
    block_types: Mapping[str, frozenset[str]] = field(default_factory=dict)
    block_positions: Mapping[str, frozenset[int]] = field(default_factory=dict)

    def __bool__(self) -> bool:
        return bool(self.fields or self.areas or self.block_types or self.block_positions)

    def ignores_field(self, name: str) -> bool:
        return name in self.fields

    def ignores_area(self, area: str) -> bool:
        return area in self.areas

    def visible_live(self, area: str, blocks: Iterable[LiveBlock]) -> tuple[LiveBlock, ...]:
        types = self.block_types.get(area, frozenset())
        positions = self.block_positions.get(area, frozenset())
        return tuple(b for i, b in enumerate(blocks) if b.type not in types and i not in positions)

    def visible_desired(self, area: str, blocks: Iterable[DesiredBlock]) -> list[DesiredBlock]:
        types = self.block_types.get(area, frozenset())
        positions = self.block_positions.get(area, frozenset())
        return [b for i, b in enumerate(blocks) if b.type not in types and i not in positions]


def page_ignore(path: str, own: IgnoreRule | None, rules: Iterable[GlobalIgnoreRule]) -> PageIgnore:
    """The rules for the page at ``path``: the matching global rules plus the page file's own."""
    chosen: list[IgnoreRule] = [r for r in rules if any(fnmatch.fnmatchcase(path, p) for p in r.pages)]
    if own is not None:
        chosen.append(own)
    fields: set[str] = set()
    areas: set[str] = set()
    types: dict[str, set[str]] = {}
    positions: dict[str, set[int]] = {}
    for rule in chosen:
        fields.update(rule.fields)
        fields.update(f"attributes.{handle}" for handle in rule.attributes)
        areas.update(rule.areas)
        for selector in rule.blocks:
            if selector.type is not None:
                types.setdefault(selector.area, set()).add(selector.type)
            if selector.position is not None:
                positions.setdefault(selector.area, set()).add(selector.position)
    return PageIgnore(
        frozenset(fields),
        frozenset(areas),
        {area: frozenset(v) for area, v in types.items()},
        {area: frozenset(v) for area, v in positions.items()},
    )


def visible_live_page(live: LivePage, rules: PageIgnore) -> LivePage:
    """The live page without its ignored blocks (fields and areas are skipped by the caller)."""
    if not (rules.block_types or rules.block_positions):
        return live
    areas = {area: rules.visible_live(area, blocks) for area, blocks in live.areas.items()}
    return dataclasses.replace(live, areas=areas)


def visible_desired_areas(areas: Mapping[str, list[DesiredBlock]], rules: PageIgnore) -> dict[str, list[DesiredBlock]]:
    """The content's managed areas without ignored areas and blocks."""
    return {area: rules.visible_desired(area, blocks) for area, blocks in areas.items() if not rules.ignores_area(area)}
