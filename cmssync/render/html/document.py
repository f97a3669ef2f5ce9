"""The HTML plan report: one self-contained file with the summary, a list of objects and a section per action.

Pure: :func:`render_html` takes a :class:`Plan` and the bytes of the content files the report may inline (see
:func:`cmssync.render.html.preview.files_wanted`) and returns the document; the caller writes it where it wants.

Safe by construction: every string from the plan is escaped, block HTML is rendered only in sandboxed ``srcdoc``
frames (``cmssync.render.html.preview``), and a strict Content-Security-Policy allows the report's one script by hash.
Fit for big plans: preview frames are created by the script only when they come into view; a plan of more than
:data:`OPEN_LIMIT` actions opens with its sections collapsed and their bodies (report markup, escaped like the rest)
kept as strings in the JSON data, parsed only when a section is opened — a 1,000-page report's DOM is its summary,
its list of objects and 1,000 one-line sections. The JSON data keeps each preview document and each image once.
Readable in light and dark (``prefers-color-scheme``), printable (print styles; printing opens every section).
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from html import escape

from cmssync.plan.actions import SYMBOLS, Action, Plan, summary_line
from cmssync.plan.builtin_kinds import display_order
from cmssync.render.html.preview import files_wanted, frame_head, inline_images, placeholder_image, report_policy
from cmssync.render.html.sections import Previews, action_section, anchor, brief, details_tag
from cmssync.render.html.static import SCRIPT, STYLE, script_hash

OPEN_LIMIT = 40
"""Plans with at most this many actions open with every section expanded."""
OPS = ("create", "update", "replace", "publish", "move", "delete")
LISTED_KEYS = 50
"""Keys of blocked deletes listed before "N more"."""


def render_html(plan: Plan, *, files: Mapping[str, bytes] | None = None) -> str:
    """The report of ``plan``; ``files`` maps content file paths (``images/logo.png``) to their bytes."""
    previews = Previews(plan.site)
    eager = len(plan.actions) <= OPEN_LIMIT
    sections: list[str] = []
    bodies: list[str] = []
    for index, action in enumerate(plan.actions):
        summary, body = action_section(action, previews)
        if eager:
            sections.append(f"{details_tag(index, action, ' open')}{summary}{body}</details>")
        else:
            sections.append(f"{details_tag(index, action, f' data-body={len(bodies)}')}{summary}</details>")
            bodies.append(body)
    images = inline_images(files_wanted(plan), files or {})
    data = {
        "head": frame_head(plan.site),
        "docs": previews.documents,
        "bodies": bodies,
        "images": images.uris,
        "missing": placeholder_image("image not available to the report"),
    }
    title = f"cmssync plan: {plan.site}"
    markup = [
        '<a class="skip" href="#changes">Skip to the changes</a>',
        _header(plan, title),
        "<main>",
        _summary(plan),
        _objects(plan) if eager else "",
        f'<h2 id="changes" tabindex="-1">{"Changes" if eager else f"Objects and changes ({len(plan.actions)})"}</h2>',
        _toolbar(len(plan.actions), eager=eager),
        *sections,
        "" if plan.actions else '<p class="muted">No actions.</p>',
        "</main>",
        '<footer><p class="keys">Keys: <kbd>j</kbd>/<kbd>k</kbd> next/previous change, <kbd>/</kbd> filter. '
        "Previews are the blocks' HTML as stored on the site and in the content, shown in sandboxed frames without "
        "the site's theme; nothing in them runs.</p></footer>",
        f'<script type="application/json" id="report-data">{_json_for_html(data)}</script>',
        f"<script>{SCRIPT}</script>",
    ]
    policy = report_policy(plan.site, script_hash())
    return (
        '<!doctype html>\n<html lang="en"><head><meta charset="utf-8">'
        f'<meta http-equiv="Content-Security-Policy" content="{escape(policy)}">'
        '<meta name="referrer" content="no-referrer">'
        '<meta name="viewport" content="width=device-width, initial-scale=1">'
        f'<meta name="generator" content="cmssync"><title>{escape(title)}</title>'
        f"<style>{STYLE}</style></head><body>\n" + "\n".join(markup) + "\n</body></html>\n"
    )


def _json_for_html(data: object) -> str:
    """JSON that cannot end its ``<script>`` element: every ``</`` written ``<\\/`` and ``<!--`` as ``\\u003c!--``.

    Those are the only sequences the HTML parser acts on inside script data; escaping every ``<`` would make the
    data (mostly HTML) a third larger.
    """
    text = json.dumps(data, ensure_ascii=False, separators=(",", ":"))
    return text.replace("</", "<\\/").replace("<!--", "\\u003c!--")


def _header(plan: Plan, title: str) -> str:
    meta = [f"<span>publish: {escape(plan.publish)}</span>"]
    header = plan.header
    if header is not None:
        meta.append(f"<span>cmssync {escape(header.cmssync_version)}</span>")
        meta.append(f"<span>made {escape(header.created_at)}</span>")
        meta.append(f"<span>content: <code>{escape(header.content_dir)}</code></span>")
        options = ", ".join(f"{k}={json.dumps(v)}" for k, v in header.options.items() if v not in (None, False, [], ()))
        if options:
            meta.append(f"<span>options: <code>{escape(options)}</code></span>")
    meta.append(f"<span>content digest <code>{escape(plan.content_digest[:19])}</code></span>")
    return (
        f"<header><h1>{escape(title)}</h1>"
        f'<p class="meta">{"".join(meta)}</p>'
        f'<p class="verdict" id="verdict">{escape(summary_line(plan))}</p></header>'
    )


def _summary(plan: Plan) -> str:
    parts = ['<h2 id="summary">Summary</h2>', _counts(plan)]
    blocks: dict[str, int] = {}
    for action in plan.actions:
        for block in action.blocks:
            blocks[block.op] = blocks.get(block.op, 0) + 1
    if blocks:
        said = ", ".join(f"{blocks.get(op, 0)} {verb}" for op, verb in _BLOCK_WORDS)
        parts.append(f'<p id="block-counts">Blocks: {said}.</p>')
    drifted = [(i, a) for i, a in enumerate(plan.actions) if a.drift]
    if drifted:
        links = ", ".join(_link(i, a) for i, a in drifted)
        parts.append(
            f'<h3 id="conflicts">Conflicts: {len(drifted)} changed on the site outside cmssync</h3>'
            f"<p>Applying overwrites these site changes with the content: {links}</p>"
        )
    parts += _held_back(plan)
    parts += _site_changes(plan)
    if plan.warnings:
        listed = "".join(f"<li>{escape(w)}</li>" for w in plan.warnings)
        parts.append(f'<h3 id="warnings">Warnings: {len(plan.warnings)}</h3><ul class="warnings">{listed}</ul>')
    return "".join(parts)


def _held_back(plan: Plan) -> list[str]:
    """The sections of what the plan does not do: blocked deletes, objects kept, held pages and conflicts."""
    parts: list[str] = []
    if plan.blocked:
        items = []
        for entry in plan.blocked:
            keys = ", ".join(escape(k) for k in entry.keys[:LISTED_KEYS])
            more = f" … and {len(entry.keys) - LISTED_KEYS} more" if len(entry.keys) > LISTED_KEYS else ""
            items.append(f"<li><strong>{escape(entry.describe())}</strong><br><code>{keys}</code>{more}</li>")
        total = sum(len(entry.keys) for entry in plan.blocked)
        parts.append(f'<h3 id="blocked">Blocked deletes: {total}</h3><ul class="blocked">{"".join(items)}</ul>')
    if plan.kept:
        items = [f"<li><strong>{escape(kept.describe())}</strong></li>" for kept in plan.kept]
        total = sum(len(kept.keys) for kept in plan.kept)
        parts.append(
            f'<h3 id="kept">Removed from the content, kept: {total}</h3><ul class="blocked">{"".join(items)}</ul>'
        )
    if plan.held or plan.conflicts:  # issue 16: refused/skipped pages and three-way conflicts
        items = [
            f"<li><strong>{escape(h.kind)} {escape(h.key)}: {'refused' if h.fails else 'skipped'}</strong> — "
            f"{escape(h.message)}</li>"
            for h in plan.held
        ]
        items += [
            f"<li>conflict {escape(c.kind)} {escape(c.key)} <code>{escape(c.field)}</code> ({escape(c.resolution)}): "
            f"content {escape(_short(c.content))}, site {escape(_short(c.site))}"
            + (f", base {escape(_short(c.base))}" if c.base_known else "")
            + "</li>"
            for c in plan.conflicts
        ]
        parts.append(f'<h3 id="conflicts">Conflicts and held pages</h3><ul class="blocked">{"".join(items)}</ul>')
    return parts


_BLOCK_WORDS = (("add", "added"), ("update", "changed"), ("delete", "removed"))


def _site_changes(plan: Plan) -> list[str]:
    """Editors' changes the drift policy keeps on the site (issue 34), each value from the content's to the site's."""
    if not plan.site_changes:
        return []
    items = [
        f"<li><strong>{escape(entry.describe())}</strong><ul>"
        + "".join(
            f"<li><code>{escape(c.field)}</code>: content {escape(_short(c.before))} → site "
            f"{escape(_short(c.after))}</li>"
            for c in entry.changes
        )
        + "".join(
            f"<li><code>{escape(b.area)}[{b.place}]</code> {escape(b.block_type)}: content "
            f"{escape(_short(b.before))} → site {escape(_short(b.after))}</li>"
            for b in entry.blocks
        )
        + "</ul></li>"
        for entry in plan.site_changes
    ]
    return [
        f'<h3 id="site-changes">Site changes to bring back: {len(plan.site_changes)}</h3>'
        f'<ul class="warnings">{"".join(items)}</ul>'
    ]


