"""Word-level diffs of HTML fragments (and plain text), for the HTML plan report.

Pure. A fragment is cut into tokens — tags, comments, entities, words, runs of whitespace, single punctuation
marks — and the two token lists are aligned with :class:`difflib.SequenceMatcher`. Tags are tokens like words, so a
changed ``href`` or a paragraph split shows as a change, while the text around it stays equal. The result is a list
of :class:`Segment` (equal, inserted or deleted runs); :func:`diff_html` renders it as escaped HTML for the report.

How the diff reads: words are shown as text (entities decoded), an unchanged tag is hidden except that a block-level
tag (``p``, ``li``, ``h2``, ``br`` …) becomes a line break, and an inserted or deleted tag is shown as its source in
a small marked chip, so a reviewer sees "link target changed" without reading markup. Long unchanged stretches are
cut to their first and last few words.

Limits: the tokenizer is a regular expression, not an HTML parser (a ``>`` inside a quoted attribute ends the tag
token early; the diff is still correct, only less pretty). Very large pairs (beyond :data:`MAX_CELLS` token pairs)
are diffed line by line first and word by word only inside changed lines, to bound the quadratic cost.
"""

from __future__ import annotations

import difflib
import html
import re
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from typing import Literal

Op = Literal["=", "+", "-"]

MAX_CELLS = 4_000_000
"""Above this many token pairs, diff lines first (SequenceMatcher is quadratic in the worst case)."""
CONTEXT = 12
"""Unchanged tokens kept on each side of a change when a long unchanged stretch is cut."""

_TOKEN = re.compile(
    r"<!--.*?-->|<[A-Za-z/!][^<>]*>?|&(?:#\d+|#[xX][0-9a-fA-F]+|\w+);|\s+|\w+(?:['’-]\w+)*|.",
    re.DOTALL,
)
_TAG_NAME = re.compile(r"</?\s*([A-Za-z][A-Za-z0-9-]*)")
_BLOCK_TAGS = frozenset(
    {"p", "div", "br", "hr", "h1", "h2", "h3", "h4", "h5", "h6", "li", "ul", "ol", "dl", "dt", "dd", "tr", "table"}
    | {"blockquote", "pre", "section", "article", "header", "footer", "figure", "figcaption"}
)


@dataclass(frozen=True)
class Segment:
    op: Op
    tokens: tuple[str, ...]


def tokens(text: str) -> list[str]:
    """The tokens of an HTML fragment or a plain text; joined, they give back the text exactly."""
    return _TOKEN.findall(text)


Key = Callable[[str], str]


def diff_tokens(before: str, after: str, *, key: Key | None = None) -> list[Segment]:
    """The aligned difference of two texts as runs of equal, deleted and inserted tokens, in reading order.
    ``key``: what of a token is compared (two tokens with the same key are equal; an equal run holds the tokens
    of ``before``)."""
    old, new = tokens(before), tokens(after)
    if len(old) * len(new) > MAX_CELLS:
        return _merge(list(_by_lines(before, after, key)))
    return _merge(list(_align(old, new, key)))


def _align(old: Sequence[str], new: Sequence[str], key: Key | None = None) -> Iterator[Segment]:
    compared = (old, new) if key is None else ([key(t) for t in old], [key(t) for t in new])
    matcher = difflib.SequenceMatcher(None, *compared, autojunk=False)
    for tag, i1, i2, j1, j2 in matcher.get_opcodes():
        if tag == "equal":
            yield Segment("=", tuple(old[i1:i2]))
            continue
        if i2 > i1:
            yield Segment("-", tuple(old[i1:i2]))
        if j2 > j1:
            yield Segment("+", tuple(new[j1:j2]))


