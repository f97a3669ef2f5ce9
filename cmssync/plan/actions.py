"""The plan as data: ordered actions with field-level changes, dependencies and preconditions.

A ``Plan`` is what ``cmssync plan`` prints and ``-o`` writes, and what ``apply`` executes. It is plain, frozen,
JSON-serialisable data: a plan file read back is equal to the plan that was written. It never holds a secret:
fields marked ``sensitive`` (user passwords) carry no values at all, only the fact that they change.

Ordering is part of the contract: ``actions`` are listed in an order that satisfies every ``depends_on`` edge
(groups, then files, then pages parents-first, then users; deletes of pages children-first and of files after the
pages that referenced them are re-pointed), so a sequential executor can run them top to bottom and a concurrent
one can start any action whose dependencies are done.
"""

from __future__ import annotations

import re
from collections import Counter
from typing import Annotated, Any, Literal

from pydantic import AfterValidator, BaseModel, ConfigDict, Field, JsonValue, model_validator

from cmssync.content.paths import object_page_path
from cmssync.content.trees import Address, Trees
from cmssync.errors import EXIT_CHANGES, EXIT_ERROR, EXIT_OK
from cmssync.plan.asset_forms import FileForm, UserForm
from cmssync.plan.block_form import BlockForm
from cmssync.plan.page_form import PageForm
from cmssync.state.records import PageBase

OUTPUT_FORMAT_VERSION = 2
"""The one ``format_version`` of every machine-readable output: the plan file and ``plan --format json``, apply's
NDJSON events (each line), ``status``, ``validate`` and ``state`` JSON, the daemon's ``/status``; their JSON Schemas
are ``cmssync schema --kind plan|events|status``. 2: actions carry what apply writes (pages, files, users) and the
plan file the bytes of its uploads; every output says 2 (before, only the plan file did and the rest said 1)."""

SYMBOLS: dict[str, str] = {
    "create": "+",
    "add": "+",
    "update": "~",
    "publish": "~",
    "replace": "~",
    "delete": "-",
    "move": ">",
}


def _kind_name(kind: str) -> str:
    if not KIND_NAME.fullmatch(kind):
        raise ValueError(f"invalid kind {kind!r}: a kind's name is lowercase letters, digits and _")
    return kind


KIND_NAME = re.compile(r"[a-z][a-z0-9_]*")
Kind = Annotated[str, AfterValidator(_kind_name)]
"""A managed kind's name (which kinds a run manages is its registry's business: ``cmssync.sync.kinds``; a saved
plan naming a kind the run does not manage is refused by ``stale_now``)."""
Operation = Literal["create", "update", "delete", "move", "replace", "publish"]
BlockOperation = Literal["add", "update", "delete"]


