"""``cmssync validate``: everything about the content that can be known without the site.

The content itself (every file, every reference, settings; each kind's own check, ``ManagedKind.validate``), users'
passwords (the variable set, the length the site accepts: :mod:`cmssync.content.passwords`; ``--no-secrets`` where
a job has none), and, from a local state
file, what the state says: a site object bound twice, and managed objects removed from the content in numbers the
prune guards would refuse to delete (a warning: the plan shows them as blocked).

``--format text`` prints ``DIR: valid (…)`` or the located problems on stderr (``error: N problems``);
``--format json`` one document on stdout; ``--format github`` one workflow command per problem
(``::error file=…,line=…,col=…::message``), which GitHub Actions shows as annotations on the pull request's
files: a file under the working directory (the workspace) is named relative to it, as GitHub attaches annotations
only to such paths; another keeps its path as given. Exit 0 valid, 1 not.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal, TextIO

from cmssync.content.lists import PAGE_AND_FILE_DIRS, list_kinds
from cmssync.content.loader import load_content
from cmssync.content.passwords import password_problems
from cmssync.content.site import SiteContent
from cmssync.errors import EXIT_ERROR, EXIT_OK, ContentError, Problem
from cmssync.logs import note
from cmssync.plan.actions import OUTPUT_FORMAT_VERSION

ValidateFormat = Literal["text", "json", "github"]


@dataclass
class Validation:
    directory: Path
    problems: list[Problem] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)
    summary: str | None = None

    @property
    def valid(self) -> bool:
        return not self.problems

    def path_of(self, problem: Problem) -> str:
        """The problem's file as seen from where the command ran (``site/pages/about.yaml``)."""
        path = Path(problem.file)
        return (path if path.is_absolute() else self.directory / path).as_posix()


def check(directory: Path, *, secrets: bool = True) -> Validation:
    result = Validation(directory)
    try:
        content = load_content(directory)
    except ContentError as exc:
        result.problems = list(exc.problems)
        return result
    if secrets:
        result.problems = password_problems(content)
    from cmssync.sync.kinds import discover

    for kind in discover():  # each kind's own check of its objects (a kind module's ``validate``)
        if kind.validate is not None:
            result.problems += kind.validate(content)
    result.warnings = list(_state_warnings(directory, content))
    result.summary = content.summary()
    if content.empty:
        if not any(directory.iterdir()):
            result.problems.append(Problem(str(directory), 0, 0, f"{EMPTY}: it is empty (a mistyped path?)"))
        else:
            result.warnings.append(f"{EMPTY}: a plan of it creates nothing and deletes nothing")
    return result


_KINDS = ["page", "stack", "file", *(kind.name for kind in list_kinds())]
_PLACES = [*(f"{name}/" for name in PAGE_AND_FILE_DIRS), *(kind.file for kind in list_kinds())]
EMPTY = f"no content to check: no {', '.join(_KINDS[:-1])} or {_KINDS[-1]} ({', '.join(_PLACES)})"


def _state_warnings(directory: Path, content: SiteContent) -> Iterable[str]:
    """What a local state file says about the content; nothing for a remote state (no network here)."""
    from cmssync.errors import StateError
    from cmssync.state.backends import open_state_backend
    from cmssync.sync.kinds import discover

    settings = content.settings
    if settings.state_settings.backend != "local" or not settings.state_path(directory).is_file():
        return
    state = open_state_backend(settings, directory).load()
    kinds = discover().table
    shared = kinds.shared_bindings(state)
    if shared:
        raise StateError("; ".join(shared))
    prune = settings.prune
    for facts in kinds.deleted:
        kind, managed = facts.name, set(facts.records_in(state))
        gone = sorted(managed - set(facts.keys_in(content)))
        if not gone:
            continue
        listed = ", ".join(gone[:5]) + (" …" if len(gone) > 5 else "")
        over = len(gone) > prune.max_deletes or len(gone) > prune.max_fraction * len(managed)
        guard = (
            f"; the prune guards (max_deletes={prune.max_deletes}, max_fraction={prune.max_fraction}) would block "
            "deleting them (--allow-mass-delete)"
            if over
            else ""
        )
        yield f"{len(gone)} managed {kind}(s) no longer in the content: {listed}{guard}"


def run_validate(directory: Path, *, out: TextIO, output_format: ValidateFormat = "text", secrets: bool = True) -> int:
    result = check(directory, secrets=secrets)
    if output_format == "json":
        out.write(json.dumps(_document(result), indent=2, ensure_ascii=False) + "\n")
    elif output_format == "github":
        out.write("".join(_annotation(result, problem) for problem in result.problems))
        out.write("".join(f"::warning title=cmssync validate::{_data(w)}\n" for w in result.warnings))
    else:
        for warning in result.warnings:
            note(f"warning: {warning}", level=logging.WARNING)
        if not result.valid:
            raise ContentError(result.problems)
        out.write(f"{directory}: valid ({result.summary})\n")
    return EXIT_OK if result.valid else EXIT_ERROR


def _document(result: Validation) -> dict[str, object]:
    return {
        "format_version": OUTPUT_FORMAT_VERSION,
        "valid": result.valid,
        "directory": str(result.directory),
        "summary": result.summary,
        "problems": [
            {"file": result.path_of(p), "line": p.line, "column": p.column, "message": p.message}
            for p in result.problems
        ],
        "warnings": result.warnings,
    }


def _annotation(result: Validation, problem: Problem) -> str:
    """A GitHub Actions workflow command: ``::error file=F,line=L,col=C,title=…::message``."""
    where = [f"file={_property(_from_workspace(result.path_of(problem)))}"]
    if problem.line > 0:
        where += [f"line={problem.line}", f"col={max(problem.column, 1)}"]
    return f"::error {','.join(where)},title=cmssync validate::{_data(problem.message)}\n"


def _from_workspace(path: str) -> str:
    """``path`` relative to the working directory when it is under it (``site/pages/about.yaml``), else as given."""
    given = Path(path)
    if not given.is_absolute():
        return path
    cwd = Path.cwd()
    for candidate in (given, given.resolve()):
        if candidate.is_relative_to(cwd):
            return candidate.relative_to(cwd).as_posix()
    return path


def _data(text: str) -> str:
    return text.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")


def _property(text: str) -> str:
    return _data(text).replace(":", "%3A").replace(",", "%2C")
