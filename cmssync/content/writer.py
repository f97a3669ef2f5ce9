"""Writing specs back into the content directory layout (for ``cmssync pull`` and the round-trip tests).

Output is stable: ``indent(mapping=2, sequence=4, offset=2)``, lines up to 4096 characters (never re-wrapped),
multi-line strings as literal blocks (``|``) when they can be, keys in model order, defaults left out; a block
placeholder on one line (``- keep: {type: gallery, id: 104}``). When a file
already exists its round-trip tree is edited in place (keys removed, changed or added; list items by position),
so comments and the style of unchanged scalars survive, in the file's own indentation (:func:`indentation`: a
file with sequences at their key's column or 4-space mappings keeps them). Files are written atomically (temp
file + ``os.replace``).

Loading what was written gives back equal specs; ``tests/content/test_roundtrip.py`` checks this with hypothesis.
"""

from __future__ import annotations

import contextlib
import io
import itertools
import json
import re
import shutil
from collections.abc import Iterable
from difflib import SequenceMatcher
from pathlib import Path
from typing import Any

from pydantic import BaseModel
from ruamel.yaml import YAML
from ruamel.yaml.comments import CommentedMap, CommentedSeq
from ruamel.yaml.error import YAMLError
from ruamel.yaml.scalarstring import LiteralScalarString, SingleQuotedScalarString

from cmssync.content.fields import LocatedSpec
from cmssync.content.files import FileSpec
from cmssync.content.lists import ListKind, list_kinds
from cmssync.content.models import FileSidecar, PageSpec
from cmssync.content.paths import page_file_names
from cmssync.content.site import SiteContent
from cmssync.content.yaml_emit import EXPLICIT_KEY, dump_fresh, layout, literal_block_safe
from cmssync.fileio import write_atomically


def _yaml() -> YAML:
    yaml = layout(YAML(typ="rt"))
    yaml.preserve_quotes = True
    return yaml


def spec_data(spec: BaseModel) -> dict[str, Any]:
    """The written form of a spec: texts as written; fields never set (and nulls) left out."""
    return spec.model_dump(mode="python", exclude_unset=True, exclude_none=True)


def page_file(root: Path, path: str, *, tree_home: bool = False) -> Path:
    """The file of page ``path``: ``pages/index.yaml`` for ``/``; an existing ``pages/a/index.yaml`` for ``/a``
    is kept, otherwise ``pages/a.yaml`` (a locale tree's home: ``pages/de/index.yaml`` unless ``pages/de.yaml``
    exists)."""
    names = page_file_names(path, tree_home=tree_home)
    existing = [name for name in names if (root / name).is_file()]
    return root / (existing[0] if existing else names[0])


def write_page(root: Path, path: str, spec: PageSpec) -> Path:
    target = page_file(root, path)
    write_yaml(target, spec_data(spec))
    return target


def write_sidecar(root: Path, file_path: str, meta: FileSidecar) -> Path | None:
    """Write ``files/<file_path>.yaml``; nothing when the metadata is all defaults and no sidecar exists."""
    target = root / "files" / f"{file_path}.yaml"
    data = spec_data(meta)
    if not data and not target.exists():
        return None
    write_yaml(target, data)
    return target


def write_list(root: Path, kind: ListKind, entries: Iterable[LocatedSpec], name: str | None = None) -> Path:
    """Write a list kind's entries to its list file (``users.yaml``), or to ``name`` under ``root``."""
    target = root / (name or kind.file)
    write_yaml(target, [spec_data(entry) for entry in entries])
    return target


def write_file(root: Path, spec: FileSpec, data_source: Path) -> None:
    """Copy the asset (streamed) and write its sidecar."""
    target = root / "files" / spec.path
    if data_source.resolve() != target.resolve():
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(data_source, target)
    write_sidecar(root, spec.path, spec.meta)


def write_content(content: SiteContent, root: Path) -> None:
    """Write every page, file and list entry of ``content`` into ``root`` (assets copied from ``content.root``).

    ``cmssync.yaml`` is not written (it holds the user's settings, not content); a list kind's entries go to its
    list file (``users.yaml``, …).
    """
    for path, page in content.pages.items():
        write_page(root, path, page)
    for file in content.files.values():
        write_file(root, file, content.root / "files" / file.path)
    for kind in list_kinds():
        if content.of(kind.name):
            write_list(root, kind, content.of(kind.name).values())


def write_yaml(target: Path, data: Any) -> None:
    """Write ``data`` to ``target``, editing the existing round-trip tree in place when the file exists."""
    write_atomically(target, render_yaml(target, data), durable=False)


def render_yaml(target: Path, data: Any) -> str:
    """The text :func:`write_yaml` would write to ``target`` (nothing is written): ``data`` as an edit of the
    existing file's round-trip tree when it holds YAML, else a fresh document (the same text, written by
    :func:`~cmssync.content.yaml_emit.dump_fresh` where it can)."""
    text = dump_fresh(data)
    existing: str | None = None
    if target.is_file():
        with contextlib.suppress(OSError, UnicodeDecodeError):
            existing = target.read_text(encoding="utf-8")
    if text is not None and existing in (None, text):
        # A new file; or one that holds the fresh text of this very data, which the round-trip edit below gives
        # back unchanged (tests/content/test_yaml_emit.py): the same bytes without ~10 ms of ruamel's parser.
        return text
    yaml = _yaml()  # made only when needed: a YAML() costs ~0.1 ms (plug-in scan)
    tree: Any = None
    if existing is not None:
        with contextlib.suppress(YAMLError):
            tree = yaml.load(existing)
            yaml.indent(**indentation(existing))
    tree = merge(tree, data) if tree is not None else fresh(data)
    buffer = io.StringIO()
    yaml.dump(tree, buffer)
    return buffer.getvalue()


