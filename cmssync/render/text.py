"""Renderings of a plan: text (coloured on a terminal) and JSON for machines (markdown: ``plan.markdown``).

Pure: each renderer takes a ``Plan`` and returns a string; the caller decides where it goes and whether the
terminal wants colour (``NO_COLOR``, not a TTY). Long or multi-line values are shown as word diffs
(``cmssync.render.textdiff``: ``[-old-]{+new+}`` with a few words of context, markup compared canonically), so a
three-word edit in a long paragraph reads as three words. A sensitive field is always printed as ``(sensitive)``,
whatever the plan holds. Conflicts and held objects (``Plan.conflicts``, ``Plan.held``) come after the actions.
"""

from __future__ import annotations

import io
import json
import re
from collections.abc import Iterable, Iterator, Mapping
from typing import Any

from rich.console import Console
from rich.text import Text

from cmssync.content.paths import page_named
from cmssync.content.text import FileLinkRef
from cmssync.content.text import Text as ContentText
from cmssync.plan.actions import (
    OUTPUT_FORMAT_VERSION,
    SYMBOLS,
    Action,
    BlockChange,
    FieldChange,
    FieldConflict,
    HeldObject,
    Plan,
    PlanHeader,
    SiteChange,
    markup_free_json,
    plan_exit_code,
    summary_line,
)
from cmssync.plan.builtin_kinds import display_order
from cmssync.plan.references import FILE_LINK
from cmssync.render.textdiff import word_diff

SENSITIVE = "(sensitive)"
ABSENT = "(none)"
_LONG = 72
_STYLES = {"+": "green", "~": "yellow", "-": "red", ">": "cyan"}


TIE_READS_CAUSE = (
    "read one request each: the site's list skips them because their dates tie in a group longer than a list page "
    "(a bulk import within one second); no cursor can return such a group whole"
)


def render_json(plan: Plan) -> str:
    """The versioned JSON document of ``--format json`` (documented in the README)."""
    document = {
        "format_version": OUTPUT_FORMAT_VERSION,
        "has_changes": plan.has_changes,
        "is_empty": plan.is_empty,
        "writes": plan.writes,
        "detailed_exit_code": plan_exit_code(plan, detailed=True),
        "summary": plan.summary(),
        "site": plan.site,
        **({"trees": plan.trees} if plan.trees else {}),
        "publish": plan.publish,
        "content_digest": plan.content_digest,
        "header": plan.header.model_dump(mode="json") if plan.header is not None else None,
        "blocked": [
            {**entry.model_dump(mode="json"), "count": len(entry.keys), "message": entry.describe()}
            for entry in plan.blocked
        ],
        "kept": [
            {**entry.model_dump(mode="json"), "count": len(entry.keys), "message": entry.describe()}
            for entry in plan.kept
        ],
        "site_additions": [
            {**entry.model_dump(mode="json"), "count": len(entry.blocks), "message": entry.describe()}
            for entry in plan.site_additions
        ],
        "site_changes": [_site_change_json(entry) for entry in plan.site_changes],
        "warnings": list(plan.warnings),
        "actions": [_action_json(action, plan) for action in plan.actions],
        "conflicts": [conflict.model_dump(mode="json") | {"id": conflict.id} for conflict in plan.conflicts],
        "held": [
            entry.model_dump(mode="json", exclude={"action"})
            | {"id": entry.id, "action": _action_json(entry.action, plan) if entry.action else None}
            for entry in plan.held
        ],
        "refused": len(plan.refused),
        "tie_reads": {
            **{kind: plan.tie_reads.get(kind, 0) for kind in ("files", "users")},
            "cause": TIE_READS_CAUSE if any(plan.tie_reads.values()) else None,
        },
    }
    return markup_free_json(json.dumps(document, indent=2, sort_keys=False, ensure_ascii=False)) + "\n"


def _action_json(action: Action, plan: Plan) -> dict[str, Any]:
    """An action as the report shows it: what changes, not what apply sends (the write forms of pages, blocks,
    files, users and added kinds' objects); on a site with several locale trees, the tree of a page or stack
    (``tree``)."""
    data = action.model_dump(mode="json", exclude={"page", "file", "user", "form"})
    data["id"] = action.id
    if plan.trees:
        data["tree"] = plan.tree_of(action.kind, action.key)
    data["changes"] = [_change_json(change) for change in action.changes]
    data["blocks"] = [
        block.model_dump(mode="json", exclude={"write", "live_position"}) | {"position": block.place}
        for block in action.blocks
    ]
    return data


