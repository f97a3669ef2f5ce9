"""Three-way conflicts: a page changed both in the content and on the site since cmssync last applied it.

Pure. The *base* is what cmssync last applied, kept per page in the state (:class:`~cmssync.state.records.PageBase`):
the values of its fields and attributes, and a digest per managed area with the shape it was computed over. For each
field that differs between the content and the site:

* content equals the base → only the site changed: drift, settled by the drift policy (``cmssync.plan.drift``:
  by default kept on the site and listed as a site change to bring back; ``revert``: the content wins);
* site equals the base → only the content changed: an ordinary update;
* both differ from the base → a :class:`~cmssync.plan.actions.FieldConflict` (base, content and site values).

An area's site side is the live area projected on the base's shape (the same block types in the same order, the
same value keys; a kept block by id), so an editor's edit, move, add or delete of a block in it counts as a site
change. When both sides changed an area and it kept its blocks everywhere (and the base holds a digest per block,
recorded since issue 34), the area is compared block by block: a block only the site changed is drift, a block
only the content changed an update, a block the site changed to what the content now says nothing at all (the
editor's words merged into the content), and only a block changed both ways, differently, makes the area a
conflict. :class:`ThreeWay` is what the comparison found.

Records written before bases existed (or a base without this field) fall back to the page level: the site changed
when its live version is not the one the state recorded, the content changed when its digest is not the recorded
one; both → every differing field is a conflict with an unknown base; the site only → a site change. Such old
states therefore keep working unchanged; the next apply of a page records its base.

A conflict is settled by a policy (:class:`ConflictPolicies`): ``content_wins`` writes the content's value (what
``--force`` does for all), ``site_wins`` drops that field's change (the site keeps the editor's value), ``fail`` (the
default) holds the whole page back: nothing is written to it and ``apply`` exits 1. Limits: a value key the server
drops (not a column of the block's table) reads back empty, so an area whose content also changed may be reported as
conflicted once; users and files have only an object-level base digest (``cmssync.plan.asset_conflicts``, settled by
``cmssync.plan.drift.Settling``).
"""

from __future__ import annotations

import fnmatch
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, TypeVar

from cmssync.config import ConflictPolicy, ConflictRule, DriftRule
from cmssync.content.paths import object_page_path
from cmssync.plan.actions import Action, BlockChange, FieldChange, FieldConflict, HeldObject, Kind, Resolution
from cmssync.plan.blocks import DesiredBlock, LiveBlock
from cmssync.plan.canonical_html import comparable
from cmssync.plan.desired import attribute_matches
from cmssync.plan.normalize import digest
from cmssync.plan.snapshot import LivePage
from cmssync.state.records import AreaBase, PageBase, PageRecord

AREA_PREFIX = "area:"
RuleT = TypeVar("RuleT", ConflictRule, DriftRule)
PolicyT = TypeVar("PolicyT", bound=str)


@dataclass(frozen=True)
class ConflictPolicies:
    """Which policy settles a conflict: ``--force``, then the page file's ``on_conflict``, then the first matching
    rule of ``conflicts.rules``, then ``conflicts.policy``."""

    default: Resolution = "fail"
    rules: tuple[ConflictRule, ...] = ()
    force: bool = False

    def resolve(
        self, kind: Kind, key: str, field: str, own: ConflictPolicy | Mapping[str, ConflictPolicy] | None = None
    ) -> Resolution:
        if self.force:
            return "content_wins"
        rule = first_rule(self.rules, kind, key, field)
        return own_choice(own, field) or (rule.policy if rule is not None else self.default)


def own_choice(own: PolicyT | Mapping[str, PolicyT] | None, field: str) -> PolicyT | None:
    """A page file's own policy (``on_conflict``, ``on_drift``) for ``field``: one for every field, or field →
    policy with ``*`` for the others; None when it names none."""
    if own is None or isinstance(own, str):
        return own
    return own.get(field) or own.get("*")


def first_rule(rules: Sequence[RuleT], kind: Kind, key: str, field: str) -> RuleT | None:
    """The first of ``rules`` (``conflicts.rules``, ``drift.rules``) whose ``match`` names the object and whose
    ``fields`` (none: every field) name ``field``."""
    # A stack also answers to its page's id (page:/!stacks/<handle>), as rules written before it was a kind name it.
    ids = [f"{kind}:{key}", *([f"page:{object_page_path(kind, key)}"] if kind == "stack" else [])]
    for rule in rules:
        if not any(fnmatch.fnmatchcase(object_id, rule.match) for object_id in ids):
            continue
        if not rule.fields or any(fnmatch.fnmatchcase(field, pattern) for pattern in rule.fields):
            return rule
    return None


# --- bases --------------------------------------------------------------------------------------------------------