_MAPPING_KEY = re.compile(r"^( *)[^\s#-][^:#]*:\s*$")
_NESTED_KEY = re.compile(r"^( *)[^\s#-][^:#]*:")
_SEQUENCE_ITEM = re.compile(r"^( *)-( +)\S")


def indentation(text: str) -> dict[str, int]:
    """The indentation a YAML file is written in (``mapping``, ``sequence``, ``offset`` for ``YAML.indent``), read
    from its first nested mapping and its first block sequence (the file itself when it is one list, else the first
    under a key), so an edit keeps it; the writer's own layout for what the file does not show."""
    found = {"mapping": 2, "sequence": 4, "offset": 2}
    seen: set[str] = set()
    lines = text.splitlines()
    top = next((line for line in lines if line.strip() and not line.lstrip().startswith("#")), "")
    item = _SEQUENCE_ITEM.match(top)
    if item is not None:  # the file is one list (users.yaml): its items' own indentation, at the margin or not
        found.update(offset=len(item.group(1)), sequence=len(item.group(1)) + 1 + len(item.group(2)))
        seen.add("sequence")
    for line, following in itertools.pairwise(lines):
        key = _MAPPING_KEY.match(line)
        if key is None:
            continue
        nested, item = _NESTED_KEY.match(following), _SEQUENCE_ITEM.match(following)
        if item is not None and "sequence" not in seen and len(item.group(1)) >= len(key.group(1)):
            offset = len(item.group(1)) - len(key.group(1))
            found.update(offset=offset, sequence=offset + 1 + len(item.group(2)))
            seen.add("sequence")
        elif nested is not None and "mapping" not in seen and len(nested.group(1)) > len(key.group(1)):
            found["mapping"] = len(nested.group(1)) - len(key.group(1))
            seen.add("mapping")
        if len(seen) == 2:
            break
    return found


def read_plain(target: Path) -> Any:
    """The existing file's data as plain Python (safe loader), or None when it is missing or not YAML."""
    if not target.is_file():
        return None
    try:
        return YAML(typ="safe").load(target.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, YAMLError):
        return None


def merge(old: Any, new: Any) -> Any:
    """``new`` expressed as an edit of ``old`` (a round-trip tree), keeping what does not change."""
    if isinstance(old, CommentedMap) and isinstance(new, dict):
        for key in [k for k in old if k not in new]:
            del old[key]
        for key, value in new.items():
            old[key] = merge(old[key], value) if key in old else fresh(value)
        if old.fa.flow_style():
            _quote_explicit_keys(old)
        return old
    if isinstance(old, CommentedSeq) and isinstance(new, list):
        return _merge_items(old, new)
    if isinstance(old, str) and isinstance(new, str) and old == new:
        return old  # same text: keep the scalar's written style (quotes, block scalar)
    # Not for numbers: ruamel re-formats a loaded float from its parts, which can change the last digit.
    return fresh(new)


def _quote_explicit_keys(node: CommentedMap) -> None:
    """Single-quote a flow mapping's texts that begin like an explicit key (``? q``): ruamel's emitter writes them
    plain there (``{type: ? q}``), which no YAML reader takes back."""
    for key, value in node.items():
        if type(value) is str and EXPLICIT_KEY.match(value):
            node[key] = SingleQuotedScalarString(value)


def _merge_items(old: CommentedSeq, new: list[Any]) -> CommentedSeq:
    """``new`` as an edit of the list ``old``: the items are aligned first (an item removed or added in the middle
    does not shift every later item onto its neighbour's text and comments), then each kept or replaced item is
    merged into the one it aligns with; an added item is fresh."""
    matcher = SequenceMatcher(None, [_key(item) for item in old], [_key(item) for item in new], autojunk=False)
    source: dict[int, int] = {}
    for tag, i1, i2, j1, j2 in matcher.get_opcodes():
        if tag in ("equal", "replace"):
            source.update((j1 + k, i1 + k) for k in range(min(i2 - i1, j2 - j1)))
    items = [merge(old[source[j]], value) if j in source else fresh(value) for j, value in enumerate(new)]
    comments = {j: old.ca.items[i] for j, i in source.items() if i in old.ca.items}
    old[:] = items
    old.ca.items.clear()
    old.ca.items.update(comments)
    return old


def _key(item: Any) -> str:
    return json.dumps(item, sort_keys=True, default=str)


def fresh(value: Any) -> Any:
    """A new round-trip node for ``value``: block collections, literal blocks for multi-line strings."""
    if isinstance(value, dict):
        node = CommentedMap()
        for key, item in value.items():
            node[key] = fresh(item)
        if set(value) == {"keep"} and isinstance(node["keep"], CommentedMap):
            node["keep"].fa.set_flow_style()  # a placeholder reads as one line: - keep: {type: …, id: N}
            _quote_explicit_keys(node["keep"])
        return node
    if isinstance(value, list | tuple):
        return CommentedSeq(fresh(item) for item in value)
    if isinstance(value, str) and literal_block_safe(value):
        return LiteralScalarString(value)
    return value
