"""Which file of the content directory is what: the directory layout of design.md §3.

Top level: ``cmssync.yaml`` (settings), ``pages/`` (page files), ``stacks/`` (stack files, one level:
``stacks/footer-column-1.yaml`` is the stack ``/!stacks/footer-column-1``, kept in ``Layout.pages`` under that
path), ``files/`` (assets and their ``.yaml`` sidecars), and each list kind's ``<plural>.yaml`` and/or
``<plural>/*.yaml`` (``users.yaml`` and/or ``users/*.yaml``, …: :mod:`cmssync.content.lists`).

Decisions:

* Dotfiles and dot-directories (``.git/``, ``.cmssync/``, ``.gitignore``) are skipped everywhere.
* Other top-level files (``README.md``, ``LICENSE``, …) are ignored; another top-level ``.yaml``/``.yml`` file is
  reported (it is probably misplaced), and so is another top-level directory that holds YAML files directly
  (``page/about.yaml`` is a typo for ``pages/``). Deeper directories outside the content are not read.
* Under ``pages/``, ``stacks/`` and a list kind's directory only ``.yaml`` files may appear; ``.yml`` is reported.
* Under ``files/`` a name ending in ``.yaml`` is the sidecar of the asset without that suffix, so an asset that is
  itself a ``.yaml`` file cannot be managed.
* Symbolic links are followed only to files inside the content directory that are not hidden; a link that leaves
  it, a link whose target has a hidden component (``files/x -> ../.git/config``, ``../.cmssync/state.json``), a
  broken link and a link to a directory are reported. Nothing outside the content directory, and nothing hidden
  inside it, is ever read or uploaded. :func:`link_problem` is the one rule; the upload checks it again just before
  sending a file (``sync/apply_assets.py``), since the tree may change between validation and upload.
* Page paths: ``pages/index.yaml`` → ``/``, ``pages/a.yaml`` and ``pages/a/index.yaml`` → ``/a`` (both at once is a
  duplicate), ``pages/a/b.yaml`` → ``/a/b``. A page with the handle ``index`` cannot be written.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path

from cmssync.content.lists import PAGE_AND_FILE_DIRS, list_file, list_kinds
from cmssync.content.paths import CONFIG_FILE, YAML_SUFFIX, page_named, page_path_of
from cmssync.errors import Problem, one_line


@dataclass(frozen=True)
class Entry:
    """A file of the content: its content-relative POSIX name and its real path (inside the content)."""

    name: str
    path: Path


@dataclass
class Layout:
    config: Entry | None = None
    pages: dict[str, Entry] = field(default_factory=dict)
    """Page path → the file that defines it (stacks too, under ``/!stacks/<handle>``)."""
    lists: dict[str, list[Entry]] = field(default_factory=dict)
    """A list kind's name → its files (``users.yaml`` before ``users/*.yaml``)."""
    sidecars: dict[str, Entry] = field(default_factory=dict)
    """Asset path (relative to ``files/``) → its sidecar."""
    assets: dict[str, Entry] = field(default_factory=dict)
    """Asset path (relative to ``files/``) → the asset."""
    problems: list[Problem] = field(default_factory=list)


def scan(root: Path) -> Layout:
    """Classify the files of ``root`` (already resolved); nothing is parsed here."""
    layout = Layout()
    for entry in _entries(root, root, layout, recurse=False):
        name = entry.name
        if entry.path.is_dir():
            _scan_top_directory(root, entry, layout)
        elif name == CONFIG_FILE:
            layout.config = entry
        elif (listed := list_file(name)) is not None:
            layout.lists.setdefault(listed.name, []).append(entry)
        elif name.endswith((".yaml", ".yml")):
            files = ", ".join(kind.file for kind in list_kinds())
            layout.problems.append(
                Problem(name, 0, 0, f"unexpected YAML file: content lives in pages/, files/, {files}")
            )
    # users.yaml before users/*.yaml, so that a duplicate is reported in the directory's file
    for entries in layout.lists.values():
        entries.sort(key=lambda e: e.name)
    return layout


