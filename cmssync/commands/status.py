"""``cmssync status``: connectivity, account, site, system info, scopes, who holds the state lock, and drift.

The connection checks come from ``cmssync.sync.diagnose``; this adds what only the sync layer knows: whether the
content is valid, whether another apply is running, and how far the site has drifted from the content (a plan,
which writes nothing). ``--format json`` prints one versioned document; ``--detailed-exitcode`` exits 2 when the
site differs from the content (0 when it matches, 1 on any problem), like ``plan``.
"""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Iterable
from pathlib import Path
from typing import Any, Literal, TextIO

from cmssync.config import load_settings
from cmssync.content.paths import is_stack_path
from cmssync.content.trees import Trees
from cmssync.errors import EXIT_ERROR, EXIT_OK, CmsSyncError, ContentError
from cmssync.plan.actions import OUTPUT_FORMAT_VERSION, Plan, plan_exit_code, summary_line
from cmssync.state.backends import open_state_backend
from cmssync.sync.diagnose import PATIENT, diagnose
from cmssync.sync.planning import make_plan
from cmssync.sync.workspace import open_workspace


@dataclasses.dataclass
class Status:
    connection: dict[str, Any]
    lines: list[str]
    problems: list[str] = dataclasses.field(default_factory=list)
    plan: Plan | None = None
    trees: list[dict[str, Any]] = dataclasses.field(default_factory=list)
    """Each locale tree of a site with several: its locale, home, pages managed, changes, translations inferred."""

    @property
    def ok(self) -> bool:
        return not self.problems

    def document(self) -> dict[str, Any]:
        plan = self.plan
        return {
            "format_version": OUTPUT_FORMAT_VERSION,
            "ok": self.ok,
            "problems": self.problems,
            "connection": self.connection,
            **({"trees": self.trees} if self.trees else {}),
            "drift": None
            if plan is None
            else {
                "in_sync": plan.is_empty,
                "kept_removed": sum(len(k.keys) for k in plan.kept),
                "summary": plan.summary(),
                "blocked_deletes": sum(len(b.keys) for b in plan.blocked),
                "changed_outside_cmssync": [a.id for a in plan.actions if a.drift],
                "held": [{"id": h.id, "reason": h.reason, "message": h.message} for h in plan.held],
                "site_additions": sum(len(entry.blocks) for entry in plan.site_additions),
                "site_changes": [change.id for change in plan.site_changes],
                "line": summary_line(plan),
            },
        }


async def run_status(
    directory: Path,
    *,
    out: TextIO,
    overrides: dict[str, Any] | None = None,
    output_format: Literal["text", "json"] = "text",
    detailed_exitcode: bool = False,
) -> int:
    status = await check_status(directory, overrides=overrides)
    if output_format == "json":
        out.write(json.dumps(status.document(), indent=2) + "\n")
    else:
        out.write("\n".join(status.lines) + "\n")
    if not status.ok:
        return EXIT_ERROR
    return EXIT_OK if status.plan is None else plan_exit_code(status.plan, detailed=detailed_exitcode)


async def check_status(directory: Path, *, overrides: dict[str, Any] | None = None) -> Status:
    settings = load_settings(directory, overrides=overrides)
    report = await diagnose(settings, base_dir=directory, retry=PATIENT)
    lines = report.lines()
    status = Status(connection=dataclasses.asdict(report), lines=[], problems=list(report.problems))
    holder = open_state_backend(settings, directory).lock_holder()  # None for an http backend: cannot tell
    extra = [f"lock:      held by {holder.describe()}"] if holder is not None else []
    if report.ok:
        try:
            workspace = open_workspace(directory, overrides=overrides, any_site=overrides is not None)
            workspace = dataclasses.replace(workspace, retry=PATIENT)
            status.plan = (await make_plan(workspace)).plan
            extra.append(f"drift:     {summary_line(status.plan)}")
            status.trees = tree_facts(status.plan, workspace.content.pages)
            extra += [tree_line(tree) for tree in status.trees]
            if untold := Trees.of_homes(status.plan.trees).untold_stacks_note(workspace.content.pages):
                extra.append(f"stacks:    {untold}")
            # nothing held back is silent: each held object (foreign draft, conflict, unreadable) on its own line
            extra += [f"held:      {held.kind} {held.key}: {held.message}" for held in status.plan.held]
            # objects that could not be read (held with what needs them): drift there is unknown
            status.problems.extend(f"{held.kind} {held.key}: {held.message}" for held in status.plan.unreadable)
        except ContentError as exc:
            status.problems.append(f"the content is invalid ({len(exc.problems)} problem(s))")
            extra.append(f"content:   invalid ({len(exc.problems)} problem(s)); run `cmssync validate` to see them")
        except CmsSyncError as exc:
            status.problems.append(f"drift unknown: {exc}")
            extra.append(f"drift:     unknown ({exc})")
    # The report's last line is its verdict on the connection; the content and drift checks can still fail after it.
    verdict = lines[-1] if not report.ok else "status:    ok" if status.ok else "status:    problem(s), see above"
    status.lines = [*lines[:-1], *extra, verdict]
    return status


def tree_facts(plan: Plan, paths: Iterable[str]) -> list[dict[str, Any]]:
    """Per locale tree of a site with several (none otherwise): the pages the content manages in it, the plan's
    changes there, and how many of its pages sit at the same place as a page of the default tree — the only
    relation between translations cmssync can infer (the API does not say which page translates which)."""
    if not plan.trees:
        return []
    trees = Trees.of_homes(plan.trees)
    pages: dict[str, list[str]] = {tree.locale: [] for tree in trees.trees}
    for path in paths:
        tree = trees.tree_of(path)
        if tree is not None and not is_stack_path(path):
            pages[tree.locale].append(path)
    default = trees.default
    places = set(pages[default.locale]) if default is not None else set()
    facts = []
    for tree in trees.trees:
        changes = sum(1 for action in plan.actions if plan.tree_of(action.kind, action.key) == tree.locale)
        same = (
            None
            if tree.default or default is None
            else sum(1 for path in pages[tree.locale] if trees.translations(path).get(default.locale) in places)
        )
        facts.append(
            {"locale": tree.locale, "home": tree.home_path, "pages": len(pages[tree.locale]), "changes": changes}
            | ({} if same is None else {"same_place_as_default": same})
        )
    return facts


def tree_line(tree: dict[str, Any]) -> str:
    """``tree:      de_DE at /de: 24 page(s) managed, 1 change(s); 23 at the same place as a default-tree page``."""
    line = (
        f"tree:      {tree['locale']} at {tree['home']}: {tree['pages']} page(s) managed, {tree['changes']} change(s)"
    )
    if "same_place_as_default" in tree:
        line += f"; {tree['same_place_as_default']} at the same place as a default-tree page (translations by path)"
    return line