def _site_change_json(entry: SiteChange) -> dict[str, Any]:
    """A site change kept by the drift policy: ``action`` (``propose``/``adopt``), ``reason``, and its changes from
    the content's value (``before``) to the site's (``after``)."""
    data = entry.model_dump(mode="json")
    data["id"] = entry.id
    data["fields"] = list(entry.fields)
    data["changes"] = [_change_json(change) for change in entry.changes]
    data["blocks"] = [
        block.model_dump(mode="json", exclude={"write", "live_position"}) | {"position": block.place}
        for block in entry.blocks
    ]
    data["message"] = entry.describe()
    return data


def _change_json(change: FieldChange) -> dict[str, Any]:
    data = change.model_dump(mode="json")
    if change.sensitive:
        data["before"] = data["after"] = SENSITIVE
    return data


def trees_line(trees: dict[str, str]) -> str:
    """``locale trees: en_US at /, de_DE at /de``."""
    return "locale trees: " + ", ".join(f"{locale} at {home}" for home, locale in trees.items())


def named(plan: Plan, thing: Action | HeldObject) -> str:
    """``page /de/about (de_DE)``: an object as the plan's lines name it, with its locale tree when the site has
    several and the tree is known."""
    tree = plan.tree_of(thing.kind, thing.key)
    return f"{thing.kind} {thing.key}" + (f" ({tree})" if tree else "")


def render_text(plan: Plan, *, color: bool = False, width: int = 100) -> str:
    """Human-readable plan grouped by resource kind: ``+`` create, ``~`` update, ``-`` delete, ``>`` move."""
    return _printed(_text_lines(plan), color=color, width=width)


def render_compact(plan: Plan, *, color: bool = False, width: int = 100) -> str:
    """One line per object (``~ page /about: update (name, 2 block changes)``), then blocked deletes, warnings
    and the summary: every object and every guard, none of the field values (for plans too long to read)."""
    return _printed(_compact_lines(plan), color=color, width=width)


def _printed(lines: Iterable[Text], *, color: bool, width: int) -> str:
    buffer = io.StringIO()
    console = Console(
        file=buffer,
        force_terminal=color,
        color_system="standard" if color else None,
        width=width,
        markup=False,
        emoji=False,
        highlight=False,
    )
    for line in lines:
        console.print(line, soft_wrap=True)
    return buffer.getvalue()


def _compact_lines(plan: Plan) -> Iterator[Text]:
    yield Text(f"cmssync plan for {plan.site} (publish: {plan.publish})", style="bold")
    for kind in display_order(a.kind for a in plan.actions):
        for action in (a for a in plan.actions if a.kind == kind):
            symbol = SYMBOLS[action.op]
            more = details(action)
            line = f"{symbol} {named(plan, action)}: {action.op}" + (f" ({more})" if more else "")
            yield _styled(symbol, line)
    yield from _closing_lines(plan)


def _text_lines(plan: Plan) -> Iterator[Text]:
    yield Text(f"cmssync plan for {plan.site} (publish: {plan.publish})", style="bold")
    if plan.header is not None:
        yield Text(header_line(plan.header), style="dim")
    if plan.trees:
        yield Text(trees_line(plan.trees), style="dim")
    for kind in display_order(a.kind for a in plan.actions):
        actions = [a for a in plan.actions if a.kind == kind]
        if not actions:
            continue
        yield Text("")
        for action in actions:
            yield _styled(SYMBOLS[action.op], f"{SYMBOLS[action.op]} {named(plan, action)}: {action.op}")
            if action.drift:
                yield Text("    changed outside cmssync; the content wins", style="magenta")
            if action.note:
                yield Text(f"    note: {action.note}", style="dim")
            for change in action.changes:
                yield from _change_lines(change)
            for block in action.blocks:
                yield from _block_lines(block)
    yield from _closing_lines(plan)


def _closing_lines(plan: Plan) -> Iterator[Text]:
    """Held objects and conflicts, blocked deletes, warnings and the summary: in every text rendering."""
    yield from _held_lines(plan)
    if plan.blocked or plan.kept:
        yield Text("")
    for entry in plan.blocked:
        yield Text(f"! {entry.kind} deletes blocked: {entry.describe()}", style="red")
        yield Text(f"    {_keys(entry.keys)}", style="dim")
    for kept in plan.kept:
        yield Text(f"! kept: {kept.describe()}", style="yellow")
    for added in plan.site_additions:
        yield Text(f"= site addition: {added.describe()}", style="cyan")
    yield from site_change_lines(plan)
    for warning in plan.warnings:
        yield Text(f"warning: {warning}", style="yellow")
    yield Text("")
    yield Text(summary_line(plan), style="bold")


