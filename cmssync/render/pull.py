"""What ``cmssync pull`` did, as text: the diffs of a dry run, then one summary of every kind."""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterator

from cmssync.content.lists import list_kinds
from cmssync.content.paths import page_named
from cmssync.plan.builtin_kinds import display_order
from cmssync.sync.pull_commit import PullCommit
from cmssync.sync.pull_writes import Decision, Preview, Pulled, relative_name

PREVIEW_LABELS: dict[Decision, str] = {
    "new": "new",
    "updated": "would update",
    "forced": "would overwrite a local edit (--force)",
    "kept": "local edit kept (pull would change it; --force to overwrite)",
}


def render_pull(pulled: Pulled) -> str:
    """The dry run's diffs (if any), then the summary."""
    previews = "".join(line for preview in pulled.settled.previews for line in preview_lines(preview))
    return previews + pull_summary(pulled)


def preview_lines(preview: Preview) -> Iterator[str]:
    yield f"--- {preview.name}: {PREVIEW_LABELS[preview.decision]}\n"
    if preview.sizes is not None:
        before, after = preview.sizes
        yield f"binary file: {before} bytes -> {after} bytes\n"
        return
    for line in preview.diff:
        yield line if line.endswith("\n") else line + "\n\\ No newline at end of file\n"


def pull_summary(pulled: Pulled, *, into: str | None = None) -> str:
    """One summary of every kind: what was (or, with ``dry_run``, would be) written, left unchanged, kept as a
    local edit or skipped; then the skipped objects and notes, and the kept files with what to do about them.
    ``into`` names where the files went when not into ``pulled.root`` (``pull --commit``: a branch), and then the
    state records nothing."""
    root, dry_run = pulled.root, pulled.dry_run
    lines = [
        *(f"skipped: {note}" for note in pulled.skipped),
        *(f"note: {note}" for note in pulled.notes),
        *(f"note: {note}" for note in pulled.unread.unrendered),
        *(f"not pulled: {why}" for why in pulled.unread.unreadable.values()),
    ]
    lines.append(f"pull {'(dry run, nothing written) ' if dry_run else ''}into {into or root}:")
    lines += _written_lines(pulled)
    if pulled.files_kept:
        lines.append(f"  files not downloaded again (the site serves them as recorded): {pulled.files_kept}")
    if pulled.placeholders:
        lines.append(f"  blocks kept as placeholders (never written by apply): {len(pulled.placeholders)}")
    lines += block_type_lines(pulled.editable, pulled.placeholders)
    if pulled.sub_areas:
        blocks = sum(count for _, _, count in pulled.sub_areas)
        lines.append(f"  sub-areas of layouts and containers: {len(pulled.sub_areas)} ({blocks} blocks)")
    if pulled.read_alone:
        reasons = "; ".join(f"{count} {reason}" for reason, count in pulled.read_alone.items())
        lines.append(f"  pages read one request each (no batch could tell): {reasons}")
    lines += not_taken_lines(pulled.not_taken)
    lines += _local_edit_lines(pulled)
    lines += _outcome(pulled, into)
    return "\n".join(lines) + "\n"


def _written_lines(pulled: Pulled) -> list[str]:
    """Per kind of file: how many were (or would be) written, left unchanged, kept or skipped."""
    settled, dry_run = pulled.settled, pulled.dry_run
    skipped_pages = sum(1 for note in pulled.skipped if note.startswith("page "))
    lines = []
    lists = list_kinds()
    for kind, label, extra in (
        ("page", "pages", f", {skipped_pages} skipped" if skipped_pages else ""),
        ("stack", "stacks (global areas)", ""),
        ("file", "files", ""),
        ("sidecar", "file sidecars", ""),
        *((kind.plural, f"{kind.file} ({len(pulled.records_of(kind.name))} {kind.plural})", "") for kind in lists),
        ("config", "cmssync.yaml (starter)", ""),
        ("ignore", ".gitignore (.cmssync/ stays local)", ""),
        *(
            (kind, f"{kind} files ({len(records)} objects)", "")
            for kind, records in pulled.records.items()
            if kind not in {listed.name for listed in lists}
        ),
    ):
        counts = settled.counts(kind)
        if counts or extra:
            lines.append(f"  {label}: {_counted(counts, dry_run)}{extra}")
    return lines


def _local_edit_lines(pulled: Pulled) -> list[str]:
    """The local edits not applied yet (kept as written), and the files kept rather than overwritten."""
    lines = []
    if pulled.local_edits or pulled.local_users or pulled.local_files:
        count = len(pulled.local_edits) + len(pulled.local_users) + len(pulled.local_files)
        lines.append(f"local edits not applied yet, kept as written ({count}; apply sends them):")
        lines += [f"  {page_named(path)}: {', '.join(names)}" for path, names in sorted(pulled.local_edits.items())]
        lines += [f"  user {name} (users.yaml)" for name in sorted(pulled.local_users)]
        lines += [f"  file {path} ({' and '.join(parts)})" for path, parts in sorted(pulled.local_files.items())]
    kept = pulled.settled.kept()
    if kept:
        lines.append(f"local edits kept, not overwritten ({len(kept)}; review them, or pull again with --force):")
        lines += [f"  {relative_name(item.target, pulled.root)}" for item in kept]
    return lines


