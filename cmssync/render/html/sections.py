"""One section of the HTML report per action: its fields, its blocks' word diffs, and preview placeholders.

Pure. Every string from the plan is escaped here (``html.escape``) except block HTML meant for a preview, which
never enters the report's markup: it is stored in the :class:`Previews` list (the report's JSON data) and shown
only inside a sandboxed frame that the report's script creates when the placeholder scrolls into view.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from html import escape
from typing import Any

from cmssync.plan.actions import SYMBOLS, Action, BlockChange, FieldChange
from cmssync.render.html.preview import PREVIEW_FIELDS, estimated_height, is_image, renderable
from cmssync.render.html.worddiff import counts, diff_html, diff_tokens, visible_text

SENSITIVE = "(sensitive)"
ABSENT = "(none)"
FALLBACK_CHARS = 800
"""Characters of a block's text shown in its preview pane until the script renders it (print, PDF, no scripts)."""
_LONG = 72
_BLOCK_VERBS = {"add": "added", "update": "changed", "delete": "removed"}


class Previews:
    """The preview documents of a report, each stored once, referred to by index from their placeholders."""

    def __init__(self, site: str) -> None:
        self.site = site
        self.documents: list[str] = []
        self._index: dict[str, int] = {}

    def placeholder(self, fragment: str, label: str) -> str:
        body = renderable(fragment, self.site)
        index = self._index.get(body)
        if index is None:
            index = self._index[body] = len(self.documents)
            self.documents.append(body)
        text = visible_text(body)
        shown = escape(text[:FALLBACK_CHARS] + ("…" if len(text) > FALLBACK_CHARS else "")) or "(no text)"
        return (
            f'<div class="pv" data-doc="{index}" data-h="{estimated_height(body)}" data-title="{escape(label)}">'
            f'<div class="pv-text" title="the block\'s text; the rendered preview needs the report\'s script">'
            f"{shown}</div></div>"
        )


def anchor(index: int) -> str:
    return f"a-{index}"


def details_tag(index: int, action: Action, extra: str = "") -> str:
    """The opening ``<details>`` of an action's section; ``extra`` is more attributes (``open``, ``data-body``)."""
    key = escape(_filter_text(action))
    return f'<details class="action op-{action.op}" id="{anchor(index)}" data-key="{key}"{extra}>'


def action_section(action: Action, previews: Previews) -> tuple[str, str]:
    """An action's ``<summary>`` line and the body of its section."""
    symbol = SYMBOLS[action.op]
    head = (
        f'<summary><span class="sym">{escape(symbol)}</span> <span class="kind">{action.kind}</span> '
        f'<code>{escape(action.key)}</code> <span class="op">{escape(action.op)}</span>'
        f'<span class="brief">{escape(brief(action))}</span></summary>'
    )
    parts = ['<div class="body">']
    if action.drift:
        parts.append('<p class="drift">Changed on the site outside cmssync since the last apply; the content wins.</p>')
    if action.note:
        parts.append(f'<p class="note">{escape(action.note)}</p>')
    if action.changes:
        parts.append(_field_table(action.changes))
    if action.kind == "file" and action.op in ("create", "replace") and is_image(action.key):
        parts.append(
            f'<figure class="file"><img class="thumb" data-file="{escape(action.key)}" '
            f'alt="{escape(action.key)}"><figcaption>new file from the content</figcaption></figure>'
        )
    parts.extend(_block(action, block, previews) for block in action.blocks)
    if action.depends_on:
        after = ", ".join(escape(d) for d in action.depends_on)
        parts.append(f'<p class="deps">After: {after}</p>')
    parts.append("</div>")
    return head, "".join(parts)


def _filter_text(action: Action) -> str:
    return f"{action.kind} {action.key} {action.op}".lower()


def brief(action: Action) -> str:
    """A few words on what changes, for the objects list and the section title."""
    parts: list[str] = []
    if action.changes:
        names = [change.field for change in action.changes]
        parts.append(", ".join(names[:4]) + (f" +{len(names) - 4}" if len(names) > 4 else ""))
    if action.blocks:
        tally: dict[str, int] = {}
        for block in action.blocks:
            tally[block.op] = tally.get(block.op, 0) + 1
        parts.append(", ".join(f"{n} block{'s' if n != 1 else ''} {_BLOCK_VERBS[op]}" for op, n in tally.items()))
    if action.drift:
        parts.append("changed outside cmssync")
    return "; ".join(parts)