def _held_lines(plan: Plan) -> Iterator[Text]:
    """Held objects (refused or skipped) with their conflicts, then conflicts a policy settled."""
    held_ids = {entry.id for entry in plan.held}
    for entry in plan.held:
        yield Text("")
        verb = "refused" if entry.fails else "skipped"
        yield Text(f"! {named(plan, entry)}: {verb} ({held_reason(entry)})", style="red" if entry.fails else "yellow")
        yield Text(f"    {entry.message}", style="dim")
        for conflict in plan.conflicts:
            if conflict.id == entry.id:
                yield from conflict_lines(conflict)
        if entry.reason == "foreign_draft" and entry.action is not None:
            yield Text("    would change: " + (details(entry.action) or "nothing"), style="dim")
    settled = [c for c in plan.conflicts if c.id not in held_ids]
    if settled:
        yield Text("")
    for conflict in settled:
        yield Text(f"~ {conflict.kind} {conflict.key}: conflict settled ({conflict.resolution})", style="yellow")
        yield from conflict_lines(conflict)


def site_change_lines(plan: Plan) -> Iterator[Text]:
    """Editors' changes the drift policy keeps on the site, each value from the content's to the site's."""
    for entry in plan.site_changes:
        yield Text(f"= site change ({entry.action}): {entry.describe()}", style="cyan")
        yield Text("    content → site:", style="dim")
        for change in entry.changes:
            yield from _change_lines(change)
        for block in entry.blocks:
            yield from _block_lines(block)


def held_reason(entry: HeldObject) -> str:
    if entry.reason == "foreign_draft" and entry.draft is not None:
        return entry.draft.describe()
    if entry.reason == "unreadable":
        return "cannot be read, or needs an object that cannot be read"
    return "changed in the content and on the site"


def conflict_lines(conflict: FieldConflict, indent: str = "    ") -> Iterator[Text]:
    """One conflicted field: base (when known), the content's and the site's values; long text as word diffs
    from the base (or from the site when the base is not known) to each side."""
    yield Text(f"{indent}conflict {conflict.field} ({conflict.resolution}):", style="magenta")
    base = conflict.base if conflict.base_known else None
    content, site = plain(conflict.content), plain(conflict.site)
    if not (is_long(content) or is_long(site) or is_long(plain(base))):
        yield Text(f"{indent}  base:    {show_value(base) if conflict.base_known else '(not known)'}")
        yield Text(f"{indent}  content: {show_value(conflict.content)}")
        yield Text(f"{indent}  site:    {show_value(conflict.site)}")
        return
    if conflict.base_known:
        for label, value in (("content", content), ("site", site)):
            diff = word_diff(plain(base), value)
            yield Text(f"{indent}  {label} vs base ({diff.summary()}):")
            yield from _indented(diff.text, indent + "    ")
        return
    diff = word_diff(site, content)
    yield Text(f"{indent}  base not known; site → content ({diff.summary()}):")
    yield from _indented(diff.text, indent + "    ")


def _indented(text: str, indent: str) -> Iterator[Text]:
    for line in text.splitlines() or [""]:
        yield Text(indent + line)


def _keys(keys: tuple[str, ...], shown: int = 10) -> str:
    more = f" … and {len(keys) - shown} more" if len(keys) > shown else ""
    return ", ".join(keys[:shown]) + more


def header_line(header: PlanHeader) -> str:
    options = ", ".join(f"{k}={v}" for k, v in header.options.items() if v not in (None, False, [], ()))
    made = f"made by cmssync {header.cmssync_version} at {header.created_at} from {header.content_dir}"
    return made + (f" ({options})" if options else "")


def _styled(symbol: str, text: str) -> Text:
    return Text(text, style=_STYLES.get(symbol, ""))


def _change_lines(change: FieldChange) -> Iterator[Text]:
    if change.sensitive:
        yield Text(f"    {change.field}: {SENSITIVE} → {SENSITIVE}")
        return
    if is_long(change.before) or is_long(change.after):
        yield from _word_diff_lines(change.field, plain(change.before), plain(change.after), indent="    ")
        return
    yield Text(f"    {change.field}: {show_value(change.before)} → {show_value(change.after)}")


def _block_lines(block: BlockChange) -> Iterator[Text]:
    symbol = SYMBOLS[block.op]
    ident = f" #{block.block_id}" if block.block_id is not None else ""
    yield _styled(symbol, f"    {symbol} {block.area}[{block.place}] {block.block_type}{ident}: {block.op}")
    before, after, shown = block.before or {}, block.after or {}, shown_after(block)
    for field in sorted(set(before) | set(after)):
        old, new = before.get(field), shown.get(field)
        if block.op == "update" and old == after.get(field):
            continue
        if block.op == "delete":
            continue
        if is_long(old) or is_long(new):
            yield from _word_diff_lines(field, plain(old), plain(new), indent="        ")
        else:
            yield Text(
                f"        {field}: {show_value(old)} → {show_value(new)}"
                if block.op == "update"
                else f"        {field}: {show_value(new)}"
            )


