"""The state store: what cmssync manages, and what it last applied (design.md §5, "State").

One JSON file (``.cmssync/state.json`` by default) records, per managed object, its remote id and the digest of what
was last applied; for files also the content hash, public URL and folder; for pages the live version id, the pending
draft version id (so a draft left by an interrupted run is found and finished, not duplicated) and the block ids of
each managed area; for users a keyed digest of the password. Presence in the state *is* ownership: cmssync never
deletes what is not recorded here. Two files sit beside it:

* ``state.json.key`` (mode 0600): a random 256-bit key. A password is remembered only as
  ``HMAC-SHA256(key, username NUL password)``. It is keyed because the state is meant to be shared (committed,
  kept as a CI artifact, on a volume): an unkeyed hash of a human-chosen password can be brute-forced offline, a
  keyed one cannot without the key, which stays beside the state and out of git. The username is mixed in so that
  two users with one password do not show equal digests. Losing the key is harmless: every password then counts as
  changed and is set once more.
* ``state.json.lock``: held with ``flock`` while an apply runs; it records the holder (pid, host, command, start
  time) for the error message and for ``status``. The kernel drops an ``flock`` when its process dies, so a lock
  whose holder was killed is free; the leftover holder record is reported with a warning and overwritten. The file
  is never deleted: deleting a lock file lets two processes lock two different inodes.

Writes are incremental (``cmssync.state.journal``): a save appends the changed records to ``state.json.journal``;
``state.json`` is rewritten atomically (temp file in the same directory, fsync, ``os.replace``, fsync of the
directory) only when the journal is compacted — at the end of a locked run, or when the journal outgrows the state.
Loading replays the journal over the snapshot, so a SIGKILL at any point leaves a state holding every change whose
save returned; a torn last journal line is ignored, a leftover temp file is ignored on load and removed the next time
the lock is taken. Saving costs one small append (about 60 µs), so the executor saves after every completed remote
change.

The format is versioned (``format_version``): newer versions are refused, older ones migrated by ``MIGRATIONS``.
Loading validates strictly (unknown keys are errors) and reports any problem as a ``StateError`` naming the file.
Digest fields only accept ``sha256:<hex>`` / ``hmac-sha256:<hex>``, so no field can carry a secret by mistake.

Not thread-safe for mutation: change a ``State`` and save it from one thread (the executor's event loop).
"""

from __future__ import annotations

import contextlib
import hmac
from collections.abc import Callable, Mapping
from typing import Annotated, Any, Final, Literal, Self

from pydantic import (
    AfterValidator,
    BaseModel,
    ConfigDict,
    Field,
    PrivateAttr,
    SerializerFunctionWrapHandler,
    StringConstraints,
    ValidationError,
    model_serializer,
    model_validator,
)

from cmssync.errors import StateError
from cmssync.memory import SharedFieldsModel, shared
from cmssync.secrets import url_without_credentials
from cmssync.state.keyring import KeyRing, keyed_digest

FORMAT_VERSION: Final = 1


Digest = Annotated[str, StringConstraints(pattern=r"^sha256:[0-9a-f]{64}$")]
"""``sha256:<hex>``, as made by ``cmssync.plan.normalize.digest`` (and for file contents, of the bytes)."""
PasswordDigest = Annotated[str, StringConstraints(pattern=r"^hmac-sha256:[0-9a-f]{64}$")]

OWN_MAPS: Final = ("pages", "files", "users", "retired_files", "uploads")
"""The State's own maps of records (``State._changes`` and the journal name a change by its map)."""
TOP_LEVEL_KINDS: Final = {"group": "groups"}
"""Kinds kept in ``State.kinds`` whose records a state document holds at its top, in a map of their own, where
the states written before their records moved to ``kinds`` (issue 33) hold them: the kind → the map's name, which
also names their changes in ``State._changes`` and the journal. A state file reads and is written as before (the
map always written, after ``users``, empty or not)."""
RECORD_MAPS: Final = (*OWN_MAPS, *TOP_LEVEL_KINDS.values())
"""Every map of records at the top of a state document (what a journal entry may name, beside ``kinds.<kind>``)."""
KIND_PREFIX: Final = "kinds."
"""How a change to a record kept in ``State.kinds`` is named in ``State._changes`` and the journal:
``kinds.<kind>`` (a kind of :data:`TOP_LEVEL_KINDS`: its map's name)."""