def _field_table(changes: tuple[FieldChange, ...]) -> str:
    rows = "".join(_field_row(change) for change in changes)
    return (
        '<table class="fields"><thead><tr><th scope="col">field</th><th scope="col">live</th>'
        f'<th scope="col">content</th></tr></thead><tbody>{rows}</tbody></table>'
    )


def _field_row(change: FieldChange) -> str:
    name = f'<th scope="row"><code>{escape(change.field)}</code></th>'
    if change.sensitive:
        return f'<tr>{name}<td class="old">{SENSITIVE}</td><td class="new">{SENSITIVE}</td></tr>'
    before, after = change.before, change.after
    if isinstance(before, str) and isinstance(after, str) and _is_long(before, after):
        return f'<tr>{name}<td colspan="2" class="wdiff">{diff_html(before, after)}</td></tr>'
    return f'<tr>{name}<td class="old">{_value(before)}</td><td class="new">{_value(after)}</td></tr>'


def _is_long(*values: str) -> bool:
    return any("\n" in v.strip() or len(v) > _LONG for v in values)


def _value(value: Any) -> str:
    if value is None:
        return f'<span class="absent">{ABSENT}</span>'
    if value == "":
        return '<span class="absent">(empty)</span>'
    if isinstance(value, str):
        return escape(value)
    return f"<code>{escape(json.dumps(value, ensure_ascii=False))}</code>"


def _block(action: Action, block: BlockChange, previews: Previews) -> str:
    symbol = SYMBOLS[block.op]
    ident = f" #{block.block_id}" if block.block_id is not None else ""
    where = f"{block.area}[{block.place}] {block.block_type}{ident}"
    before, after = block.before or {}, block.after or {}
    parts = [
        f'<section class="block bop-{block.op}"><h4><span class="sym">{escape(symbol)}</span> '
        f"<code>{escape(where)}</code> {escape(_BLOCK_VERBS[block.op])}</h4>"
    ]
    parts.extend(_block_fields(block, before, after))
    label = f"{action.key} {where}"
    for name in PREVIEW_FIELDS:
        if name in before or name in after:
            parts.append(_preview_pair(block, before.get(name), after.get(name), label, previews))
    if block.op == "delete" and not before:
        parts.append('<p class="absent">The plan holds no copy of the removed block.</p>')
    parts.append("</section>")
    return "".join(parts)


def _block_fields(block: BlockChange, before: dict[str, str], after: dict[str, str]) -> Iterator[str]:
    for name in sorted(set(before) | set(after)):
        old, new = before.get(name), after.get(name)
        if block.op == "update" and old == new:
            continue
        if block.op == "update" and old is not None and new is not None:
            segments = diff_tokens(old, new)
            added, removed = counts(segments)
            yield (
                f'<div class="bfield"><div class="fname"><code>{escape(name)}</code> '
                f'<span class="tally">+{added} −{removed} words</span></div>'
                f'<div class="wdiff">{diff_html(old, new)}</div></div>'
            )
        elif name not in PREVIEW_FIELDS and not (block.op == "delete" and "content" in before):
            shown = new if new is not None else old
            yield f'<div class="bfield"><code>{escape(name)}</code>: {_value(shown)}</div>'


def _preview_pair(block: BlockChange, old: str | None, new: str | None, label: str, previews: Previews) -> str:
    left = (
        previews.placeholder(old, f"{label}, live")
        if old is not None and block.op != "add"
        else '<div class="pv-none">(no block)</div>'
    )
    right = (
        previews.placeholder(new, f"{label}, content")
        if new is not None and block.op != "delete"
        else '<div class="pv-none">(removed)</div>'
    )
    return (
        '<div class="pair"><figure><figcaption>Before (live site)</figcaption>'
        f"{left}</figure><figure><figcaption>After (content)</figcaption>{right}</figure></div>"
    )
