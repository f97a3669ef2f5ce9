"""How ``cmssync pull`` puts what it read into the content directory without losing local work.

Pull first *stages* everything — page, sidecar and list file (``users.yaml``, …) texts rendered by the content writer,
assets downloaded into ``.cmssync/pull-staging/`` and moved into place (a rename) — and only then
decides, file by file (:func:`settle`):

* **new**: no file there → written;
* **unchanged**: the file already holds exactly this, or the same data in its own layout → not touched;
* **updated**: the file is what the last pull wrote (its SHA-256 is in the pull manifest
  ``.cmssync/pulled.json``) or what the last apply/pull recorded (a page whose digest, or an asset whose hash,
  equals the state's record) → replaced;
* **kept**: anything else — a local edit since the last pull, or a file pull never wrote — is left exactly as it is
  and listed; pull then exits 1. ``--force`` writes it anyway (**forced**).

Each file is replaced atomically and a kept file is never partly merged, so an interrupted or refused pull leaves
every file either as it was or as the site has it. With ``dry_run`` nothing is written (no file, no manifest, no
state) and each file that would change is kept as a unified diff (assets: their sizes) for the command to show.
The manifest holds hashes only, and is rewritten only by a pull that wrote something.
"""

from __future__ import annotations

import contextlib
import difflib
import hashlib
import json
import shutil
import tempfile
from collections import Counter
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from ruamel.yaml import YAML
from ruamel.yaml.error import YAMLError

from cmssync.api.models import File, Page
from cmssync.content import writer
from cmssync.content.files import FileSpec
from cmssync.content.trees import Trees
from cmssync.errors import EXIT_ERROR, EXIT_OK, ContentError, Problem
from cmssync.fileio import move_atomically, write_atomically
from cmssync.plan.desired import Resolver
from cmssync.state.records import KindRecord, PageBase, UserRecord
from cmssync.sync.pull_tree import Unread

MANIFEST = Path(".cmssync") / "pulled.json"
STAGING = Path(".cmssync") / "pull-staging"

Kind = str
"""What a staged file holds: ``page``, ``stack``, ``file``, ``sidecar``, ``users``, ``groups``, ``config``,
``ignore`` (the ``.gitignore``), or the name of a kind added in ``cmssync.sync.kinds`` (its files)."""
Decision = Literal["new", "updated", "unchanged", "kept", "forced"]
WRITES: frozenset[Decision] = frozenset({"new", "updated", "forced"})


@dataclass
class Staged:
    """One file pull wants to hold ``text`` (or, for an asset, the bytes of ``source``)."""

    kind: Kind
    key: str
    """What it is about, for the summary and messages: a page path, a file path, ``users.yaml``."""
    target: Path
    text: str | None = None
    source: Path | None = None
    clean: Callable[[Path], bool] | None = None
    """Whether the file on disk is what the last apply recorded (the state's digest), besides the manifest."""

    def payload_sha(self) -> str:
        if self.text is not None:
            return hashlib.sha256(self.text.encode("utf-8")).hexdigest()
        assert self.source is not None
        return sha256_of(self.source)


@dataclass(frozen=True)
class Preview:
    """What a dry run would do to one file: the unified diff of a text, the sizes of an asset."""

    name: str
    decision: Decision
    diff: tuple[str, ...] = ()
    sizes: tuple[int, int] | None = None


@dataclass
class Settled:
    decisions: dict[Path, tuple[Staged, Decision]] = field(default_factory=dict)
    previews: list[Preview] = field(default_factory=list)

    def kept(self) -> list[Staged]:
        return [staged for staged, decision in self.decisions.values() if decision == "kept"]

    def not_written(self, kind: Kind) -> set[str]:
        """Keys of ``kind`` whose file was kept as it is (the state must not record them as pulled)."""
        return {s.key for s, d in self.decisions.values() if s.kind == kind and d == "kept"}

    def counts(self, kind: Kind) -> Counter[Decision]:
        return Counter(d for s, d in self.decisions.values() if s.kind == kind)


@dataclass(frozen=True)
class PulledPage:
    """What pull keeps of a page it read: enough to record it in the state."""

    id: int
    live_version_id: int | None
    form: tuple[str, PageBase] | None = None
    """Its digest and three-way base when known at staging (``cmssync.sync.pull_record.staged_form``)."""
    approved: str | None = None
    """When its live version was approved (ISO 8601), when the site says."""
    site: Mapping[str, Any] = field(default_factory=dict)
    """Its description and attributes as read (``cmssync.plan.conflicts.site_fields``), for its base."""