def _block_shape(block: DesiredBlock) -> tuple[str, ...]:
    if block.keep_id is not None:
        return (block.type, f"keep:{block.keep_id}")
    return (block.type, *sorted(block.value))


def _desired_values(block: DesiredBlock) -> list[Any]:
    if block.keep_id is not None:
        return [block.type, {"keep": block.keep_id}]
    return [block.type, {k: comparable(v) for k, v in sorted(block.value.items())}]


def block_digest(values: list[Any]) -> str:
    """The short digest of one block's values (:attr:`AreaBase.blocks`)."""
    return digest(values).removeprefix("sha256:")[:16]


def area_base(blocks: Sequence[DesiredBlock]) -> AreaBase:
    shape = tuple(_block_shape(block) for block in blocks)
    values = [_desired_values(b) for b in blocks]
    return AreaBase(shape=shape, digest=digest(values), blocks=tuple(block_digest(v) for v in values))


def _live_values(blocks: Sequence[LiveBlock], shape: Sequence[Sequence[str]]) -> list[list[Any]] | None:
    """The live area's blocks in the base's form, or None when they no longer have the base's types and order."""
    if len(blocks) != len(shape):
        return None
    values: list[list[Any]] = []
    for block, (block_type, *keys) in zip(blocks, shape, strict=True):
        if block.type != block_type:
            return None
        if keys and keys[0].startswith("keep:"):
            if str(block.id) != keys[0].removeprefix("keep:"):
                return None
            values.append([block_type, {"keep": block.id}])
            continue
        values.append([block_type, {key: comparable(block.value.get(key, "")) for key in keys}])
    return values


def live_area_digest(blocks: Sequence[LiveBlock], shape: Sequence[Sequence[str]]) -> str | None:
    """The live area in the base's form, or None when its blocks no longer have the base's types and order."""
    values = _live_values(blocks, shape)
    return digest(values) if values is not None else None


def site_fields(live: LivePage) -> dict[str, Any]:
    """The page's description and the attributes its read shows, by field name (``attributes.HANDLE``)."""
    return {"description": live.description, **{f"attributes.{h}": v for h, v in live.attributes.items()}}


def page_base(
    fields: Mapping[str, Any],
    areas: Mapping[str, Sequence[DesiredBlock]],
    end_date: str | None,
    site: Mapping[str, Any] | None = None,
) -> PageBase:
    """The base to record after applying or pulling a page (its desired form, which the site now holds). ``site``
    (:func:`site_fields`): the site's values then; those of fields the content leaves out (a description pull did
    not write because the page has none) are recorded too, so that the content setting such a field later is its
    own change, not a conflict of unknown base once an editor publishes anything else on the page."""
    values = {name: value for name, value in (site or {}).items() if name not in fields}
    values.update(fields)
    if end_date is not None:
        values["publish_end_date"] = end_date
    return PageBase(fields=values, areas={name: area_base(blocks) for name, blocks in areas.items()})


# --- detection ----------------------------------------------------------------------------------------------------


def field_matches(name: str, value: Any, live: LivePage) -> bool:
    """Whether desired field ``name`` (``name``, ``attributes.HANDLE``…) already holds ``value`` on ``live``."""
    return _same(name, value, live.field(name), live)


def _same(name: str, value: Any, live_value: Any, live: LivePage) -> bool:
    if name.startswith("attributes."):
        handle = name.removeprefix("attributes.")
        return attribute_matches(value, live_value, live.attribute_type(handle))
    return bool(value == live_value)


@dataclass(frozen=True)
class PageSides:
    """The two sides of one page and the record of what cmssync last applied."""

    kind: Kind
    key: str
    live: LivePage
    record: PageRecord
    content_digest: str
    """The digest of the content's whole page (``DesiredPage.digest``), for records without a base."""
    areas: Mapping[str, Sequence[DesiredBlock]]
    """The content's managed areas (after ignore rules)."""

    def site_moved(self) -> bool:
        """Page level: the live version is not the one cmssync recorded (someone approved a version since)."""
        recorded = self.record.live_version_id
        return recorded is not None and self.live.live_version_id != recorded

    def content_moved(self) -> bool:
        return self.record.digest is not None and self.record.digest != self.content_digest


@dataclass(frozen=True)
class ThreeWay:
    """What comparing one page's planned changes with the base found: conflicts, and what only the site changed."""

    conflicts: list[FieldConflict] = field(default_factory=list)
    site_fields: frozenset[str] = frozenset()
    """Fields (``attributes.H``, ``area:NAME``) only the site changed since the base: the whole field or area."""
    site_blocks: Mapping[str, frozenset[int]] = field(default_factory=dict)
    """Area → live positions of the blocks only the site changed, in an area whose other blocks the content
    changed (the area's other block changes are the content's)."""

    @property
    def site_changed(self) -> bool:
        """Whether the site changed something the content did not (drift)."""
        return bool(self.site_fields or self.site_blocks)