def render_pull_commit(result: PullCommit) -> str:
    """``pull --commit``: the pull's summary, then the commit (its objects and fields) and the push."""
    branch = result.branch
    text = pull_summary(result.pulled, into=f"branch {branch}")
    lines = [f"  not committed (.gitignore excludes them): {', '.join(result.ignored)}"] if result.ignored else []
    if result.committed is None:
        lines.append(f"nothing to commit: branch {branch} is left as it was")
    else:
        made = "created" if result.committed.created else "updated"
        lines.append(
            f"committed {result.committed.commit[:12]} on branch {branch} ({made}; the checkout is untouched):"
        )
        for change in result.changes:
            version = f" (site version {change.version})" if change.version is not None else ""
            fields = ", ".join(item.field for item in change.fields)
            lines.append(f"  {change.object}{version}: {fields}")
    if result.pushed is not None:
        lines.append(f"pushed {branch}: {result.pushed}")
    if result.push_error is not None:
        lines.append(f"error: {result.push_error}")
        lines.append(f"the commit stays on the local branch {branch}; push it with: git push REMOTE {branch}")
    return text + "\n".join(lines) + "\n"


def _outcome(pulled: Pulled, into: str | None) -> list[str]:
    """The last line: how the pull ended, agreeing with its exit code and with what is listed above it."""
    unreadable = len(pulled.unread.unreadable)
    if unreadable:
        objects = f"{unreadable} object{'s' if unreadable > 1 else ''} could not be read"
        if pulled.dry_run:
            return [f"Pull (dry run) incomplete: {objects} (named above)"]
        return [
            f"Pull incomplete: {objects} and {'were' if unreadable > 1 else 'was'} not pulled (named above); "
            "everything else was pulled"
        ]
    if pulled.dry_run or into is not None:  # into a branch: the commit's lines say what happened
        return []
    if pulled.settled.kept():
        return []  # the kept files are listed with what to do about them
    if pulled.local_edits or pulled.local_users or pulled.local_files:
        return ["everything pulled is now managed; the next plan sends the local edits listed above"]
    return ["everything pulled is now managed (the next plan is empty)"]


def block_type_lines(editable: Counter[str], placeholders: list[str]) -> list[str]:
    """Per block type: how many blocks are editable, how many were kept as placeholders and why (the reasons of
    that type's placeholders, each once)."""
    kept: Counter[str] = Counter()
    reasons: dict[str, list[str]] = {}
    for entry in placeholders:  # "type id (reason)"
        kind, _, rest = entry.partition(" ")
        kept[kind] += 1
        reason = rest.partition(" (")[2].removesuffix(")")
        if reason and reason not in reasons.setdefault(kind, []):
            reasons[kind].append(reason)
    if not editable and not kept:
        return []
    lines = ["  blocks by type:"]
    for kind in sorted(set(editable) | set(kept)):
        parts = [f"{editable[kind]} editable"] if editable[kind] else []
        if kept[kind]:
            parts.append(f"{kept[kind]} kept ({'; '.join(reasons.get(kind, []))})")
        lines.append(f"    {kind}: {', '.join(parts)}")
    return lines


def not_taken_lines(not_taken: dict[str, list[str]]) -> list[str]:
    """What the site has and the content does not manage, left out (at most 5 names per kind)."""
    lines = []
    for kind in display_order(not_taken, pulled=True):
        names = not_taken[kind]
        if names:
            shown = ", ".join(names[:5]) + (f", … ({len(names) - 5} more)" if len(names) > 5 else "")
            lines.append(f"  {len(names)} {kind}{'s' if len(names) > 1 else ''}: {shown}")
    if not lines:
        return []
    return [
        "not taken in (on the site, not managed by this content; pull --all, --kind KIND or --pages PATH takes "
        "them in):",
        *lines,
    ]


def _counted(counts: Counter[Decision], dry_run: bool) -> str:
    words = {
        "new": "new" if dry_run else "written new",
        "updated": "to update" if dry_run else "updated",
        "forced": "to overwrite (--force)" if dry_run else "overwritten (--force)",
        "unchanged": "unchanged",
        "kept": "local edits kept",
    }
    parts = [f"{counts[d]} {words[d]}" for d in ("new", "updated", "forced", "unchanged", "kept") if counts[d]]
    return ", ".join(parts) or "none"