# format_version N -> function turning a raw document of version N into version N + 1.
MIGRATIONS: dict[int, Callable[[dict[str, Any]], dict[str, Any]]] = {}


def migrate_document(raw: dict[str, Any], where: str) -> dict[str, Any]:
    """A state document brought to :data:`FORMAT_VERSION` (every backend reads through this); a newer one is refused."""
    version: int = raw["format_version"]
    if version > FORMAT_VERSION:
        raise StateError(
            f"{where}: state format_version {version} is newer than this cmssync understands ({FORMAT_VERSION}); "
            "upgrade cmssync"
        )
    while version < FORMAT_VERSION:
        migrate = MIGRATIONS.get(version)
        if migrate is None:
            raise StateError(f"{where}: cannot migrate state format_version {version}")
        raw = migrate(raw)
        version += 1
        raw["format_version"] = version
    return raw


def _as_written(record: dict[str, Any]) -> dict[str, Any]:
    """A record of a kind of :data:`TOP_LEVEL_KINDS` as its map holds it: its id, and its other fields only when
    set (a group's record is its id alone, as before)."""
    return {name: value for name, value in record.items() if name == "id" or value not in (None, {})}


def dumped(change: str, record: BaseModel) -> dict[str, Any]:
    """A record as the journal writes it, for a change named ``change`` (a top-level map's record as the map holds
    it)."""
    data: dict[str, Any] = record.model_dump(mode="json")
    return _as_written(data) if change in TOP_LEVEL_KINDS.values() else data


def changes_of(kind: str) -> str:
    """How ``State._changes`` and the journal name a change to a record of ``kind`` kept in ``State.kinds``."""
    return TOP_LEVEL_KINDS.get(kind) or KIND_PREFIX + kind


def kind_of_changes(name: str) -> str | None:
    """The kind kept in ``State.kinds`` whose changes are named ``name`` (the inverse of :func:`changes_of`); None:
    one of the State's own maps (or ``site``)."""
    if name.startswith(KIND_PREFIX):
        return name.removeprefix(KIND_PREFIX)
    return next((kind for kind, map_name in TOP_LEVEL_KINDS.items() if map_name == name), None)


class _Record(SharedFieldsModel):
    """A frozen record; equal sets of given fields are one object (:mod:`cmssync.memory`)."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    def evolve(self, **changes: Any) -> Self:
        """A copy with some fields changed, validated like a new record.

        Built from the record's own field values, not a dump of them: a nested record (a page's ``base``) is
        frozen and was validated when it was made, so it is taken as it is instead of being dumped and validated
        again (an apply evolves two records per page; with the base that was most of the cost)."""
        return self.model_validate({**self.__dict__, **changes})


class AreaBase(_Record):
    """One managed area as cmssync last applied it: each block's type and the value keys it wrote (``keep:<id>``
    for a kept block), and the digest of those values. The live area projected on the same shape gives the same
    digest until someone edits it (``cmssync.plan.conflicts``)."""

    shape: Annotated[tuple[tuple[str, ...], ...], AfterValidator(shared)] = ()
    """One object for equal shapes (most areas of a site are alike: :func:`cmssync.memory.shared`)."""
    digest: Digest
    blocks: tuple[str, ...] = ()
    """A short digest per block, in order (recorded since issue 34; empty in older states): which blocks of the area
    an editor changed, so a change the content already holds, or one to a block the content left alone, is not taken
    for a conflict with the content's change to another block of the area."""