def find_conflicts(sides: PageSides, changes: Sequence[FieldChange], blocks: Sequence[BlockChange]) -> ThreeWay:
    """The conflicts of the planned changes of one page, and what only the site changed (nothing settled yet)."""
    found = _Found(
        fallback=sides.site_moved() and sides.content_moved(),
        content_kept=sides.record.digest is not None and not sides.content_moved(),
    )
    for change in changes:
        _field_conflict(sides, change, found)
    for area in dict.fromkeys(block.area for block in blocks):
        _area_conflict(sides, area, [b for b in blocks if b.area == area], found)
    return ThreeWay(found.conflicts, frozenset(found.site_fields), found.site_blocks)


@dataclass
class _Found:
    """What :func:`find_conflicts` found so far, and how it treats a field or area the base does not know:
    ``fallback`` (both sides moved since the record: a conflict), ``content_kept`` (the content is what cmssync last
    applied: the site's change)."""

    fallback: bool
    content_kept: bool
    conflicts: list[FieldConflict] = field(default_factory=list)
    site_fields: set[str] = field(default_factory=set)
    site_blocks: dict[str, frozenset[int]] = field(default_factory=dict)

    def unknown(self, sides: PageSides, name: str, content: Any, site: Any) -> None:
        """A field or area without a base."""
        if self.fallback:
            self.conflicts.append(_conflict(sides, name, None, False, content, site))
        elif self.content_kept and sides.site_moved():
            self.site_fields.add(name)  # no base for it, but the content is what cmssync last applied


def _field_conflict(sides: PageSides, change: FieldChange, found: _Found) -> None:
    base = sides.record.base
    if base is None or change.field not in base.fields:
        found.unknown(sides, change.field, change.after, change.before)
        return
    before = base.fields[change.field]
    content_changed = before != change.after
    site_changed = not _same(change.field, before, change.before, sides.live)
    if content_changed and site_changed:
        found.conflicts.append(_conflict(sides, change.field, before, True, change.after, change.before))
    elif site_changed:
        found.site_fields.add(change.field)


def _area_conflict(sides: PageSides, area: str, changes: Sequence[BlockChange], found: _Found) -> None:
    base = sides.record.base
    known_area = base.areas.get(area) if base is not None else None
    content_blocks = [[b.type, {"keep": b.keep_id} if b.keep_id else dict(b.value)] for b in sides.areas[area]]
    site_blocks_shown = _site_blocks_shown(sides.areas[area], sides.live.blocks(area))
    if known_area is None:
        found.unknown(sides, AREA_PREFIX + area, content_blocks, site_blocks_shown)
        return
    content_changed = area_base(list(sides.areas[area])).digest != known_area.digest
    site_changed = live_area_digest(sides.live.blocks(area), known_area.shape) != known_area.digest
    if content_changed and site_changed:
        split = _site_only_blocks(sides, area, known_area, changes)
        if split is None:
            found.conflicts.append(_conflict(sides, AREA_PREFIX + area, None, False, content_blocks, site_blocks_shown))
        elif split:
            found.site_blocks[area] = split
    elif site_changed:
        found.site_fields.add(AREA_PREFIX + area)


def _site_only_blocks(
    sides: PageSides, area: str, base: AreaBase, changes: Sequence[BlockChange]
) -> frozenset[int] | None:
    """An area both sides changed, block by block: the live positions of the blocks only the site changed, or None
    when that cannot be told or a block was changed both ways (a conflict on the area).

    Told only when the area kept its blocks on every side (the base's types and order in the content and on the
    site, per-block digests recorded) and the content's changes are updates in place; a block the site changed to
    exactly what the content now says is no conflict (the editor's words merged into the content)."""
    content = list(sides.areas[area])
    site = _live_values(sides.live.blocks(area), base.shape)
    if len(base.blocks) != len(base.shape) or site is None or [_block_shape(b) for b in content] != list(base.shape):
        return None
    if any(change.op != "update" or change.live_position != change.position for change in changes):
        return None
    site_only: set[int] = set()
    for index, (was, mine, theirs) in enumerate(zip(base.blocks, content, site, strict=True)):
        ours, live = block_digest(_desired_values(mine)), block_digest(theirs)
        if live in (was, ours):
            continue
        if ours != was:
            return None  # both changed this block, differently
        site_only.add(index)
    return frozenset(site_only)


def _site_blocks_shown(content: Sequence[DesiredBlock], live: Sequence[LiveBlock]) -> list[list[Any]]:
    """The live area as a conflict shows it: a block where the content has one of the same type shows only the keys
    the content states (as the plan compares them), so the columns a raw block leaves out are not shown as removed."""
    shown: list[list[Any]] = []
    for index, block in enumerate(live):
        mine = content[index] if index < len(content) else None
        if mine is not None and mine.type == block.type and mine.keep_id is None:
            shown.append([block.type, {key: block.value.get(key, "") for key in mine.value}])
        else:
            shown.append([block.type, dict(block.value)])
    return shown


