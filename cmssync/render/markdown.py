"""The plan as a pull-request comment (``--format markdown``) that always posts.

GitHub refuses comments over 65,536 characters, and a 300-page plan renders to well over that. So the comment has a
budget (default 60,000 characters): the summary, blocked deletes and warnings come first and are always shown; then
one table row per object and one collapsible diff per object, in plan order, for as many objects as fit; the rest
is counted in a last line that points at the full plan (the artifact). Code fences are longer than any backtick run
in the text they hold, so a page whose HTML contains a line of three backticks cannot close a fence early.
"""

from __future__ import annotations

import re

from cmssync.plan.actions import SYMBOLS, Action, Plan, summary_line
from cmssync.render.text import (
    SENSITIVE,
    conflict_lines,
    details,
    header_line,
    held_reason,
    is_long,
    ordered,
    plain,
    show_value,
    shown_after,
)
from cmssync.render.textdiff import word_diff, word_diff_sides

DEFAULT_BUDGET = 60_000
MAX_WARNINGS = 20
_FOOTER_RESERVE = 400
"""Characters kept for the "N more" line and the summary line at the end."""


def render_markdown(plan: Plan, *, budget: int = DEFAULT_BUDGET, full_plan: str = "the plan artifact") -> str:
    """The comment; never longer than ``budget`` characters (the summary alone always fits a sane budget)."""
    head = _head(plan)
    footer = f"_{summary_line(plan)}_"
    actions = ordered(plan.actions)
    if not actions:
        return "\n".join([*head, footer]) + "\n"
    counts = plan.summary()
    head += ["| create | update | delete | move |", "|---:|---:|---:|---:|"]
    head += [f"| {counts['create']} | {counts['update']} | {counts['delete']} | {counts['move']} |", ""]
    rows = [_row(action) for action in actions]
    sections = [_section(action) for action in actions]
    table_head = ["| | kind | key | operation | details |", "|---|---|---|---|---|"]

    room = budget - _size(head) - _size(table_head) - _FOOTER_RESERVE
    shown = 0
    for row, section in zip(rows, sections, strict=True):
        cost = len(row) + 1 + (len(section) + 1 if section else 0)
        if cost > room:
            break
        room -= cost
        shown += 1
    lines = [*head, *table_head, *rows[:shown], "", *(section for section in sections[:shown] if section)]
    if shown < len(actions):
        lines.append(
            f"**{len(actions) - shown} more object(s) not shown here** (the comment is limited to {budget:,} "
            f"characters) — see {full_plan} for the full plan."
        )
        lines.append("")
    lines.append(footer)
    return "\n".join(lines) + "\n"


def _head(plan: Plan) -> list[str]:
    lines = ["### cmssync plan", "", f"Site `{plan.site}`, publish mode `{plan.publish}`."]
    if plan.header is not None:
        lines.append(f"<sub>{_html(header_line(plan.header))}</sub>")
    lines.append("")
    if plan.is_empty:
        lines += [f"**No changes.** {summary_line(plan).removeprefix('No changes. ')}", ""]
    notes = [f"**Deletes blocked:** {_md(entry.describe())}" for entry in plan.blocked]
    notes += [f"**Kept:** {_md(kept.describe())}" for kept in plan.kept]
    notes += [f"**Site addition:** {_md(added.describe())}" for added in plan.site_additions]
    lines += _notes(notes)
    lines += _site_changes(plan)
    lines += _held(plan)
    warnings = list(plan.warnings)
    notes = [f"**Warning:** {_md(warning[:500])}" for warning in warnings[:MAX_WARNINGS]]
    if len(warnings) > MAX_WARNINGS:
        notes.append(f"… and {len(warnings) - MAX_WARNINGS} more warnings in the full plan.")
    return lines + _notes(notes)


def _notes(notes: list[str]) -> list[str]:
    """Each note a quoted paragraph of its own, with a blank line after it (adjacent quoted lines would run into
    one paragraph, and a line right after an HTML block such as ``</details>`` would be taken as part of it)."""
    return [line for note in notes for line in (f"> {note}", "")]


def _site_changes(plan: Plan) -> list[str]:
    """Editors' changes kept on the site (drift policy), one line each, and their values (content → site) in a
    collapsible diff: ``-`` what the content says, ``+`` what the site holds."""
    if not plan.site_changes:
        return []
    lines = _notes([f"**Site change ({entry.action}):** {_md(entry.describe())}" for entry in plan.site_changes])
    body: list[str] = []
    for entry in plan.site_changes:
        body.append(f"# {entry.kind} {entry.key}: content → site")
        body += diff_body(
            Action(kind=entry.kind, key=entry.key, op="update", changes=entry.changes, blocks=entry.blocks)
        )
    fence = fence_for("\n".join(body))
    count = len(plan.site_changes)
    summary = f"{count} site change(s) to bring back into the content"
    return [*lines, f"<details><summary>{summary}</summary>", "", f"{fence}diff", *body, fence, "</details>", ""]