class PageBase(_Record):
    """What cmssync last applied to a page, per field: the base of three-way conflicts (``cmssync.plan.conflicts``).

    ``fields`` holds the values (name, description, type, template, ``attributes.<handle>``, ``publish_end_date``),
    and the site's description and attributes then for those the content left out (a field it sets later has a
    base); areas are kept as digests (:class:`AreaBase`), so their base value is not shown in a conflict."""

    fields: dict[str, Any] = Field(default_factory=dict)
    areas: dict[str, AreaBase] = Field(default_factory=dict)


class PageRecord(_Record):
    id: int
    digest: Digest | None = None
    """Digest of the normalised page as last applied (name, description, attributes, managed areas)."""
    live_version_id: int | None = None
    draft_version_id: int | None = None
    """An unapproved version cmssync started and has not approved yet; the next run finishes it."""
    draft_target: Digest | None = None
    """The digest of the page the writes into ``draft_version_id`` go toward, recorded with it before the first
    write: a run killed half way leaves a draft that differs from the base only by cmssync's own writes, which the
    next run (same content) must not take for a change made on the site. Written only when set."""
    draft_from: tuple[int, ...] | None = None
    """The ids of the blocks the draft began with (the page's blocks before cmssync's first write into it),
    journaled with the draft before that write. A block of cmssync's own draft that is not among them is one of
    cmssync's writes — its answer perhaps lost to a kill —, reconciled with the content by the next run, never kept
    as an editor's addition. Written only when set."""
    base: PageBase | None = None
    """Per-field base of three-way conflicts; None in states written before it (then the live version id decides)."""
    protected: bool = False
    """The page file said ``protect: true``: never deleted, even once its file is gone."""

    @model_serializer(mode="wrap")
    def _without_unset_draft(self, handler: SerializerFunctionWrapHandler) -> dict[str, Any]:
        data: dict[str, Any] = handler(self)
        for name in ("draft_target", "draft_from"):
            if data.get(name) is None:
                data.pop(name, None)
        return data

    @model_validator(mode="before")
    @classmethod
    def _drop_legacy_areas(cls, data: Any) -> Any:
        # States written before 0.2 carry ``areas`` (block ids per area) that nothing ever read: dropped on load.
        if isinstance(data, dict) and "areas" in data:
            return {key: value for key, value in data.items() if key != "areas"}
        return data


class FileRecord(_Record):
    id: str | int
    """The file's UUID (files made before 9.x have only a numeric id)."""
    hash: Digest
    """sha256 of the file's bytes as uploaded."""
    url: str
    folder: int | None = None
    digest: Digest | None = None
    """Digest of the normalised metadata (title, description, tags, attributes) as last applied."""


class UserRecord(_Record):
    id: int
    digest: Digest | None = None
    password_digest: PasswordDigest | None = None


class KindRecord(_Record):
    """A record of a kind kept in ``State.kinds`` (every kind but pages, stacks, files and users): the object's id
    on the site, the digest of what was last applied, and any plain values the kind keeps beside them."""

    id: str | int | None = None
    digest: Digest | None = None
    values: dict[str, str | int | float | bool | None] = Field(default_factory=dict)


class RetiredFileRecord(_Record):
    """A site file cmssync replaced (new bytes uploaded under a new id) and must delete once the pages point at the
    new one. Recorded *before* the upload, so a killed or failed run leaves the old id in the state instead of an
    orphan that stays public forever; any later apply deletes it when nothing of that run failed."""

    path: str
    """The content path the file served (for messages)."""


class UploadRecord(_Record):
    """An upload of a content file that was sent and not yet recorded: journaled *before* the bytes are sent, so
    a run killed between the site's commit and the answer leaves the upload's name and SHA-256 in the state, and
    the next apply adopts the copy it made (same bytes) or deletes it (the content moved on) instead of leaving it
    on the site, recorded nowhere and publicly served (``cmssync.sync.apply_assets``)."""

    sha256: Digest
    size: int
    folder: int | None = None