def _conflict(sides: PageSides, field: str, base: Any, known: bool, content: Any, site: Any) -> FieldConflict:
    return FieldConflict(
        kind=sides.kind, key=sides.key, field=field, base=base, base_known=known, content=content, site=site
    )


# --- settling -----------------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Settled:
    action: Action | None
    """The action to run (site_wins fields dropped), or None: nothing left, or the page is held."""
    conflicts: tuple[FieldConflict, ...]
    held: HeldObject | None


def settle(
    action: Action,
    conflicts: Sequence[FieldConflict],
    policies: ConflictPolicies,
    own: ConflictPolicy | Mapping[str, ConflictPolicy] | None,
) -> Settled:
    """Apply the policies to one action's conflicts (see the module docstring)."""
    if not conflicts:
        return Settled(action, (), None)
    settled = tuple(
        c.model_copy(update={"resolution": policies.resolve(c.kind, c.key, c.field, own)}) for c in conflicts
    )
    failing = [c.field for c in settled if c.resolution == "fail"]
    if failing:
        message = (
            f"changed in the content and on the site since cmssync last applied it ({', '.join(failing)}); "
            "nothing is written to it: merge the editor's change into the content, or pass --force "
            "(or set a conflict policy) to let the content win"
        )
        held = HeldObject(kind=action.kind, key=action.key, reason="conflict", message=message, action=action)
        return Settled(None, settled, held)
    site_fields = {c.field for c in settled if c.resolution == "site_wins"}
    changes = tuple(change for change in action.changes if change.field not in site_fields)
    blocks = tuple(block for block in action.blocks if AREA_PREFIX + block.area not in site_fields)
    if not changes and not blocks:
        return Settled(None, settled, None)
    return Settled(action.model_copy(update={"changes": changes, "blocks": blocks}), settled, None)


def applied_base(
    old: PageBase | None,
    fields: Mapping[str, Any],
    areas: Mapping[str, Sequence[DesiredBlock]],
    end_date: str | None,
    action: Action | None,
    live: LivePage | None,
) -> PageBase:
    """The base to record after applying ``action``: the content's values for what was written or already equal,
    the old base for what the run left different on the site (a ``site_wins`` field, an ignored one), so that the
    same conflict is seen, and settled the same way, by the next run instead of turning into drift or an update."""
    new = page_base(fields, areas, end_date, site_fields(live) if live is not None else None)
    if old is None or live is None or action is None:
        return new
    written = {change.field for change in action.changes}
    written_areas = {block.area for block in action.blocks}
    kept_fields = dict(new.fields)
    for name, value in new.fields.items():
        if name not in written and name in old.fields and not _same(name, value, live.field(name), live):
            kept_fields[name] = old.fields[name]
    kept_areas = dict(new.areas)
    for area, base in new.areas.items():
        if area in written_areas or area not in old.areas:
            continue
        if live_area_digest(live.blocks(area), base.shape) != base.digest:
            kept_areas[area] = old.areas[area]
    return PageBase(fields=kept_fields, areas=kept_areas)


def site_base(
    fields: Mapping[str, Any],
    areas: Mapping[str, Sequence[DesiredBlock]],
    end_date: str | None,
    digest_of_content: str,
    live: LivePage,
) -> tuple[str | None, PageBase]:
    """The digest and base to record when cmssync takes the site as it is now without writing to it (``refresh``,
    ``import``): the content's value for a field or area the site holds as the content says, the site's own value
    (an area: in the live blocks' own shape) where it differs. So what the content changes is an ordinary update,
    and what an editor changes later is a site change, as after a pull. The content's digest is recorded only when
    the site holds the whole page as the content says (else None: the content is not what the site holds)."""
    content = page_base(fields, areas, end_date)
    kept_fields = {
        name: value if _same(name, value, live.field(name), live) else live.field(name)
        for name, value in content.fields.items()
    }
    kept_areas = {
        name: base if live_area_digest(live.blocks(name), base.shape) == base.digest else _live_area_base(live, name)
        for name, base in content.areas.items()
    }
    base = PageBase(fields=kept_fields, areas=kept_areas)
    return (digest_of_content if base == content else None), base


def _live_area_base(live: LivePage, area: str) -> AreaBase:
    """A live area's base in its own shape: every block's type and every key of its value."""
    blocks = live.blocks(area)
    shape = tuple((block.type, *sorted(block.value)) for block in blocks)
    values = _live_values(blocks, shape) or []
    return AreaBase(shape=shape, digest=digest(values), blocks=tuple(block_digest(v) for v in values))