def _scan_top_directory(root: Path, entry: Entry, layout: Layout) -> None:
    if entry.name == "pages":
        for item in _entries(root, entry.path, layout, recurse=True):
            if _is_yaml(item, layout, "pages/ holds only .yaml page files"):
                _add_page(item, layout)
    elif entry.name == "stacks":
        for item in _entries(root, entry.path, layout, recurse=True):
            if _is_yaml(item, layout, "stacks/ holds only .yaml stack files"):
                _add_page(item, layout)
    elif entry.name == "files":
        for item in _entries(root, entry.path, layout, recurse=True):
            relative = item.name[len("files/") :]
            if relative.endswith(YAML_SUFFIX):
                layout.sidecars[relative[: -len(YAML_SUFFIX)]] = item
            else:
                layout.assets[relative] = item
    elif (listed := list_file(entry.name, directory=True)) is not None:
        for item in _entries(root, entry.path, layout, recurse=False):
            if _is_yaml(item, layout, f"{entry.name}/ holds only .yaml files"):
                layout.lists.setdefault(listed.name, []).append(item)
    elif any(name.endswith((".yaml", ".yml")) for name in _names(entry.path)):
        *others, last = [f"{name}/" for name in (*PAGE_AND_FILE_DIRS, *(kind.plural for kind in list_kinds()))]
        expected = f"{', '.join(others)} or {last}"
        layout.problems.append(
            Problem(
                f"{entry.name}/", 0, 0, f"not a content directory (expected {expected}); its YAML files are not read"
            )
        )


def _is_yaml(item: Entry, layout: Layout, message: str) -> bool:
    if item.name.endswith(YAML_SUFFIX):
        return True
    text = "use the .yaml extension" if item.name.endswith(".yml") else message
    layout.problems.append(Problem(item.name, 0, 0, text))
    return False


def _add_page(item: Entry, layout: Layout) -> None:
    try:
        path = page_path_of(item.name)
    except ValueError as exc:
        layout.problems.append(Problem(item.name, 0, 0, str(exc)))
        return
    earlier = layout.pages.get(path)
    if earlier is not None:
        first, second = sorted((earlier, item), key=lambda e: e.name)
        layout.problems.append(Problem(second.name, 0, 0, f"{page_named(path)} is also defined by {first.name}"))
        layout.pages[path] = first
        return
    layout.pages[path] = item


def _names(directory: Path) -> list[str]:
    try:
        return [name for name in os.listdir(directory) if not name.startswith(".")]
    except OSError:
        return []


def _entries(root: Path, directory: Path, layout: Layout, *, recurse: bool) -> list[Entry]:
    """Non-hidden entries of ``directory`` (files, and directories at the top), sorted; links checked."""
    found: list[Entry] = []
    try:
        listing = sorted(os.scandir(directory), key=lambda e: e.name)
    except OSError as exc:
        layout.problems.append(Problem(_relative(root, directory) or ".", 0, 0, f"cannot read: {exc.strerror}"))
        return found
    for item in listing:
        if item.name.startswith("."):
            continue
        path = Path(item.path)
        name = _relative(root, path)
        if one_line(item.name) != item.name:
            layout.problems.append(
                Problem(name, 0, 0, "a file name with a line break or another control character; rename it")
            )
            continue
        if item.is_symlink() and not _link_is_safe(root, path, name, layout):
            continue
        if item.is_dir():
            if recurse:
                found.extend(_entries(root, path, layout, recurse=True))
            elif directory == root:
                found.append(Entry(name, path))
        elif item.is_file():
            found.append(Entry(name, path))
        else:
            layout.problems.append(Problem(name, 0, 0, "not a regular file"))
    return found


def _link_is_safe(root: Path, path: Path, name: str, layout: Layout) -> bool:
    problem = link_problem(root, path)
    if problem is not None:
        layout.problems.append(Problem(name, 0, 0, problem))
    return problem is None


def link_problem(root: Path, path: Path) -> str | None:
    """Why the file at ``path`` must not be read, following symbolic links (``root`` resolved); None when it may.

    A path without links is its own target, so this also holds for a plain file: it is never hidden, since the
    scan skips dot-names.
    """
    try:
        target = path.resolve(strict=True)
    except (OSError, RuntimeError):
        return "broken symbolic link"
    if not target.is_relative_to(root):
        return "symbolic link points outside the content directory"
    relative = target.relative_to(root)
    if any(part.startswith(".") for part in relative.parts):
        return (
            f"symbolic link points to a hidden file or directory ({relative.as_posix()}); "
            "hidden files (.git/, .cmssync/, .env) are never read or uploaded"
        )
    if target.is_dir():
        return "symbolic links to directories are not followed"
    return None


def _relative(root: Path, path: Path) -> str:
    return path.relative_to(root).as_posix() if path != root else ""
