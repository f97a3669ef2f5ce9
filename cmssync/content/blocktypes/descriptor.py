"""What a block type declares: its fields (by generic kind) and how it behaves on pull, apply and compare.

A field's **kind** says everything the rest of cmssync needs to know about it, for every type alike:

========== ======================= =============================== ==================================== ===========
kind       content (YAML)          stored form (apply writes)      export form (API reads, compared)    pull writes
========== ======================= =============================== ==================================== ===========
text       a string, references    references rendered             as stored, site links as base URL    references
rich_text  HTML, references        ``{CCM:CID_n}``, download links  ``{ccm:export:page:/p}``,            references
                                   by UUID, ``<concrete-picture     ``{ccm:export:file:…}``; compared     (links from
                                   fID=n>``                         canonically (names lower-cased,       the page's
                                                                    download links by presence)           rendering)
string     a plain string          as written                      as written                           the string
bool       true / false            ``"1"`` / ``"0"``               ``"1"`` / ``"0"``                    a boolean
int        an integer              the number                      its string form                      an integer
choice     one of ``choices``      as written                      as written                           the string
file       ``${file-id:PATH}``     the numeric file id             ``{ccm:export:file:<prefix>:<name>}`` ``${file-id}``
page       ``${page-id:/path}``    the page id                     ``{ccm:export:page:/path}``          ``${page-id}``
url        a URL, references       references rendered             site links as base URL               references
page_type  a page type handle      the page type's numeric id      ``{ccm:export:pagetype:<handle>}``   the handle
                                   (learned by a probe)
folder     a folder               not translatable yet            ``{ccm:export:filefolder:…}``        placeholder
stack      a stack's handle       the stack's page id             none (``[]``): named from the render  the handle
                                                                   as ``{ccm:export:page:/!stacks/h}``
========== ======================= =============================== ==================================== ===========

(``cmssync.plan.references`` has the translation between the forms. The API reads a ``stack`` column as nothing
at all; ``cmssync.plan.stack_displays`` names the stack from the page's rendering, in the form a page column's
export would have. Page-type ids are learned from the site by
``cmssync.sync.page_type_numbers``. ``folder`` columns make a read lossy — the API offers no safe way back from their
export to an id — so pull keeps such blocks as placeholders.)

A type without a content model (``raw: true``) may still name the few of its columns that need translating
(:attr:`BlockType.columns`), the keys its read shows that only mirror its columns (:attr:`BlockType.derived`), and
the keys its controller reads *instead of* its columns (:attr:`BlockType.write`: link choosers, modes).

Pure data: no I/O and no imports of the rest of cmssync, so every layer may read it.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any, Literal

FieldKind = Literal[
    "text", "rich_text", "string", "bool", "int", "choice", "file", "page", "url", "page_type", "folder", "stack"
]
COLUMN_KINDS: frozenset[FieldKind] = frozenset({"file", "page"})
"""Kinds that hold one object as the whole value (a file or page column): written as a bare id."""
_NO_DEFAULT = object()
STACK_UNNAMED = "why"
"""The key of a stack display's read whose stack could not be named from the rendering: the reason (a ``derived``
key: never pulled, compared or written)."""


@dataclass(frozen=True)
class BlockField:
    """One field of a modelled block type's ``value``."""

    name: str
    kind: FieldKind
    doc: str = ""
    default: object = _NO_DEFAULT
    """What the field holds when the content leaves it out; without one the field is required."""
    choices: tuple[str, ...] = ()
    """The allowed values of a ``choice`` field."""

    @property
    def required(self) -> bool:
        return self.default is _NO_DEFAULT


def required(name: str, kind: FieldKind, doc: str = "", *, choices: tuple[str, ...] = ()) -> BlockField:
    return BlockField(name, kind, doc, choices=choices)


def optional(
    name: str, kind: FieldKind, doc: str = "", *, default: object = None, choices: tuple[str, ...] = ()
) -> BlockField:
    return BlockField(name, kind, doc, default=default, choices=choices)


WriteForm = Callable[[dict[str, Any], Callable[[str], int | None]], dict[str, Any]]
"""A value in stored form (references rendered) → what the controller's ``save()`` must be sent, given the page id
of a path (None when unknown)."""

Pulled = Literal["model", "raw", "keep"]
"""How ``pull`` writes a block of the type: with its declared fields (``model``), as ``raw: true`` with the read
value translated (``raw``), or as a ``- keep:`` placeholder (``keep``, with :attr:`BlockType.keep_reason`)."""


