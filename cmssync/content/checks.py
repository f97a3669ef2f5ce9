"""Checks that span files: duplicates, parent pages, pinned ids and reference targets.

Each check is a pure function of already-validated specs and returns problems located at the later of two
conflicting definitions (the first one is named in the message).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from operator import attrgetter
from typing import Any

from cmssync.content.blocks import ModelledBlock
from cmssync.content.blocktypes import block_type
from cmssync.content.lists import ListKind
from cmssync.content.models import PageSpec, Spec
from cmssync.content.paths import STACKS_PREFIX, dropped_words, parent_path
from cmssync.content.specfile import SpecAt
from cmssync.content.text import FileIdRef, FileLinkRef, FileUrlRef, PageIdRef, PageLinkRef, Reference
from cmssync.content.validation import where
from cmssync.content.yamlsource import Source
from cmssync.errors import Problem


def _duplicates(specs: Sequence[Spec], key: Callable[[Any], str], what: str) -> list[Problem]:
    problems: list[Problem] = []
    seen: dict[str, Spec] = {}
    for spec in specs:
        value = key(spec)
        first = seen.setdefault(value.casefold(), spec)
        if first is spec or spec.source is None:
            continue
        problems.append(spec.source.problem(f"duplicate {what} {value!r} (first at {first.source})"))
    return problems


def duplicate_entries(kind: ListKind, specs: Sequence[Spec]) -> list[Problem]:
    """A list kind's entries that share what is unique on a Concrete site (``ListKind.unique``: usernames and
    emails, group names), compared without case."""
    return [problem for what, name in kind.unique for problem in _duplicates(specs, attrgetter(name), what)]


def pinned_ids(pages: dict[str, PageSpec], sources: Mapping[str, Source]) -> list[Problem]:
    """No two pages pin the same id (``sources``: page path → its file, for the position of ``id``)."""
    problems: list[Problem] = []
    seen: dict[int, str] = {}
    for path, spec in sorted(pages.items()):
        if spec.id is None or spec.source is None:
            continue
        first = seen.setdefault(spec.id, path)
        if first != path:
            source = sources.get(path)
            line, column = source.position(("id",)) if source is not None else (1, 1)
            message = f"id: page id {spec.id} is also pinned by page {first}"
            problems.append(Problem(spec.source.file, line, column, message))
    return problems


def creatable_handles(pages: dict[str, PageSpec], page_files: dict[str, str]) -> list[Problem]:
    """A page that is not pinned to an existing id (``id:``) has a URL Concrete can make from a name.

    Concrete drops words such as ``the`` or ``up`` only from URLs it *generates*; a page that already exists may
    hold them (``/about/blog/freshen-up-your-website``), and ``pull`` pins such pages, so they load.
    """
    problems: list[Problem] = []
    for path, spec in sorted(pages.items()):
        dropped = dropped_words(path.rsplit("/", 1)[-1])
        if spec.id is not None or not dropped or path not in page_files:
            continue
        handle = path.rsplit("/", 1)[-1]
        problems.append(
            Problem(
                page_files[path],
                0,
                0,
                f"invalid page handle {handle!r}: Concrete leaves the word {dropped[0]!r} out of page URLs "
                "(concrete.seo.exclude_words), so cmssync cannot create a page with this URL; rename the file, "
                "or pin the id (id: N) of the existing page that has it",
            )
        )
    return problems


def parents(page_files: dict[str, str], existing_pages: Iterable[str]) -> list[Problem]:
    """Every page's parent is a content page, an ``existing_pages`` entry or ``/``.

    ``page_files``: page path → its file, for every page file (valid or not, so a broken parent file does not
    also make its children look orphaned).
    """
    known = set(page_files) | {p.rstrip("/") or "/" for p in existing_pages} | {"/"}
    problems: list[Problem] = []
    for path, file in sorted(page_files.items()):
        parent = parent_path(path)
        if parent is not None and parent not in known:
            problems.append(
                Problem(
                    file,
                    0,
                    0,
                    f"page {path}: parent page {parent} is neither in the content nor listed in existing_pages "
                    "(cmssync.yaml)",
                )
            )
    return problems


def references(found: Iterable[tuple[Source, SpecAt]], files: set[str], pages: set[str] | None) -> list[Problem]:
    """Every file reference (``${file:…}``, ``${file-id:…}``, ``${file-link:…}``) and page reference
    (``${page-id:…}``, ``${page-link:…}``) of each spec names something that exists.

    ``found``: each valid spec with its file; ``pages=None``: page references are not judged (the settings that
    list ``existing_pages`` are invalid). A problem points at the reference itself (also inside a multi-line
    block); positions are looked up in the file only when there is a problem to place.
    """
    problems: list[Problem] = []
    for source, at in found:
        for loc, refs in at.references:
            reasons = [_missing(reference, files, pages) for reference in refs]
            if any(reasons):
                problems.extend(_placed(source, at.prefix, loc, refs, reasons))
    return problems


def stacks_shown(found: Iterable[tuple[Source, SpecAt]], stacks: set[str]) -> list[Problem]:
    """Every stack display (a block type with ``shows_stack``) names a stack the content has a file for
    (``stacks/<handle>.yaml``, which holds its id: the API lists no stack), at the display's ``stack:``."""
    problems: list[Problem] = []
    for source, at in found:
        areas: Mapping[str, Sequence[Any]] = getattr(at.spec, "areas", None) or {}
        for area, blocks in areas.items():
            for index, block in enumerate(blocks):
                declared = block_type(str(getattr(block, "type", "")))
                field = declared.shows_stack if declared is not None and isinstance(block, ModelledBlock) else None
                handle = getattr(block.value, field) if field is not None else None
                if handle is None or STACKS_PREFIX + handle in stacks:
                    continue
                loc = ("areas", area, index, "value", str(field))
                line, column = source.position((*at.prefix, *loc))
                reason = (
                    f"no stack {handle!r} in the content: a stack display shows a stack of stacks/ (pull writes them)"
                )
                problems.append(Problem(source.name, line, column, where(loc) + reason))
    return problems


def _missing(reference: Reference, files: set[str], pages: set[str] | None) -> str | None:
    if isinstance(reference, FileUrlRef | FileIdRef | FileLinkRef) and reference.path not in files:
        return f"{reference.source}: no such file under files/"
    if isinstance(reference, PageIdRef | PageLinkRef) and pages is not None and reference.path not in pages:
        return f"{reference.source}: no page {reference.path} in the content or in existing_pages"
    return None


def _placed(
    source: Source,
    prefix: tuple[str | int, ...],
    loc: tuple[str | int, ...],
    refs: Sequence[Reference],
    reasons: Sequence[str | None],
) -> list[Problem]:
    """The problems of one string's references, each at the reference itself (found after the one before it)."""
    problems: list[Problem] = []
    start = source.position((*prefix, *loc))
    cursor = start
    for reference, reason in zip(refs, reasons, strict=True):
        found = source.find(reference.source, cursor)
        if found is not None:
            cursor = (found[0], found[1] + 1)
        if reason is not None:
            line, column = found or start
            problems.append(Problem(source.name, line, column, where(loc) + reason))
    return problems