def _held(plan: Plan) -> list[str]:
    """Refused and skipped objects, each with its conflicts (base, content, site) in a collapsible diff."""
    held_ids = {entry.id for entry in plan.held}
    notes = [
        f"**{'Refused' if entry.fails else 'Skipped'}:** {entry.kind} {_code_span(_md(entry.key))} — "
        f"{_md(held_reason(entry))}: {_md(entry.message[:500])}"
        for entry in plan.held
    ]
    lines = _notes(notes)
    conflicts = list(plan.conflicts)
    if conflicts:
        body = []
        for conflict in conflicts:
            settled = "" if conflict.id in held_ids else " (settled)"
            body.append(f"{conflict.kind} {conflict.key}{settled}")
            body += [str(t).rstrip() for t in conflict_lines(conflict, indent="  ")]
        fence = fence_for("\n".join(body))
        lines += [
            f"<details><summary>{len(conflicts)} conflict(s)</summary>",
            "",
            fence,
            *body,
            fence,
            "</details>",
            "",
        ]
    return lines


def _row(action: Action) -> str:
    symbol, key, about = SYMBOLS[action.op], _md(action.key), _md(details(action))
    return f"| {symbol} | {action.kind} | {_code_span(key)} | {action.op} | {about} |"


def _section(action: Action) -> str:
    body = diff_body(action)
    if not body:
        return ""
    fence = fence_for("\n".join(body))
    title = f"{SYMBOLS[action.op]} {action.kind} <code>{_html(action.key)}</code> ({action.op})"
    return "\n".join([f"<details><summary>{title}</summary>", "", f"{fence}diff", *body, fence, "</details>", ""])


def diff_body(action: Action) -> list[str]:
    """The action as a unified diff, for a ```` ```diff ```` fence: every changed value is a ``-`` line (what the
    site has) and a ``+`` line (what the content wants), which GitHub colours red and green; a long value is its
    word diff, one pair of lines per changed paragraph, the changed words marked. Context lines start with a space.
    """
    lines = [
        f"# {line}" for line in (action.drift and "changed outside cmssync; the content wins", action.note) if line
    ]
    for change in action.changes:
        if change.sensitive:
            lines.append(f"~ {change.field}: {SENSITIVE} (changes)")
        else:
            lines += _value_lines(change.field, change.before, change.after, created=action.op == "create")
    for block in action.blocks:
        ident = f" #{block.block_id}" if block.block_id is not None else ""
        lines.append(f"{SYMBOLS[block.op]} {block.area}[{block.position}] {block.block_type}{ident}: {block.op}")
        if block.op == "delete":
            continue
        before, after, shown = block.before or {}, block.after or {}, shown_after(block)
        for field in sorted(set(before) | set(after)):
            old, new = before.get(field), after.get(field)
            if old != new or block.op != "update":
                lines += _value_lines(f"  {field}", old, shown.get(field), created=block.op != "update")
    return lines


def _value_lines(field: str, old: object, new: object, *, created: bool) -> list[str]:
    if created:
        return [f"+ {field}: {show_value(new)}"]
    if not (is_long(old) or is_long(new)):
        return [f"- {field}: {show_value(old)}", f"+ {field}: {show_value(new)}"]
    lines = [f"  {field}: ({word_diff(plain(old), plain(new)).summary()})"]
    for before, after in word_diff_sides(plain(old), plain(new)):
        lines += [f"  {before}"] if before == after else [f"- {before}", f"+ {after}"]
    return lines


def fence_for(text: str) -> str:
    """A backtick fence longer than any run of backticks in ``text`` (CommonMark closes on an equal or longer run)."""
    longest = max((len(run) for run in re.findall(r"`+", text)), default=0)
    return "`" * max(3, longest + 1)


def _code_span(text: str) -> str:
    longest = max((len(run) for run in re.findall(r"`+", text)), default=0)
    ticks = "`" * (longest + 1)
    return f"{ticks} {text} {ticks}" if longest else f"`{text}`"


def _size(lines: list[str]) -> int:
    return sum(len(line) + 1 for line in lines)


def _md(text: str) -> str:
    return text.replace("|", "\\|").replace("\n", " ")


def _html(text: str) -> str:
    return text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")