@dataclass(frozen=True)
class BlockType:
    """One block type: one declaration in one module of ``cmssync.content.blocktypes``.

    A type with ``fields`` (or ``modelled=True``) has a content model: ``- type: X`` with a ``value`` of those
    fields, validated, compared and pulled field by field. Any other type is written ``raw: true`` with a flat
    mapping, sent as it is (references rendered).
    """

    handle: str
    fields: tuple[BlockField, ...] = ()
    modelled: bool = False
    """Has a content model; implied by ``fields`` (a type may have a model with no field)."""
    keep_reason: str | None = None
    """Why its API read cannot be written back (pull keeps such blocks as placeholders, printing this reason);
    None when it round-trips."""
    uncreatable: str | None = None
    """Why the API cannot add a block of this type (the content must keep an existing one in its place)."""
    holds_areas: Literal["", "columns", "named"] = ""
    """A block whose sub-areas hold blocks, which a delete through the API leaves behind: ``columns`` for a layout
    (its columns are ``Main : 16``), ``named`` for a container (its areas are ``Main : 10 : Title``);
    see :mod:`cmssync.plan.subareas`."""
    dropped_when_zero: frozenset[str] = frozenset()
    """Fields never sent as ``"0"``: the controller rejects the read value written back."""
    rendered_wrapper: str | None = None
    """How the block's public view starts; pull splits an area's rendering by it to recover the stored links of
    ``rich_text`` fields (download links read back wrong through the API)."""
    kept_when: Callable[[Mapping[str, Any]], str | None] | None = None
    """Why one block of a type that otherwise round-trips must be kept, given its read (None: it round-trips)."""
    columns: tuple[BlockField, ...] = ()
    """A ``raw`` type's columns that are not plain text: page types (``page_type``: pulled as the handle, written
    as the id) and folders."""
    derived: frozenset[str] = frozenset()
    """Keys the read shows that only mirror other columns (the image block's ``imageLink__which``…): not pulled, not
    compared, not sent as read — :attr:`write` computes what the controller needs."""
    write: WriteForm | None = None
    """Keys the controller's ``save()`` reads instead of its columns, computed from the stored value at write time
    (block-types.jsonl: without them a link or a mode is silently cleared)."""
    page_type_probe: Mapping[str, Any] | None = None
    """The other keys of a block of this type that, added with its page-type column set, reads the page type's
    handle back: the page-type id probe (``cmssync.sync.page_type_numbers``) adds such blocks."""
    shows_stack: str | None = None
    """The field naming the stack a block of this type shows (a ``stack`` field): the API reads such a block
    without it, so the stack is named from the page's rendering (``cmssync.plan.stack_displays``)."""
    edit_field: str | None = None
    """The text field an editor most often changes (docs and the real-site test of issue 25)."""
    doc: str = ""

    @property
    def has_model(self) -> bool:
        return self.modelled or bool(self.fields)

    @property
    def pulled(self) -> Pulled:
        if self.keep_reason is not None:
            return "keep"
        return "model" if self.has_model else "raw"

    def field_named(self, name: str) -> BlockField | None:
        return next((f for f in self.fields if f.name == name), None)

    def kind_of(self, name: str) -> FieldKind | None:
        found = self.field_named(name) or next((c for c in self.columns if c.name == name), None)
        return found.kind if found is not None else None

    def columns_of(self, kind: FieldKind) -> frozenset[str]:
        """Names of the fields and columns of one kind."""
        return frozenset(f.name for f in (*self.fields, *self.columns) if f.kind == kind)


def link_chooser(value: Mapping[str, Any], *, page: str, file: str, url: str) -> dict[str, Any]:
    """The link chooser (``DestinationPicker``) keys a controller decodes into its three link columns: the first of
    a page id, a file id, an external URL that is set (else none). Without them the link is cleared on save."""
    out = {k: v for k, v in value.items() if not str(k).startswith("imageLink_")}
    if _number(value.get(page)):
        out.update(imageLink__which="page", imageLink_page=_number(value.get(page)))
    elif _number(value.get(file)):
        out.update(imageLink__which="file", imageLink_file=_number(value.get(file)))
    elif str(value.get(url) or ""):
        out.update(imageLink__which="external_url", imageLink_external_url=str(value.get(url)))
    else:
        out["imageLink__which"] = "none"
    return out


def _number(value: object) -> int:
    text = str(value if value is not None else "").strip()
    return int(text) if text.isdigit() else 0