ProbedKind = Literal["text", "number", "empty"]
"""What a field of a probed block type read as (``cmssync.sync.block_type_probe``): text, a number (a flag's
``0``/``1`` too), or nothing."""


class BlockTypeVerdict(_Record):
    """What ``cmssync probe-block-type`` found for a block type cmssync does not model, on this state's site: whether
    one block of it, copied to the scratch page, read back, written back through the API's block update and read
    again (and once with a text field changed), came back as it was read. Pull writes blocks of a ``symmetric`` type
    as content (``raw: true``, these fields); any other is kept as a placeholder naming ``reason``."""

    symmetric: bool
    fields: dict[str, ProbedKind] = Field(default_factory=dict)
    """The fields the probed block's read showed, each with what it read as (pull keeps a block of the type whose
    read shows another field: the type changed since the probe)."""
    reason: str | None = None
    """Why the type is not symmetric (the first difference, or the site's answer to the write)."""
    block_id: int
    """The block that was probed (a copy of it was written, never the block itself)."""
    probed_at: str
    """When (ISO 8601, UTC)."""


class SiteRecord(_Record):
    url: str
    api_prefix: str
    probe_page: int | None = None
    """The trashed scratch page the page-type id probe and the block-type probe reuse
    (``cmssync.sync.page_type_numbers``), once made."""
    block_types: dict[str, BlockTypeVerdict] = Field(default_factory=dict)
    """Block type handle → the verdict of ``cmssync probe-block-type`` on this site (written only when not empty)."""
    handle: str | None = None
    """The site of a multi-site installation (``site.handle``); written only when set, so a default site's state
    reads as before."""

    @model_serializer(mode="wrap")
    def _without_empty_fields(self, handler: SerializerFunctionWrapHandler) -> dict[str, Any]:
        data: dict[str, Any] = handler(self)
        if not data.get("block_types"):
            data.pop("block_types", None)
        if data.get("handle") is None:
            data.pop("handle", None)
        return data