@dataclass
class Pulled:
    """What a pull read, and what it wrote (``settled``) into ``root``; with ``dry_run``, what it would write."""

    root: Path
    dry_run: bool = False
    site_url: str = ""
    """The site read (its address, as the client has it)."""
    pages: dict[str, PulledPage] = field(default_factory=dict)
    files: dict[str, tuple[File, FileSpec]] = field(default_factory=dict)
    skipped: list[str] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    users: int = 0
    groups: int = 0
    placeholders: list[str] = field(default_factory=list)
    """``type id (reason)`` of each block written as a ``keep:`` placeholder."""
    editable: Counter[str] = field(default_factory=Counter)
    """Block type → how many blocks were written as content (not placeholders), sub-areas included."""
    sub_areas: list[tuple[str, str, int]] = field(default_factory=list)
    """``(page path, sub-area, blocks)`` of each sub-area of a layout or container written as an area."""
    read_alone: dict[str, int] = field(default_factory=dict)
    """Requests pull made for single pages because no batch could tell (``cmssync.sync.pull_tree``), by reason."""
    unread: Unread = field(default_factory=Unread)
    """Pages read without their render, and objects that could not be read: not pulled (the pull is incomplete)."""
    unnamed_folders: dict[int, int] = field(default_factory=dict)
    files_kept: int = 0
    """Files the site serves as recorded, taken from their local copy instead of downloaded again."""
    page_ids: dict[str, int] = field(default_factory=dict)
    resolver: Resolver | None = None
    """How the pages' references were resolved (set by the read), so that they are recorded the same way."""
    user_records: dict[str, UserRecord] = field(default_factory=dict)
    records: dict[str, dict[str, KindRecord]] = field(default_factory=dict)
    """The records of the kinds kept in ``State.kinds`` by kind and key (their pull hooks'), recorded unless a file
    of the kind was kept (``cmssync.sync.pull_record``)."""
    staged: list[Staged] = field(default_factory=list)
    staging: Path | None = None
    """Where assets are downloaded before they are installed (removed at the end)."""
    settled: Settled = field(default_factory=Settled)
    not_taken: dict[str, list[str]] = field(default_factory=dict)
    """Kind → what the site has and the content does not manage, left out (``cmssync.sync.pull_scope``)."""
    local_users: list[str] = field(default_factory=list)
    """Users whose entry in ``users.yaml`` changed while the site did not: kept as written, record left as it was."""
    local_files: dict[str, list[str]] = field(default_factory=dict)
    """Files whose bytes or sidecar changed while the site's did not (``its bytes``, ``its sidecar``): kept as
    written, the file's record left as it was."""
    local_edits: dict[str, list[str]] = field(default_factory=dict)
    """Page path → fields (``area:NAME``) its file changed and the site did not since the last apply or pull: kept
    as the file has them (apply sends them), and the page's record left as it was."""
    values: Mapping[str, str] = field(default_factory=dict)
    """The settings' values (``${value:NAME}`` in the files is read with them, as the loader does)."""
    trees: Trees = field(default_factory=Trees)
    """The site's locale trees (``cmssync.content.trees``): where each tree's pages are written."""
    stacks_found: tuple[bool, list[Page]] | None = None
    """The site's stacks once read, with their renderings, and whether they were probed for (else only the state's):
    the page hook names stack displays with them, the stack hook stages them (``cmssync.sync.pull_pages``)."""

    def records_of(self, kind: str) -> Mapping[str, Any]:
        """The records pull hands back for a kind (the users' own map, any other kind's in :attr:`records`)."""
        return self.user_records if kind == "user" else self.records.get(kind, {})

    def page_file(self, path: str) -> Path:
        """The file of the page or stack at ``path`` (a locale tree's home: ``pages/<slug>/index.yaml``)."""
        return writer.page_file(self.root, path, tree_home=path != "/" and self.trees.is_home(path))

    @property
    def complete(self) -> bool:
        """Whether every object pull set out to read was read (and so could be written)."""
        return not self.unread.unreadable

    @property
    def exit_code(self) -> int:
        """1 when a local edit was kept as it is or an object could not be read (incomplete), else 0."""
        return EXIT_ERROR if self.settled.kept() or not self.complete else EXIT_OK