def _by_lines(before: str, after: str, key: Key | None) -> Iterator[Segment]:
    old, new = before.splitlines(keepends=True), after.splitlines(keepends=True)
    compared = (old, new) if key is None else ([key(line) for line in old], [key(line) for line in new])
    matcher = difflib.SequenceMatcher(None, *compared, autojunk=False)
    for tag, i1, i2, j1, j2 in matcher.get_opcodes():
        old_part, new_part = "".join(old[i1:i2]), "".join(new[j1:j2])
        if tag == "equal":
            yield Segment("=", tuple(tokens(old_part)))
            continue
        old_tokens, new_tokens = tokens(old_part), tokens(new_part)
        if len(old_tokens) * len(new_tokens) > MAX_CELLS:
            yield Segment("-", tuple(old_tokens))
            yield Segment("+", tuple(new_tokens))
        else:
            yield from _align(old_tokens, new_tokens, key)


def _merge(segments: list[Segment]) -> list[Segment]:
    merged: list[Segment] = []
    for segment in segments:
        if not segment.tokens:
            continue
        if merged and merged[-1].op == segment.op:
            merged[-1] = Segment(segment.op, merged[-1].tokens + segment.tokens)
        else:
            merged.append(segment)
    return merged


def counts(segments: Sequence[Segment]) -> tuple[int, int]:
    """Words inserted and deleted (tags and whitespace not counted), for a one-line summary."""
    inserted = sum(_words(s.tokens) for s in segments if s.op == "+")
    deleted = sum(_words(s.tokens) for s in segments if s.op == "-")
    return inserted, deleted


def _words(run: Sequence[str]) -> int:
    return sum(1 for token in run if token.strip() and not _is_tag(token))


def diff_html(before: str, after: str, *, context: int = CONTEXT) -> str:
    """The word diff of two fragments as escaped report HTML (``<ins>``/``<del>``; see the module docstring)."""
    segments = diff_tokens(before, after)
    out: list[str] = []
    last = len(segments) - 1
    for index, segment in enumerate(segments):
        if segment.op == "=":
            run = _cut(segment.tokens, context, head=index > 0, tail=index < last)
            out.append("".join(_show_equal(token) for token in run))
            continue
        shown = "".join(_show_changed(token) for token in segment.tokens)
        element = "ins" if segment.op == "+" else "del"
        out.append(f"<{element}>{shown}</{element}>")
    return "".join(out)


def _cut(run: tuple[str, ...], context: int, *, head: bool, tail: bool) -> tuple[str, ...]:
    """A long unchanged run without its middle: ``context`` tokens kept next to each neighbouring change."""
    keep_start = context if head else 0
    keep_end = context if tail else 0
    if len(run) <= keep_start + keep_end + context:
        return run
    end = run[len(run) - keep_end :] if keep_end else ()
    return (*run[:keep_start], "\x00", *end)


def _show_equal(token: str) -> str:
    if token == "\x00":
        return '<span class="cut">…</span>'
    if _is_tag(token):
        return "<br>" if _is_block_tag(token) else ""
    return _show_text(token)


def _show_changed(token: str) -> str:
    if _is_tag(token):
        return f'<span class="tag">{html.escape(token)}</span>'
    return _show_text(token)


def _show_text(token: str) -> str:
    if token.startswith("&"):
        return html.escape(html.unescape(token))
    return html.escape(token)


def _is_tag(token: str) -> bool:
    return token.startswith("<") and len(token) > 1 and (token[1].isalpha() or token[1] in "/!")


def _is_block_tag(token: str) -> bool:
    if token.startswith("</"):
        match = _TAG_NAME.match(token)
        return match is not None and match.group(1).lower() in _BLOCK_TAGS
    match = _TAG_NAME.match(token)
    # An opening block tag breaks only before <br>/<hr>; a closing one ends its line.
    return match is not None and match.group(1).lower() in {"br", "hr"}


def visible_text(fragment: str) -> str:
    """The text of a fragment without its tags, entities decoded, whitespace collapsed (for sizes and titles)."""
    text = "".join(" " if _is_tag(t) else t for t in tokens(fragment))
    return " ".join(html.unescape(text).split())