class State(BaseModel):
    """Everything cmssync manages on one site, by kind (:meth:`records_of`). Keys: page path, path under ``files/``,
    username; another kind's own key (a group's name) in :attr:`kinds`."""

    model_config = ConfigDict(extra="forbid")

    format_version: Literal[1] = FORMAT_VERSION
    site: SiteRecord | None = None
    pages: dict[str, PageRecord] = Field(default_factory=dict)
    files: dict[str, FileRecord] = Field(default_factory=dict)
    users: dict[str, UserRecord] = Field(default_factory=dict)
    retired_files: dict[str, RetiredFileRecord] = Field(default_factory=dict)
    """File id → the replaced file to delete (see :class:`RetiredFileRecord`); written only when not empty, so a
    state without one reads the same in earlier versions."""
    uploads: dict[str, UploadRecord] = Field(default_factory=dict)
    """Path under ``files/`` → the upload sent for it and not yet recorded (:class:`UploadRecord`); written only
    when not empty."""
    kinds: dict[str, dict[str, KindRecord]] = Field(default_factory=dict)
    """Kind name → key → record, for every kind but pages (and stacks), files and users, which keep their own maps
    above. Written only when a record exists, so a state without one is written as before; records of a kind this
    run does not manage are kept as they are."""

    _keyring: KeyRing = PrivateAttr(default_factory=lambda: KeyRing(None))
    _changes: set[tuple[str, str]] = PrivateAttr(default_factory=set)
    """(kind, key) of the records changed since the store last wrote them: what the next save appends
    (``cmssync.state.journal``). Kept by the record_/forget_/bind_site methods, the only ways code changes a State."""

    def __eq__(self, other: object) -> bool:
        # Equal content is equal state, whichever password key each one carries.
        return isinstance(other, State) and self.__dict__ == other.__dict__

    def record_page(self, path: str, record: PageRecord) -> None:
        self.pages[path] = record
        self._changes.add(("pages", path))

    def forget_page(self, path: str) -> PageRecord | None:
        self._changes.add(("pages", path))
        return self.pages.pop(path, None)

    def record_file(self, path: str, record: FileRecord) -> None:
        self.files[path] = record
        self._changes.add(("files", path))

    def forget_file(self, path: str) -> FileRecord | None:
        self._changes.add(("files", path))
        return self.files.pop(path, None)

    def retire_file(self, file_id: str, record: RetiredFileRecord) -> None:
        self.retired_files[file_id] = record
        self._changes.add(("retired_files", file_id))

    def forget_retired_file(self, file_id: str) -> None:
        self._changes.add(("retired_files", file_id))
        self.retired_files.pop(file_id, None)

    def record_upload(self, path: str, record: UploadRecord) -> None:
        self.uploads[path] = record
        self._changes.add(("uploads", path))

    def forget_upload(self, path: str) -> None:
        if path in self.uploads:
            self._changes.add(("uploads", path))
            del self.uploads[path]

    @model_validator(mode="before")
    @classmethod
    def _top_level_kinds_into_kinds(cls, data: Any) -> Any:
        # A kind of TOP_LEVEL_KINDS is read from its map at the document's top into ``kinds``.
        if not isinstance(data, dict) or not any(name in data for name in TOP_LEVEL_KINDS.values()):
            return data
        kinds = data.get("kinds") or {}
        if not isinstance(kinds, dict):
            return data  # for the validation to report
        data, kinds = dict(data), dict(kinds)
        for kind, name in TOP_LEVEL_KINDS.items():
            records = data.pop(name, None)
            if records:
                kinds[kind] = records
        data["kinds"] = kinds
        return data

    @model_serializer(mode="wrap")
    def _without_empty_maps(self, handler: SerializerFunctionWrapHandler) -> dict[str, Any]:
        data: dict[str, Any] = handler(self)
        kinds = data.get("kinds") or {}
        top = {
            name: {key: _as_written(record) for key, record in kinds.get(kind, {}).items()}
            for kind, name in TOP_LEVEL_KINDS.items()
        }
        written: dict[str, Any] = {}
        for name, value in data.items():
            if name == "kinds":
                value = {kind: records for kind, records in value.items() if kind not in TOP_LEVEL_KINDS}
            if value or name not in ("retired_files", "uploads", "kinds"):
                written[name] = value
            if name == "users":
                written.update(top)
        return written

    def sorted_copy(self) -> State:
        """A copy whose maps are in key order, as the backends write it (a committed state file's diffs stay small;
        sorting the maps is much cheaper than ``json.dumps(sort_keys=True)`` over the whole document: about 4 ms
        against 24 ms for 2,500 objects)."""
        ordered = {name: dict(sorted(getattr(self, name).items())) for name in OWN_MAPS}
        ordered["kinds"] = {kind: dict(sorted(records.items())) for kind, records in sorted(self.kinds.items())}
        return self.model_copy(update=ordered)

    def records_of(self, kind: str) -> Mapping[str, Any]:
        """The records of a kind by key (empty when it has none): the page, file and user kinds' own maps, every
        other kind's in :attr:`kinds`."""
        own: dict[str, Mapping[str, Any]] = {"page": self.pages, "file": self.files, "user": self.users}
        return own[kind] if kind in own else self.kinds.get(kind, {})

    def record(self, kind: str, key: str, record: KindRecord) -> None:
        """Record an object of a kind kept in :attr:`kinds`."""
        self.kinds.setdefault(kind, {})[key] = record
        self._changes.add((changes_of(kind), key))

    def forget(self, kind: str, key: str) -> KindRecord | None:
        """Forget an object of a kind kept in :attr:`kinds` (a kind left without records leaves the document)."""
        self._changes.add((changes_of(kind), key))
        records = self.kinds.get(kind, {})
        record = records.pop(key, None)
        if not records:
            self.kinds.pop(kind, None)
        return record

    def record_user(self, username: str, record: UserRecord) -> None:
        self.users[username] = record
        self._changes.add(("users", username))

    def forget_user(self, username: str) -> UserRecord | None:
        self._changes.add(("users", username))
        return self.users.pop(username, None)

    def bind_site(
        self, url: str, api_prefix: str, *, allow_other_site: bool = False, handle: str | None = None
    ) -> None:
        """Record the site this state belongs to; refuse a state recorded for another site unless allowed, and
        always one recorded for another site of the installation (``handle``: pages of two sites share paths)."""
        wanted = SiteRecord(url=_canonical_url(url), api_prefix=api_prefix.rstrip("/") or "/", handle=handle)
        if self.site is not None and self.site.handle != handle:
            recorded, asked = (f"site {name!r}" if name else "the default site" for name in (self.site.handle, handle))
            raise StateError(
                f"state was recorded for {recorded} of the installation, not {asked}; refusing to mix up two sites "
                "(each site keeps its own content directory and state: docs/content-format.md › Several sites)"
            )
        if self.site is not None and self.site.url == wanted.url:
            wanted = wanted.evolve(probe_page=self.site.probe_page, block_types=self.site.block_types)
        if self.site is not None and self.site.url != wanted.url and not allow_other_site:
            raise StateError(
                f"state was recorded for {self.site.url}, not {wanted.url}; refusing to mix up two sites "
                "(point `state:` at another file for this site)"
            )
        if wanted != self.site:
            self._changes.add(("site", ""))
        self.site = wanted

    def record_probe_page(self, page_id: int) -> None:
        """Remember the page-type probe's scratch page (the state must be bound to its site)."""
        assert self.site is not None, "a state records a scratch page only once bound to its site"
        self.site = self.site.evolve(probe_page=page_id)
        self._changes.add(("site", ""))

    def record_block_type(self, handle: str, verdict: BlockTypeVerdict) -> None:
        """Remember a block type's probe verdict for this state's site (the state must be bound to it)."""
        assert self.site is not None, "a state records a verdict only once bound to its site"
        self.site = self.site.evolve(block_types={**self.site.block_types, handle: verdict})
        self._changes.add(("site", ""))

    def password_digest(self, username: str, password: str) -> str:
        """The keyed digest to store for ``password`` (creates the key file beside the state when needed)."""
        key = self._keyring.get(create=True)
        assert key is not None
        return keyed_digest(key, username, password)

    def password_changed(self, username: str, password: str) -> bool:
        """Whether ``password`` differs from the one last applied for ``username`` (True when unknown)."""
        record = self.users.get(username)
        if record is None or record.password_digest is None:
            return True
        key = self._keyring.get(create=False)
        if key is None:
            return True
        return not hmac.compare_digest(keyed_digest(key, username, password), record.password_digest)