def sha256_of(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as handle:
        for chunk in iter(lambda: handle.read(1 << 20), b""):
            digest.update(chunk)
    return digest.hexdigest()


def load_manifest(root: Path) -> dict[str, str]:
    """Relative path → SHA-256 of what the last pull wrote there (empty when missing or unreadable)."""
    try:
        data = json.loads((root / MANIFEST).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    files = data.get("files") if isinstance(data, dict) else None
    return {str(k): str(v) for k, v in files.items()} if isinstance(files, dict) else {}


def refuse_writes_outside(root: Path, targets: Iterable[Path]) -> None:
    """A ``ContentError`` naming every target that, once symbolic links are resolved, is not inside ``root``.

    Called with every staged file before the first is installed, so a linked ``pages/<dir>`` or ``files/`` never
    lets the site's names and bytes land elsewhere (``~/.ssh/authorized_keys``). The file itself may be a link: it
    is replaced, never written through (``os.replace``), so its directory is what counts. ``.cmssync/`` (the state,
    the manifest, the staging area, whose names cmssync chooses) may be linked where the user wants it.
    """
    real_root = root.resolve()
    problems = []
    for target in targets:
        where = target.parent.resolve() / target.name
        if not where.is_relative_to(real_root):
            problems.append(
                Problem(
                    relative_name(target, root),
                    0,
                    0,
                    f"pull would write to {where} through a symbolic link, outside the content directory; "
                    "nothing was written",
                )
            )
    if problems:
        raise ContentError(problems)


def settle(staged: list[Staged], root: Path, *, force: bool, dry_run: bool) -> Settled:
    """Decide every staged file (see the module docstring), write the ones to write unless ``dry_run``, and update
    the manifest; with ``dry_run`` keep the change of each file that would change in ``Settled.previews``."""
    if not dry_run:
        refuse_writes_outside(root, [item.target for item in staged])
    manifest = load_manifest(root)
    before = dict(manifest)
    result = Settled()
    for item in staged:
        decision = _decide(item, root, manifest, force)
        result.decisions[item.target] = (item, decision)
        if dry_run:
            if decision in WRITES | {"kept"}:
                result.previews.append(_preview(item, root, decision))
            continue
        if decision in WRITES:
            manifest[relative_name(item.target, root)] = item.payload_sha()  # before an asset's source moves
            _install(item)
    if not dry_run and manifest != before:
        payload = {"version": 1, "files": dict(sorted(manifest.items()))}
        write_atomically(root / MANIFEST, json.dumps(payload, indent=1) + "\n", durable=False)
    return result


def staging_directory(root: Path, *, dry_run: bool) -> Path:
    """``.cmssync/pull-staging`` (beside the content, removed after the run); a system
    temporary directory for a dry run, which must leave the content directory as it is."""
    return Path(tempfile.mkdtemp(prefix="cmssync-pull-")) if dry_run else root / STAGING


def discard_staging(staging: Path | None) -> None:
    if staging is not None:
        shutil.rmtree(staging, ignore_errors=True)


def _decide(item: Staged, root: Path, manifest: dict[str, str], force: bool) -> Decision:
    if not item.target.is_file():
        return "new"
    on_disk = sha256_of(item.target)
    if on_disk == item.payload_sha() or _same_data(item, item.target):
        return "unchanged"
    if manifest.get(relative_name(item.target, root)) == on_disk:
        return "updated"
    if item.clean is not None and item.clean(item.target):
        return "updated"
    return "forced" if force else "kept"


def _same_data(item: Staged, target: Path) -> bool:
    """A YAML file that already holds the same data in another layout (indentation, quoting) is left as written."""
    if item.text is None:
        return False
    try:
        return bool(YAML(typ="safe").load(item.text) == YAML(typ="safe").load(target.read_text(encoding="utf-8")))
    except (OSError, UnicodeDecodeError, YAMLError):
        return False


def _install(item: Staged) -> None:
    if item.text is not None:
        write_atomically(item.target, item.text, durable=False)
        return
    assert item.source is not None
    move_atomically(item.source, item.target, durable=False)  # from the staging area, removed after the run


def _preview(item: Staged, root: Path, decision: Decision) -> Preview:
    name = relative_name(item.target, root)
    if item.text is None:
        assert item.source is not None
        before = item.target.stat().st_size if item.target.is_file() else 0
        return Preview(name, decision, sizes=(before, item.source.stat().st_size))
    old = ""
    if item.target.is_file():
        with contextlib.suppress(OSError, UnicodeDecodeError):
            old = item.target.read_text(encoding="utf-8")
    lines = difflib.unified_diff(
        old.splitlines(keepends=True), item.text.splitlines(keepends=True), f"a/{name}", f"b/{name}", n=2
    )
    return Preview(name, decision, diff=tuple(lines))


def relative_name(target: Path, root: Path) -> str:
    try:
        return target.relative_to(root).as_posix()
    except ValueError:
        return str(target)