class _Frozen(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class FieldChange(_Frozen):
    """One field that differs: ``before`` is the live value (``None`` when absent), ``after`` the desired one.

    A sensitive change (a password) never holds values, whatever it is given: plans are printed and saved.
    """

    field: str
    before: Any = None
    after: Any = None
    sensitive: bool = False

    @model_validator(mode="before")
    @classmethod
    def _no_secret_values(cls, data: Any) -> Any:
        if isinstance(data, dict) and data.get("sensitive"):
            return {**data, "before": None, "after": None}
        return data


class BlockChange(_Frozen):
    """One block operation inside a managed area, in execution order.

    ``position`` is the block's index in the content's area (adds, updates; None for a delete, which the content
    does not list); ``live_position`` its index in the live area (updates, deletes). ``block_id`` is the live id the
    change starts from; the server may answer with a new id (design.md §5). ``before`` and ``after`` are the live
    and desired values in compare form; ``write`` is what apply sends (adds, updates), references unresolved.
    """

    area: str
    op: BlockOperation
    position: int | None = None
    live_position: int | None = None
    block_type: str
    block_id: int | None = None
    before: dict[str, str] | None = None
    after: dict[str, str] | None = None
    write: BlockForm | None = None

    @property
    def place(self) -> int:
        """The index a report shows: in the content's area, or for a delete in the live area."""
        return self.position if self.position is not None else self.live_position or 0


class Precondition(_Frozen):
    """What the action relies on; ``apply`` with a plan file refuses to run when it no longer holds.

    Every action has one (``cmssync.sync.plan_files.check_fresh`` checks them against the site as it is now): an
    action on an existing object names it (``remote_id``, for pages also the ``live_version_id`` it saw), and a
    create says the object was ``absent`` when the plan was made — a page at its path, a group or user of its name,
    a file of its path (neither the state's file nor a site file with its bytes). Without that, a plan file applied
    twice (a re-run CI job) created every new object a second time.
    """

    remote_id: str | None = None
    live_version_id: int | None = None
    digest: str | None = None
    absent: bool = False
    """The object did not exist at plan time (creates): a plan file is stale if it exists now."""


class _Object(_Frozen):
    """Something the plan speaks of about one object: its kind, its key (path, username, name) and so its id."""

    kind: Kind
    key: str

    @property
    def id(self) -> str:
        return f"{self.kind}:{self.key}"


class Action(_Object):
    op: Operation
    changes: tuple[FieldChange, ...] = ()
    blocks: tuple[BlockChange, ...] = ()
    depends_on: tuple[str, ...] = ()
    precondition: Precondition = Field(default_factory=Precondition)
    drift: bool = False
    """The live object changed since cmssync last applied it ("changed outside cmssync")."""
    note: str | None = None
    page: PageForm | None = None
    """A page create, update or publish: the page as the content wants it (what apply writes and records)."""
    file: FileForm | None = None
    """A file upload, update or move: the file as the content wants it (``cmssync.plan.asset_forms``)."""
    user: UserForm | None = None
    """A user create or update: the user as the content wants it, its password as a variable's name."""
    form: dict[str, JsonValue] | None = None
    """A create or update of a kind added later (``cmssync.sync.kinds``): its object as the content wants it, in the
    JSON form its module chooses, which its applier writes; the registry refuses such an action without it, so no
    applier reads the content again at apply (a saved plan applies with the content directory gone)."""


Resolution = Literal["content_wins", "site_wins", "fail"]
"""How a conflicted field is settled: the content's value is written, the site's is kept, or the object is refused."""


class FieldConflict(_Object):
    """One field changed both in the content and on the site since cmssync last applied it (a three-way conflict).

    ``base`` is the value cmssync last applied (``base_known`` False when the state does not hold it: states written
    before per-field bases, or areas, whose base is kept as a digest only). ``content`` and ``site`` are the two new
    values. ``resolution`` is the policy that settled it; ``fail`` means the object was refused (see ``Plan.held``).
    """

    field: str
    base: Any = None
    base_known: bool = False
    content: Any = None
    site: Any = None
    resolution: Resolution = "fail"


class DraftInfo(_Frozen):
    """A pending (unapproved) page version cmssync did not create. The API gives no author for a version
    (concrete-api.md: ``PageVersion`` has ``id``, ``is_approved`` and dates only), so ``author`` is usually None."""

    version_id: int
    created: str | None = None
    author: str | None = None

    def describe(self) -> str:
        made = f" created {self.created}" if self.created else ""
        by = f" by {self.author}" if self.author else " (the API does not say by whom)"
        return f"unapproved draft version {self.version_id}{made}{by}"


HeldReason = Literal["conflict", "foreign_draft", "unreadable"]


class HeldObject(_Object):
    """An object whose changes the plan holds back: nothing is written to it, and ``apply`` says so.

    ``fails`` makes ``apply`` exit 1 (a conflict under policy ``fail``, a foreign draft under ``on_foreign_draft:
    fail``, an object that could not be read); a foreign draft under ``skip`` is held quietly (the daemon's
    default). ``unreadable``: the object exists on the site but reading it failed (``message`` holds the server's
    reason), or the action needs one that did (``cmssync.plan.unreadable``); it is never created again.
    """

    reason: HeldReason
    message: str
    fails: bool = True
    draft: DraftInfo | None = None
    action: Action | None = None
    """What would have been applied, for review (``--force`` or a policy applies it)."""


Guard = Literal["max_deletes", "max_fraction", "empty_content"]


class BlockedDeletes(_Frozen):
    """Deletes that pruning asked for and a guard refused: a plan entry, shown in every format.

    A plan with blocked deletes is not "no changes": the site still holds objects the content says should go.
    """

    kind: Kind
    keys: tuple[str, ...]
    managed: int
    """How many objects of this kind cmssync manages (the base of ``max_fraction``)."""
    guard: Guard
    limit: str = ""
    """The guard's setting, e.g. ``max_deletes=10``."""

    def describe(self) -> str:
        if self.guard == "empty_content":
            return f"refusing to delete {len(self.keys)} managed {self.kind}s: the content directory is empty"
        return (
            f"refusing to delete {len(self.keys)} of {self.managed} managed {self.kind}s (guard {self.limit}); "
            "raise prune.max_deletes or prune.max_fraction in cmssync.yaml, or pass --allow-mass-delete"
        )


class KeptObjects(_Frozen):
    """Managed objects no longer in the content, kept because pruning is off: a plan entry, shown in every format.

    Like blocked deletes, they make the plan not empty: the site holds objects the content no longer has.
    """

    kind: Kind
    keys: tuple[str, ...]

    def describe(self) -> str:
        listed = ", ".join(self.keys[:5]) + (" …" if len(self.keys) > 5 else "")
        return (
            f"{len(self.keys)} managed {self.kind}(s) no longer in the content, kept (use --prune to delete): {listed}"
        )


class SiteAdditions(_Frozen):
    """Blocks an editor added to a managed area, kept in place because the content does not own its areas
    (``cmssync.plan.additions``): a plan entry, shown in every format; the site keeps them, so the plan stays empty."""

    kind: Kind = "page"
    key: str
    area: str
    blocks: tuple[tuple[str, int], ...]
    """(block type, block id) of each added block, in area order."""

    def describe(self) -> str:
        listed = ", ".join(f"{block_type} {block_id}" for block_type, block_id in self.blocks)
        count = len(self.blocks)
        blocks = "blocks" if count != 1 else "block"
        return (
            f"{self.kind} {self.key}, area {self.area}: {count} {blocks} added on the site, kept "
            f"({listed}); areas: owned in cmssync.yaml (or areas_owned: true in the page file) deletes them"
        )


SiteChangeAction = Literal["propose", "adopt"]
"""What becomes of a site change: listed to bring back into the content, or written into the content by apply."""


class SiteChange(_Object):
    """An editor's approved change to what the content did not change since the last sync (the three-way base),
    which the drift policy (``propose``, ``adopt``) keeps on the site instead of writing over it: a plan entry,
    shown in every format; it makes the plan not empty (the content and the site differ) but writes nothing there.

    ``changes`` and ``blocks`` go from the content's value (``before``) to the site's (``after``): what bringing
    the change back into the content does. ``live_version_id`` is the site's live version that holds them (the API
    names no author or approver of a version: ``tests/conformance/concrete-9.3.1/versions.jsonl``)."""

    action: SiteChangeAction = "propose"
    reason: Literal["changed_on_site"] = "changed_on_site"
    changes: tuple[FieldChange, ...] = ()
    blocks: tuple[BlockChange, ...] = ()
    live_version_id: int | None = None

    @property
    def fields(self) -> tuple[str, ...]:
        """The fields and areas changed (``description``, ``area:Main``), in order."""
        areas = dict.fromkeys(f"area:{block.area}" for block in self.blocks)
        return (*(change.field for change in self.changes), *areas)

    def describe(self) -> str:
        version = f" (live version {self.live_version_id})" if self.live_version_id is not None else ""
        verb = (
            "written into the content" if self.action == "adopt" else "kept on the site, to bring back into the content"
        )
        return f"{self.kind} {self.key}: {', '.join(self.fields)} changed on the site{version}; {verb}"


class Rebase(_Object):
    """A managed object whose content changed since the last sync to what the site holds (a proposal merged, an
    editor's words merged into the content by hand): nothing to write, but ``apply`` records the site's version
    as its base (``digest``; a page's ``base`` too), so the next change an editor makes there is a site change
    again, not a conflict with the content's old value. Not a change: a plan with only these is empty."""

    digest: str
    base: PageBase | None = None
    """A page's per-field base (a user or file has its digest only)."""
    live_version_id: int | None = None


class PlanHeader(_Frozen):
    """Where a plan came from: enough to tell two saved plans (or two PR comments) apart."""

    cmssync_version: str
    created_at: str
    """UTC, ISO 8601."""
    content_dir: str
    options: dict[str, Any] = Field(default_factory=dict)
    """The plan options asked for (targets, prune, …), as given."""


class Plan(_Frozen):
    format_version: int = OUTPUT_FORMAT_VERSION
    site: str
    publish: Literal["approve", "draft"] = "approve"
    content_digest: str
    actions: tuple[Action, ...] = ()
    blocked: tuple[BlockedDeletes, ...] = ()
    kept: tuple[KeptObjects, ...] = ()
    """Managed objects removed from the content and kept, because pruning is off."""
    conflicts: tuple[FieldConflict, ...] = ()
    """Every three-way conflict found, settled or not (``cmssync.plan.conflicts``)."""
    held: tuple[HeldObject, ...] = ()
    """Objects refused or skipped: conflicts under policy ``fail``, foreign drafts under ``fail`` or ``skip``."""
    warnings: tuple[str, ...] = ()
    """Things the user should know that change nothing: unmanaged groups, protected objects, page-move limits."""
    site_additions: tuple[SiteAdditions, ...] = ()
    """Blocks editors added to managed areas, kept (the content does not own the areas)."""
    site_changes: tuple[SiteChange, ...] = ()
    """Editors' approved changes kept on the site by the drift policy (``propose``, ``adopt``): to bring back."""
    rebase: tuple[Rebase, ...] = ()
    """Pages whose content caught up with the site: apply records their base (:class:`Rebase`)."""
    header: PlanHeader | None = None
    trees: dict[str, str] = Field(default_factory=dict)
    """Home path → locale of each locale tree of the site, when it has more than one (``cmssync.content.trees``):
    reports name each page's tree. Empty on a single-locale site."""
    tie_reads: dict[str, int] = Field(default_factory=dict)
    """Files and users (by kind) the observation read one request each because the site's lists could not return
    them (``Snapshot.tie_reads``): the cost of dates that tie in groups longer than a list page."""

    @property
    def writes(self) -> bool:
        """Whether applying would write anything."""
        return bool(self.actions)

    def address_of(self, kind: str, key: str) -> Address | None:
        """Where a page or stack the plan names lives: the site and its locale tree (``locale`` empty when the site
        has one tree, or the tree is not known: ``cmssync.content.trees``); None for the other kinds."""
        path = object_page_path(kind, key)
        return Trees.of_homes(self.trees).address(path) if path is not None else None

    def tree_of(self, kind: str, key: str) -> str | None:
        """The locale of the tree a page or stack the plan names is in, when the site has several trees and the
        tree is known; else None."""
        address = self.address_of(kind, key) if self.trees else None
        return address.locale or None if address is not None else None

    @property
    def is_empty(self) -> bool:
        """The site matches the content: nothing to write, no delete held back by a guard, no object held, no
        managed object removed from the content and kept, no site change to bring back. The one answer behind the
        JSON's ``has_changes`` and ``is_empty`` and the exit code (:func:`plan_exit_code`)."""
        return not self.actions and not self.blocked and not self.held and not self.kept and not self.site_changes

    @property
    def has_changes(self) -> bool:
        """The site differs from the content (``not is_empty``): ``--detailed-exitcode`` exits 2."""
        return not self.is_empty

    @property
    def refused(self) -> tuple[HeldObject, ...]:
        """Held objects that make ``apply`` fail (exit 1): unsettled conflicts, foreign drafts under ``fail``,
        objects that could not be read and what depends on them."""
        return tuple(entry for entry in self.held if entry.fails)

    @property
    def unreadable(self) -> tuple[HeldObject, ...]:
        """Held because an object could not be read (``plan`` exits 1 for these too: its plan is incomplete)."""
        return tuple(entry for entry in self.held if entry.reason == "unreadable")

    def summary(self) -> dict[str, int]:
        """Counts by operation, always with the four main keys present."""
        counts = Counter(action.op for action in self.actions)
        base = {"create": 0, "update": 0, "delete": 0, "move": 0}
        return base | dict(counts)

    def by_id(self) -> dict[str, Action]:
        return {action.id: action for action in self.actions}


_MARKUP_ESCAPES = str.maketrans({"<": "\\u003c", ">": "\\u003e", "&": "\\u0026"})


def markup_free_json(text: str) -> str:
    """JSON text with ``<``, ``>`` and ``&`` written as ``\\u003c``, ``\\u003e``, ``\\u0026``: the same document, in
    which a browser that takes the file for HTML (a plan file saved as ``report.html``, JSON served as HTML) finds
    no tag, so a ``<script>`` in a block's content never runs. Those characters only occur inside JSON strings."""
    return text.translate(_MARKUP_ESCAPES)


def plan_exit_code(plan: Plan, *, detailed: bool) -> int:
    """The exit code of ``plan`` (and ``status``): 1 when an object could not be read (the plan is not the whole
    answer), 2 under ``--detailed-exitcode`` when the site differs from the content, else 0."""
    if plan.unreadable:
        return EXIT_ERROR
    if detailed and plan.has_changes:
        return EXIT_CHANGES
    return EXIT_OK


def _matches(plan: Plan) -> str:
    """What an empty plan says of the site: all of it, or only what ``--target`` / ``--exclude`` selected."""
    options = plan.header.options if plan.header is not None else {}
    if options.get("targets") or options.get("excludes"):
        return "The objects selected (--target, --exclude) match the content."
    return "The site matches the content."


def site_changes_line(changes: tuple[SiteChange, ...]) -> str:
    """`` N site changes kept …`` for the summary, or nothing."""
    proposed = sum(1 for change in changes if change.action == "propose")
    adopted = len(changes) - proposed
    parts = [f"{proposed} to bring back into the content (drift: propose)"] if proposed else []
    parts += [f"{adopted} to write into the content (drift: adopt)"] if adopted else []
    if not parts:
        return ""
    return f" Site changes not reverted: {', '.join(parts)}."


def summary_line(plan: Plan) -> str:
    if plan.is_empty:
        added = sum(len(entry.blocks) for entry in plan.site_additions)
        if added:
            return f"No changes. {added} block{'s' if added != 1 else ''} added on the site kept (areas not owned)."
        return f"No changes. {_matches(plan)}"
    held = _held_back(plan)
    if not plan.writes:
        return f"Plan: nothing to apply.{held}"
    return "Plan: " + ", ".join(_write_counts(plan)) + "." + held


def _held_back(plan: Plan) -> str:
    """What the plan does not do, as sentences after the counts: held deletes, kept objects, held objects, blocks
    added on the site."""
    blocked = sum(len(entry.keys) for entry in plan.blocked)
    held = f" {blocked} delete{'s' if blocked != 1 else ''} held back by the prune guards." if blocked else ""
    kept = sum(len(entry.keys) for entry in plan.kept)
    if kept:
        held += f" {kept} managed object{'s' if kept != 1 else ''} no longer in the content, kept (--prune deletes)."
    if plan.held:
        refused = len(plan.refused)
        skipped = len(plan.held) - refused
        unreadable = len(plan.unreadable)
        refused -= unreadable
        parts_held = [f"{unreadable} not readable or depending on one (see above)"] if unreadable else []
        parts_held += [f"{refused} refused (conflicts or foreign drafts; see above)"] if refused else []
        parts_held += [f"{skipped} skipped (foreign drafts)"] if skipped else []
        held += " Held back: " + ", ".join(parts_held) + "."
    added = sum(len(entry.blocks) for entry in plan.site_additions)
    if added:
        held += f" {added} block{'s' if added != 1 else ''} added on the site kept (areas not owned)."
    held += site_changes_line(plan.site_changes)
    return held


def _write_counts(plan: Plan) -> list[str]:
    """``3 to create``, ``1 to update``, … and the block deletes inside page updates."""
    counts = plan.summary()
    parts = [f"{counts['create']} to create", f"{counts['update']} to update", f"{counts['delete']} to delete"]
    if counts["move"]:
        parts.append(f"{counts['move']} to move")
    for op in ("replace", "publish"):
        if counts.get(op):
            parts.append(f"{counts[op]} to {op}")
    block_deletes = sum(1 for action in plan.actions for block in action.blocks if block.op == "delete")
    if block_deletes:  # inside page updates: "0 to delete" must not hide a block about to go
        parts.append(f"{block_deletes} block{'s' if block_deletes != 1 else ''} to delete")
    return parts