def _word_diff_lines(field: str, before: str, after: str, *, indent: str) -> Iterator[Text]:
    """A long value as a word diff, live → desired (``[-deleted-]{+inserted+}``)."""
    diff = word_diff(before, after)
    yield Text(f"{indent}{field}: ({diff.summary()})")
    for line in diff.text.splitlines():
        yield Text(indent + "  " + line, style="yellow")


def is_long(value: Any) -> bool:
    return isinstance(value, str) and ("\n" in value.strip() or len(value) > _LONG)


def plain(value: Any) -> str:
    """A compared value as the text a word diff reads: strings :func:`readable`; a structured value (an area's
    blocks) with its strings as they are, never JSON-escaped — an escaped quote broke an HTML string's attributes
    apart (``class="\\&quot;display-2\\&quot;"``) — and its references named (``[stack footer]``)."""
    if value is None:
        return ""
    if isinstance(value, str):
        return readable(value)
    if isinstance(value, Mapping):
        return "{" + ", ".join(f"{key}: {plain(item)}" for key, item in value.items()) + "}"
    if isinstance(value, list | tuple):
        return "[" + ", ".join(plain(item) for item in value) + "]"
    return json.dumps(value, ensure_ascii=False)


def show_value(value: Any) -> str:
    if value is None:
        return ABSENT
    return json.dumps(readable(value) if isinstance(value, str) else value, ensure_ascii=False)


_FILE_TOKEN = re.compile(r"\{ccm:export:file:[^{}:]*:([^{}]*)\}|\$\{file(?:-id|-link)?:(?:[^{}]*/)?([^{}/]*)\}")
_PAGE_TOKEN = re.compile(r"\{ccm:export:page:([^{}]*)\}")
_NAMED_FILE_LINK = re.compile(r"\{ccm:file-link(?::([^{}]*))?\}")


def readable(text: str) -> str:
    """A compared value as a reviewer reads it, never an export token: a file by its name (``[file logo.png]``,
    the same for the site's export and the content's reference, so a file that is only re-pointed shows no change),
    a page by its path (``[page /about]``), a stack by its handle (``[stack footer]``, as a stack display's
    ``stack:`` names it), a download link by the name of the file it serves where the content
    names it (``[download link brochure.pdf]``, see :func:`shown_after`), else as ``[download link]``: the site's
    read does not tell a link's file."""
    if "{" not in text:
        return text
    text = _FILE_TOKEN.sub(lambda m: f"[file {m.group(1) or m.group(2)}]", text)
    text = _PAGE_TOKEN.sub(lambda m: f"[{page_named(m.group(1) or '/')}]", text)
    return _NAMED_FILE_LINK.sub(lambda m: f"[download link {m.group(1)}]" if m.group(1) else "[download link]", text)


def shown_after(block: BlockChange) -> dict[str, str]:
    """The block's desired value as a reviewer reads it: each download link (compared by presence only, so the
    compared value does not say which file it serves) named after the file its ``${file-link:PATH}`` in the
    content names, in order. A field whose links cannot be paired one to one with the content's (a raw
    ``{CCM:FID_DL_n}`` or an empty link attribute in the content) keeps them unnamed."""
    after = dict(block.after or {})
    form = block.write
    if form is None:
        return after
    for field, value in after.items():
        written = form.value.get(field)
        if not isinstance(value, str) or FILE_LINK not in value or not isinstance(written, ContentText):
            continue
        names = [ref.path.rsplit("/", 1)[-1] for ref in written.references if isinstance(ref, FileLinkRef)]
        pieces = value.split(FILE_LINK)
        if len(pieces) == len(names) + 1:
            after[field] = pieces[0] + "".join(
                "{ccm:file-link:" + name + "}" + piece for name, piece in zip(names, pieces[1:], strict=True)
            )
    return after


def ordered(actions: Iterable[Action]) -> list[Action]:
    actions = list(actions)
    order = display_order(a.kind for a in actions)
    return sorted(actions, key=lambda a: order.index(a.kind))


def details(action: Action) -> str:
    parts = []
    if action.changes:
        parts.append(", ".join(change.field for change in action.changes))
    if action.blocks:
        parts.append(f"{len(action.blocks)} block change{'s' if len(action.blocks) != 1 else ''}")
    if action.drift:
        parts.append("changed outside cmssync")
    return "; ".join(parts)