def _canonical_url(url: str) -> str:
    """The site's address as the state keeps it: no credentials (a password in ``site.url`` never reaches the state
    document), scheme and host in lower case, no trailing slash."""
    return url_without_credentials(url).rstrip("/")


def validated_state(raw: dict[str, Any], where: str) -> State:
    """A migrated state document as a :class:`State` (every backend reads through this), or a ``StateError`` naming
    ``where`` and the first five problems.

    The page records are validated first, one at a time, each taking its plain dict's place in ``raw`` as it is
    made: the document's dicts are freed as the records grow, instead of the whole document and all the records
    being held at once. A record that is not valid stays a dict, for the whole document's validation to report."""
    pages = raw.get("pages")
    if isinstance(pages, dict):
        for path, record in pages.items():
            with contextlib.suppress(ValidationError):
                pages[path] = PageRecord.model_validate(record)
    try:
        return State.model_validate(raw)
    except ValidationError as exc:
        problems = "; ".join(
            f"{'.'.join(str(part) for part in error['loc']) or '(top)'}: {error['msg']}" for error in exc.errors()[:5]
        )
        more = f" (and {exc.error_count() - 5} more)" if exc.error_count() > 5 else ""
        raise StateError(f"{where}: the state is invalid: {problems}{more}") from None