def _counts(plan: Plan) -> str:
    kinds = display_order(a.kind for a in plan.actions)
    if not kinds:
        return ""
    ops = [op for op in OPS if op in ("create", "update", "delete") or any(a.op == op for a in plan.actions)]
    tally: dict[tuple[str, str], int] = {}
    for action in plan.actions:
        tally[action.kind, action.op] = tally.get((action.kind, action.op), 0) + 1
    head = "".join(f'<th scope="col">{op}</th>' for op in ops)
    rows = []
    for kind in [*kinds, "total"]:
        cells = []
        for op in ops:
            n = sum(v for (k, o), v in tally.items() if o == op and kind in (k, "total"))
            cells.append(f'<td class="{"zero" if not n else ""}" data-kind="{kind}" data-op="{op}">{n}</td>')
        rows.append(f'<tr><th scope="row">{kind}</th>{"".join(cells)}</tr>')
    return (
        f'<table class="counts" id="counts"><thead><tr><th></th>{head}</tr></thead>'
        f"<tbody>{''.join(rows)}</tbody></table>"
    )


def _link(index: int, action: Action) -> str:
    return f'<a href="#{anchor(index)}">{escape(action.kind)} <code>{escape(action.key)}</code></a>'


def _objects(plan: Plan) -> str:
    if not plan.actions:
        return ""
    rows = "".join(
        f'<tr class="op-{a.op}" data-key="{escape(f"{a.kind} {a.key} {a.op}".lower())}">'
        f'<td class="sym">{escape(SYMBOLS[a.op])}</td><td>{a.kind}</td>'
        f'<td><a href="#{anchor(i)}"><code>{escape(a.key)}</code></a></td><td>{a.op}</td>'
        f"<td>{escape(brief(a))}</td></tr>"
        for i, a in enumerate(plan.actions)
    )
    return (
        f'<h2 id="objects-title">Objects ({len(plan.actions)})</h2><div id="objects-wrap">'
        '<div id="objects" tabindex="0" aria-labelledby="objects-title"><table><thead><tr><th></th>'
        '<th scope="col">kind</th><th scope="col">key</th><th scope="col">operation</th><th scope="col">what</th>'
        f"</tr></thead><tbody>{rows}</tbody></table></div></div>"
    )


def _toolbar(count: int, *, eager: bool) -> str:
    if not count:
        return ""
    hint = "" if eager else '<p class="muted">One line per object: open one (click, or Enter) to see its changes.</p>'
    return (
        f'{hint}<div class="toolbar" role="search"><label for="filter">Filter</label>'
        '<input id="filter" type="search" placeholder="kind, path, operation (press /)" autocomplete="off">'
        f'<span id="shown" class="muted">{count} of {count} shown</span>'
        '<button type="button" id="expand">Expand all</button>'
        '<button type="button" id="collapse">Collapse all</button></div>'
    )


def _short(value: object, limit: int = 160) -> str:
    text = value if isinstance(value, str) else repr(value)
    return text if len(text) <= limit else text[: limit - 1] + "…"
